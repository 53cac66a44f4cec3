"""Shared display helpers: labels, run keys, escaping, number formatting, the run lookup."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from urllib.parse import quote

import pandas as pd

from leaderboard.suite import TASKS
from leaderboard.tables import Aggregate, task_column

KEY = ("model", "revision", "precision")


META_COLUMNS = ("params_b", "model_type", "license", "comparable", "data", "limit")


METRIC_LABELS = {"cps": "CPS", "maxp": "MaxP", "avgp": "AvgP", "best_prompt": "best prompt"}


SETTING_LABELS = {"0": "0-shot", "5": "5-shot", "both": "both (5-shot − 0-shot)"}


RANK, MODEL, AVG, NOTE = "Rank", "Model", "Avg CPS", "Note"


PARAMS, TYPE, PRECISION, REVISION = "Params (B)", "Type", "Precision", "Revision"


@dataclass(frozen=True)
class SizeBucket:
    label: str
    low: float | None  # inclusive, billions of parameters; None for unknown size
    high: float | None  # exclusive


SIZE_BUCKETS: tuple[SizeBucket, ...] = (
    SizeBucket("< 3B", 0.0, 3.0),
    SizeBucket("3–10B", 3.0, 10.0),
    SizeBucket("10–35B", 10.0, 35.0),
    SizeBucket("35–80B", 35.0, 80.0),
    SizeBucket("≥ 80B", 80.0, math.inf),
    SizeBucket("unknown", None, None),
)


@dataclass(frozen=True)
class RankingFilters:
    """What the user narrowed the ranking to; empty tuples mean "all"."""

    model_types: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    search: str = ""
    columns: tuple[str, ...] = ("cps",)
    show_noncomparable: bool = False


@dataclass(frozen=True)
class RankingView:
    """The ranking as shown: ``table`` (plain values, exactly what CSV writes), a banner."""

    table: pd.DataFrame
    banner: str
    total: int


def task_label(task_id: str) -> str:
    task = TASKS.get(task_id)
    return task.abbrev if task is not None else task_id.upper()


def run_key(model: str, revision: str, precision: str) -> str:
    """The value identifying one (model, revision, precision) in dropdowns and links."""
    return f"{model}|{revision}|{precision}"


def parse_run_key(key: str) -> tuple[str, str, str] | None:
    parts = key.split("|")
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None


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


def _metric_value(value: object, metric: str) -> object:
    if metric == "best_prompt":
        return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
    return _num(value)


def _num(value: object) -> float | None:
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    return None if math.isnan(number) else round(number, 2)


def _int_rank(value: object) -> object:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)  # type: ignore[call-overload]


def _identity_columns(row: pd.Series) -> dict[str, object]:
    params = row.get("params_b")
    return {
        PARAMS: _num(params) if params is not None else None,
        TYPE: row.get("model_type") or "unknown",
        PRECISION: row.get("precision"),
        REVISION: str(row.get("revision") or "")[:12],
    }


def _note(data: object, limit: object, comparable: object) -> str:
    notes: list[str] = []
    if isinstance(data, str) and data and data != "hub":
        notes.append(f"{data} data")
    if limit is not None and not pd.isna(limit):
        notes.append(f"limit {limit:g}" if isinstance(limit, int | float) else f"limit {limit}")
    if not notes and comparable is False:
        notes.append("not comparable")
    return "; ".join(notes)


def _row_note(row: pd.Series) -> str:
    return _note(row.get("data"), row.get("limit"), bool(row.get("comparable", True)))


def _frame(records: list[dict[str, object]], headers: list[str]) -> pd.DataFrame:
    return pd.DataFrame.from_records(records, columns=headers) if records else pd.DataFrame(columns=headers)


def _diff(a: object, b: object) -> float | None:
    x, y = _num(a), _num(b)
    return None if x is None or y is None else round(y - x, 2)


def _of_run(frame: pd.DataFrame, run: tuple[str, str, str], num_fewshot: int | None = None) -> pd.DataFrame:
    """The rows of ``frame`` (runs, scores or ranking rows) of one (model, revision, precision),
    and of one setting when ``num_fewshot`` is given: the one run lookup of this module."""
    model, revision, precision = run
    mask = (frame["model"] == model) & (frame["revision"] == revision) & (frame["precision"] == precision)
    if num_fewshot is not None:
        mask &= frame["num_fewshot"] == num_fewshot
    return frame[mask]


def _run_row(rows: pd.DataFrame, run: tuple[str, str, str]) -> pd.Series | None:
    match = _of_run(rows, run)
    return None if match.empty else match.iloc[0]


def _spread(row: pd.Series | None, task_id: str) -> float | None:
    """MaxP − AvgP as :mod:`leaderboard.tables` computed it, from the unrounded scores."""
    if row is None:
        return None
    return _num(row.get(task_column(task_id, Aggregate.SPREAD)))


def _plain(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
