"""Display helpers every track's views share: escaping, number formatting, paging, the run lookup."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

import pandas as pd

from eval_queue.vocabulary import RunRef, short_revision

MODEL, NOTE = "Model", "Note"
PARAMS, TYPE, PRECISION, REVISION = "Params (B)", "Type", "Precision", "Revision"
#: The hidden last column of every table that lists runs: the row's :attr:`RunRef.key`, so a
#: clicked row is resolved by its key and never by reading the rendered cells.
KEY_COLUMN = "key"
#: Rows a long table sends to the page at a time (the rest is one click away): measured in a
#: browser, each row of a 19-column page costs the first render about 30 ms on the shared 2 cores.
PAGE_SIZE = 25


@dataclass(frozen=True)
class TablePage:
    """One page of a long table: ``rows`` (at most ``size``), its 1-based ``number`` of ``count``."""

    rows: pd.DataFrame
    number: int
    count: int
    first: int  # 1-based index of the first row shown (0 when there is none)
    last: int
    total: int

    @property
    def caption(self) -> str:
        if not self.total:
            return ""
        return f"rows {self.first:,}–{self.last:,} of {self.total:,}"


def paged(table: pd.DataFrame, number: int, size: int = PAGE_SIZE) -> TablePage:
    """Page ``number`` (1-based, clamped into range) of ``table``."""
    total = len(table)
    count = max(1, math.ceil(total / size))
    number = min(max(1, int(number)), count)
    start = (number - 1) * size
    rows = table.iloc[start : start + size]
    return TablePage(rows, number, count, start + 1 if total else 0, start + len(rows), total)


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()#+-.!|~"})


def md_text(value: object) -> str:
    """User-controlled text made inert inside Markdown: HTML escaped, Markdown neutralised."""
    return html.escape(str(value).translate(_MD_SPECIAL), quote=True).replace("\n", " ")


def html_text(value: object) -> str:
    return html.escape(str(value), quote=True)


def model_link(model_id: str) -> str:
    """An HTML link to the model's Hub page; the id is shown as text, never markup."""
    url = "https://huggingface.co/" + quote(model_id, safe="/")
    return f'<a href="{html_text(url)}" target="_blank" rel="noopener noreferrer">{html_text(model_id)}</a>'


def format_params(params_b: object) -> str:
    """A parameter count in billions as every page shows it: two decimals (``0.13``), ``—`` if unknown.

    The ranking's numeric column is displayed with the same function (see ``ui.common``).
    """
    number = _float(params_b)
    return "—" if number is None else f"{number:.2f}"


def _float(value: object) -> float | None:
    if value is None or value is pd.NA:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _num(value: object) -> float | None:
    """A 0–100 value already rounded by :func:`leaderboard.tracks.evalita.metrics.percent`, as a float or ``None``.

    The second rounding only strips float noise (``round(x, 2)`` of a two-decimal value is the value).
    """
    number = _float(value)
    return None if number is None else round(number, 2)


def _note(data: object, limit: object, comparable: object) -> str:
    notes: list[str] = []
    if isinstance(data, str) and data and data != "hub":
        notes.append(f"{data} data")
    if limit is not None and not pd.isna(limit):
        notes.append(f"limit {limit:g}" if isinstance(limit, int | float) else f"limit {limit}")
    if not notes and comparable is False:
        notes.append("not comparable")
    return "; ".join(notes)


def _notes(rows: pd.DataFrame) -> list[str]:
    """The Note column of ``rows`` (sample data, a limit): why a run is not comparable."""
    return [
        _note(data, limit, comparable)
        for data, limit, comparable in zip(rows["data"], rows["limit"], rows["comparable"], strict=True)
    ]


def _frame(records: list[dict[str, object]], headers: list[str]) -> pd.DataFrame:
    return pd.DataFrame.from_records(records, columns=headers) if records else pd.DataFrame(columns=headers)


def _diff(a: object, b: object) -> float | None:
    x, y = _num(a), _num(b)
    return None if x is None or y is None else round(y - x, 2)


def _keys(rows: pd.DataFrame) -> list[str]:
    """The :attr:`RunRef.key` of each row of a run table (columns :attr:`RunRef.COLUMNS`)."""
    return [
        RunRef(str(m), str(r), str(p)).key
        for m, r, p in zip(*(rows[column] for column in RunRef.COLUMNS), strict=True)
    ]


def _revisions(values: Iterable[object]) -> list[str]:
    return [short_revision(str(value)) for value in values]


def _of_run(frame: pd.DataFrame, run: RunRef, num_fewshot: int | None = None) -> pd.DataFrame:
    """The rows of ``frame`` (runs, scores or ranking rows) of one run reference, and of one
    setting when ``num_fewshot`` is given: the one run lookup of this package."""
    mask = (frame["model"] == run.model) & (frame["revision"] == run.revision)
    mask &= frame["precision"] == run.precision
    if num_fewshot is not None:
        mask &= frame["num_fewshot"] == num_fewshot
    return frame[mask]


def _run_row(rows: pd.DataFrame, run: RunRef) -> pd.Series | None:
    match = _of_run(rows, run)
    return None if match.empty else match.iloc[0]


def _plain(value: object) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
