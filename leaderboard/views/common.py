"""Display helpers every track's views share: escaping, number formatting, paging, the run lookup."""

from __future__ import annotations

import html
import math
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

import numpy as np
import pandas as pd

from eval_queue.vocabulary import RunRef, short_revision

RANK, MODEL, NOTE = "Rank", "Model", "Note"
#: A run's tier (1 + the runs significantly better than it) and a figure's 95 % interval, as headed.
TIER, CI = "Tier", "95% CI"
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


#: What an interval cell says when the run kept no per-item data: no interval, never a made-up one.
NO_INTERVAL = "—"


def interval_text(low: object, high: object, decimals: int = 2) -> str:
    """A 95 % interval as every table shows it, ``52.10–55.30`` (values already on the shown scale);
    :data:`NO_INTERVAL` when there is none."""
    a, b = _float(low), _float(high)
    if a is None or b is None:
        return NO_INTERVAL
    return f"{a:.{decimals}f}–{b:.{decimals}f}"


def _float(value: object) -> float | None:
    if value is None or value is pd.NA:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _num(value: object) -> float | None:
    """A 0–100 value already rounded by :func:`leaderboard.core.numbers.percent`, as a float or ``None``.

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


#: Frames with their run index (``id`` → (weak reference, run → row positions)): the large
#: frames of a snapshot (its runs, scores and ranking rows) are looked up in many times.
_RUN_INDEX: dict[int, tuple[weakref.ref, dict[tuple, np.ndarray]]] = {}
#: Below this many rows a frame is searched directly (an index would cost more than it saves).
_INDEXED_ROWS = 5000


def _run_positions(frame: pd.DataFrame) -> dict[tuple, np.ndarray]:
    entry = _RUN_INDEX.get(id(frame))
    if entry is not None and entry[0]() is frame:
        return entry[1]
    index = frame.groupby(list(RunRef.COLUMNS), sort=False).indices
    key = id(frame)
    _RUN_INDEX[key] = (weakref.ref(frame, lambda _: _RUN_INDEX.pop(key, None)), index)
    return index


def _of_run(frame: pd.DataFrame, run: RunRef, num_fewshot: int | None = None) -> pd.DataFrame:
    """The rows of ``frame`` (runs, scores or ranking rows) of one run reference, and of one
    setting when ``num_fewshot`` is given: the one run lookup of this package."""
    if len(frame) >= _INDEXED_ROWS:
        positions = _run_positions(frame).get((run.model, run.revision, run.precision))
        found = frame.iloc[positions if positions is not None else []]
        return found if num_fewshot is None else found[found["num_fewshot"] == num_fewshot]
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


def linked(table: pd.DataFrame) -> pd.DataFrame:
    """The same table with the Model column as links to the Hub (for HTML rendering)."""
    if MODEL not in table.columns or table.empty:
        return table
    return table.assign(**{MODEL: table[MODEL].map(model_link)})


def datatypes(table: pd.DataFrame) -> list[str]:
    """gradio Dataframe datatypes: the model column is (escaped) HTML, numbers are numbers."""
    kinds = []
    for column in table.columns:
        if column == MODEL:
            kinds.append("html")
        elif column != KEY_COLUMN and (
            pd.api.types.is_numeric_dtype(table[column]) or column == RANK or column.startswith(TIER)
        ):
            kinds.append("number")
        else:
            kinds.append("str")
    return kinds


def to_csv(table: pd.DataFrame) -> str:
    """The table as CSV, two decimals, without the hidden key column."""
    return table.drop(columns=KEY_COLUMN, errors="ignore").to_csv(index=False, float_format="%.2f")
