"""Pure shaping of the leaderboard's tables for display: filter, rank, label, format.

Every number shown comes from :mod:`leaderboard.tables` (which uses
:mod:`leaderboard.scoring`); this module only selects rows and columns, joins run
metadata, orders, ranks by the already computed average CPS and turns values into the
strings or links the UI shows.  No gradio here: the UI renders what these return.
"""

from __future__ import annotations

import html
import math
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import quote

import pandas as pd

from eval_queue.queue import QueueListing, fair_order
from eval_queue.requests import EvalRequest, Status, parse_time
from leaderboard import tables
from leaderboard.results import LoadedResults
from leaderboard.state import TASK_COLUMNS
from leaderboard.suite import SUITE, TASKS
from leaderboard.tables import MAIN_SCORE_COLUMN, RANK_COLUMN, Aggregate, task_column

# Identity of a ranked row (one model evaluated at one revision and precision).
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


# -- escaping -----------------------------------------------------------------------

# HTML's own specials (< > & " ') are left to html.escape, applied after.
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


# -- the ranking ----------------------------------------------------------------------


@dataclass
class Board:
    """One snapshot of the results with its ranking tables computed once, on first use.

    The app keeps one per results version; every view of that version reuses its tables,
    so a filter change costs a filter, not a re-scoring.
    """

    loaded: LoadedResults
    _rows: dict[int, pd.DataFrame] = field(default_factory=dict, repr=False)
    _prompts: dict[tuple[str, int, bool], pd.DataFrame] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def runs(self) -> pd.DataFrame:
        return self.loaded.runs

    @property
    def scores(self) -> pd.DataFrame:
        return self.loaded.scores

    @property
    def problems(self) -> list:
        return self.loaded.problems

    def rows(self, num_fewshot: int) -> pd.DataFrame:
        """Every run of one setting (comparable or not), with ``_rank`` among comparable runs."""
        with self._lock:
            if num_fewshot not in self._rows:
                self._rows[num_fewshot] = _setting_rows(self.loaded, num_fewshot)
            return self._rows[num_fewshot]

    def prompt_rows(self, task_id: str, num_fewshot: int, include_noncomparable: bool) -> pd.DataFrame:
        """``tables.prompt_table`` of this snapshot, computed once per (task, setting, scope)."""
        key = (task_id, num_fewshot, include_noncomparable)
        with self._lock:
            if key not in self._prompts:
                self._prompts[key] = tables.prompt_table(
                    self.loaded, task_id, num_fewshot, include_noncomparable
                )
            return self._prompts[key]

    def warm(self) -> None:
        """Compute the ranking tables of both settings now (off the request path), then the
        prompt side of every task as the task tab first shows it, then the tidy scores frame
        the task and model pages filter (built on first use)."""
        for num_fewshot in (0, 5):
            self.rows(num_fewshot)
        for num_fewshot in (0, 5):
            for task in SUITE:
                prompt_side_view(self, task.id, num_fewshot)
        _ = self.scores


def _setting_rows(loaded: LoadedResults, num_fewshot: int) -> pd.DataFrame:
    rows = tables.ranking_table(loaded, num_fewshot, include_noncomparable=True)
    rows["comparable"] = rows["comparable"].fillna(False).astype(bool)  # a bool column even when empty
    if rows.empty:
        return rows.rename(columns={RANK_COLUMN: "_rank"})
    if not rows["comparable"].any():  # nothing comparable: shown (with a banner), never ranked
        rows = rows.drop(columns=RANK_COLUMN).assign(_rank=pd.NA)
    elif not rows["comparable"].all():
        # The rank is the one the comparable-only table gives (sample/limited runs never take a place).
        ranked = tables.ranking_table(loaded, num_fewshot)[[*KEY, RANK_COLUMN]].rename(
            columns={RANK_COLUMN: "_rank"}
        )
        rows = rows.drop(columns=RANK_COLUMN).merge(ranked, on=[*KEY], how="left")
    # else every run is comparable: the table's own rank is the comparable-only rank.
    return rows.rename(columns={RANK_COLUMN: "_rank"}).reset_index(drop=True)


def setting_rows(board: Board, num_fewshot: int) -> pd.DataFrame:
    return board.rows(num_fewshot)


def _size_mask(params: pd.Series, labels: Sequence[str]) -> pd.Series:
    mask = pd.Series(False, index=params.index)
    numeric = pd.to_numeric(params, errors="coerce")
    for bucket in SIZE_BUCKETS:
        if bucket.label not in labels:
            continue
        if bucket.low is None:
            mask |= numeric.isna()
        else:
            mask |= (numeric >= bucket.low) & (numeric < bucket.high)
    return mask


def apply_filters(rows: pd.DataFrame, filters: RankingFilters) -> pd.DataFrame:
    """Rows matching every active filter (type, size, precision, name search)."""
    mask = pd.Series(True, index=rows.index)
    if filters.model_types:
        mask &= rows["model_type"].fillna("unknown").isin(filters.model_types)
    if filters.sizes:
        mask &= _size_mask(rows["params_b"], filters.sizes)
    if filters.precisions:
        mask &= rows["precision"].isin(filters.precisions)
    needle = filters.search.strip().lower()
    if needle:
        mask &= rows["model"].str.lower().str.contains(needle, regex=False)
    return rows[mask]


def _order(rows: pd.DataFrame, rank: str = "_rank", score: str = MAIN_SCORE_COLUMN) -> pd.DataFrame:
    """Ranked rows first by rank, then the unranked ones by score and name."""
    rows = rows.assign(_ranked=rows[rank].notna())
    return rows.sort_values(
        ["_ranked", rank, score, "model"],
        ascending=[False, True, False, True],
        na_position="last",
        kind="stable",
    )


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


def _select_rows(board: Board, num_fewshot: int, filters: RankingFilters) -> tuple[pd.DataFrame, str, int]:
    rows = setting_rows(board, num_fewshot)
    total = len(rows)
    banner = ""
    show_all = filters.show_noncomparable
    if total and not rows["comparable"].any():
        show_all = True
        banner = (
            "⚠️ **No comparable run yet.** Every result in this store comes from *sample* data or a run "
            "with a *limit*: the rows below are shown for demonstration, are marked in the Note column, "
            "and are not comparable with full runs on the official data."
        )
    elif show_all and not rows["comparable"].all():
        banner = "Rows marked in the Note column are sample or limited runs: not comparable, and not ranked."
    if not show_all:
        rows = rows[rows["comparable"]]
    return apply_filters(rows, filters), banner, total


def ranking_view(board: Board, setting: str, filters: RankingFilters) -> RankingView:
    """The ranking for ``setting`` (``"0"``, ``"5"`` or ``"both"``) under ``filters``."""
    if setting == "both":
        return _both_view(board, filters)
    rows, banner, total = _select_rows(board, int(setting), filters)
    rows = _order(rows)
    table = pd.DataFrame(
        {
            RANK: _ranks(rows["_rank"]),
            MODEL: rows["model"].to_numpy(),
            AVG: rows[MAIN_SCORE_COLUMN].astype(float).to_numpy(),
        }
    )
    _add_identity(table, rows)
    for task in SUITE:
        for metric in _chosen(filters):
            table[f"{task_label(task.id)} {METRIC_LABELS[metric]}"] = _metric_column(
                rows, task.id, metric, ""
            )
    return RankingView(table=table, banner=banner, total=total)


def _chosen(filters: RankingFilters) -> list[str]:
    return [c for c in TASK_COLUMNS if c in filters.columns]


def _ranks(ranks: pd.Series) -> pd.Series:
    """Integer ranks, ``None`` for the unranked (object dtype, so 1 stays 1 and not 1.0)."""
    return pd.Series([None if pd.isna(v) else int(v) for v in ranks], dtype=object)


def _metric_column(rows: pd.DataFrame, task_id: str, metric: str, suffix: str) -> object:
    column = task_column(task_id, Aggregate(metric)) + suffix
    if column not in rows.columns:
        return None
    values = rows[column]
    if metric == "best_prompt":
        return values.fillna("").astype(str).to_numpy()
    return values.astype(float).to_numpy()


def _add_identity(table: pd.DataFrame, rows: pd.DataFrame) -> None:
    table[PARAMS] = pd.to_numeric(rows["params_b"], errors="coerce").to_numpy()
    table[TYPE] = rows["model_type"].fillna("unknown").astype(str).to_numpy()
    table[PRECISION] = rows["precision"].astype(str).to_numpy()
    table[REVISION] = rows["revision"].astype(str).str.slice(0, 12).to_numpy()
    table[NOTE] = [
        _note(data, limit, comparable)
        for data, limit, comparable in zip(rows["data"], rows["limit"], rows["comparable"], strict=True)
    ]


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


def _diff_column(a: pd.Series, b: pd.Series) -> object:
    return (b.astype(float) - a.astype(float)).round(2).to_numpy()


def _both_view(board: Board, filters: RankingFilters) -> RankingView:
    zero, banner0, total0 = _select_rows(board, 0, filters)
    five, banner5, total5 = _select_rows(board, 5, filters)
    both = zero.merge(five, on=[*KEY], how="outer", suffixes=("_0", "_5"))
    for column in META_COLUMNS:
        both[column] = both[f"{column}_0"].combine_first(both[f"{column}_5"])
    both["comparable"] = both["comparable_0"].fillna(True).astype(bool) & both["comparable_5"].fillna(
        True
    ).astype(bool)
    both = _order(both, "_rank_0", f"{MAIN_SCORE_COLUMN}_0")
    table = pd.DataFrame(
        {
            RANK: _ranks(both["_rank_0"]),
            MODEL: both["model"].to_numpy(),
            f"{AVG} 0-shot": both[f"{MAIN_SCORE_COLUMN}_0"].astype(float).to_numpy(),
            f"{AVG} 5-shot": both[f"{MAIN_SCORE_COLUMN}_5"].astype(float).to_numpy(),
            f"{AVG} Δ": _diff_column(both[f"{MAIN_SCORE_COLUMN}_0"], both[f"{MAIN_SCORE_COLUMN}_5"]),
        }
    )
    _add_identity(table, both)
    for task in SUITE:
        for metric in _chosen(filters):
            label = f"{task_label(task.id)} {METRIC_LABELS[metric]}"
            table[f"{label} 0"] = _metric_column(both, task.id, metric, "_0")
            table[f"{label} 5"] = _metric_column(both, task.id, metric, "_5")
            if metric != "best_prompt":
                column = task_column(task.id, Aggregate(metric))
                table[f"{label} Δ"] = _diff_column(both[f"{column}_0"], both[f"{column}_5"])
    return RankingView(table=table, banner=banner0 or banner5, total=max(total0, total5))


def _frame(records: list[dict[str, object]], headers: list[str]) -> pd.DataFrame:
    return pd.DataFrame.from_records(records, columns=headers) if records else pd.DataFrame(columns=headers)


def _diff(a: object, b: object) -> float | None:
    x, y = _num(a), _num(b)
    return None if x is None or y is None else round(y - x, 2)


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
        elif pd.api.types.is_numeric_dtype(table[column]) or column == RANK:
            kinds.append("number")
        else:
            kinds.append("str")
    return kinds


def to_csv(table: pd.DataFrame) -> str:
    return table.to_csv(index=False, float_format="%.2f")


def all_model_types(board: Board) -> list[str]:
    return _distinct(board.runs, "model_type")


def all_precisions(board: Board) -> list[str]:
    return _distinct(board.runs, "precision")


def _distinct(frame: pd.DataFrame, column: str) -> list[str]:
    if frame.empty or column not in frame.columns:
        return []
    return sorted({str(v) for v in frame[column].dropna()})


def run_choices(board: Board) -> list[tuple[str, str]]:
    """``(label, key)`` for every evaluated (model, revision, precision), labelled unambiguously."""
    runs = board.runs
    if runs.empty:
        return []
    keys = runs[[*KEY]].drop_duplicates().sort_values([*KEY])
    counts = keys["model"].value_counts()
    choices = []
    for model, revision, precision in keys.itertuples(index=False):
        label = model if counts[model] == 1 else f"{model} @ {str(revision)[:12]} · {precision}"
        choices.append((label, run_key(model, revision, precision)))
    return choices


def top_runs(board: Board, n: int, num_fewshot: int = 0) -> list[str]:
    """Keys of the ``n`` best ranked runs (the plots' default choice)."""
    view = ranking_view(board, str(num_fewshot), RankingFilters())
    rows = _order(board.rows(num_fewshot))
    rows = rows[rows["model"].isin(set(view.table[MODEL]))].head(n)
    return [
        run_key(m, r, p) for m, r, p in zip(rows["model"], rows["revision"], rows["precision"], strict=True)
    ]


_TAGS = re.compile(r"<[^>]+>")


def run_of_row(board: Board, row: Sequence[object]) -> str | None:
    """The run key of a clicked ranking row (its Model cell is the escaped link this module made)."""
    if len(row) < 2:
        return None
    model_id = html.unescape(_TAGS.sub("", str(row[1])))
    cells = {str(cell) for cell in row}
    candidates = [
        (m, r, p)
        for m, r, p in (parse_run_key(k) or ("", "", "") for _, k in run_choices(board))
        if m == model_id
    ]
    exact = [c for c in candidates if c[2] in cells and str(c[1])[:12] in cells]
    chosen = (exact or candidates)[:1]
    return run_key(*chosen[0]) if chosen else None


def pick_runs(board: Board, keys: Iterable[str]) -> list[tuple[str, str, str]]:
    known = {key for _, key in run_choices(board)}
    return [parsed for key in keys if key in known and (parsed := parse_run_key(key)) is not None]


# -- task drill-down ------------------------------------------------------------------


def _prompt_scores(board: Board, task_id: str, num_fewshot: int) -> pd.DataFrame:
    """Tidy prompt scores (0–100) of one task and setting: KEY + ``prompt`` + ``score``."""
    scores = board.scores
    if scores.empty:
        return pd.DataFrame(columns=[*KEY, "prompt", "score"])
    scores = scores[(scores["task"] == task_id) & (scores["num_fewshot"] == num_fewshot)]
    return scores[[*KEY, "prompt", "score"]].assign(score=scores["score"] * 100.0)


def task_models_view(
    board: Board, task_id: str, num_fewshot: int, show_noncomparable: bool = False
) -> pd.DataFrame:
    """Models × prompts for one task: each prompt's score, then MaxP, AvgP, CPS, best prompt."""
    task = TASKS[task_id]
    prompt_ids = [p.id for p in task.prompts]
    rows, _, _ = _select_rows(board, num_fewshot, RankingFilters(show_noncomparable=show_noncomparable))
    headers = [MODEL, *prompt_ids, "MaxP", "AvgP", "CPS", "Best prompt", NOTE]
    if rows.empty:
        return pd.DataFrame(columns=headers)
    scores = _prompt_scores(board, task_id, num_fewshot)
    wide = scores.pivot_table(index=[*KEY], columns="prompt", values="score", aggfunc="first").reset_index()
    rows = rows.merge(wide, on=[*KEY], how="left")
    cps = task_column(task_id, Aggregate.CPS)
    rows = rows.sort_values([cps, "model"], ascending=[False, True], na_position="last")
    table = pd.DataFrame({MODEL: rows["model"].to_numpy()})
    for prompt_id in prompt_ids:
        table[prompt_id] = rows[prompt_id].astype(float).round(2).to_numpy() if prompt_id in rows else None
    table["MaxP"] = rows[task_column(task_id, Aggregate.MAXP)].astype(float).to_numpy()
    table["AvgP"] = rows[task_column(task_id, Aggregate.AVGP)].astype(float).to_numpy()
    table["CPS"] = rows[cps].astype(float).to_numpy()
    table["Best prompt"] = rows[task_column(task_id, Aggregate.BEST_PROMPT)].fillna("").astype(str).to_numpy()
    table[NOTE] = [
        _note(d, lim, c) for d, lim, c in zip(rows["data"], rows["limit"], rows["comparable"], strict=True)
    ]
    return table


def prompt_side_view(
    board: Board, task_id: str, num_fewshot: int, show_noncomparable: bool = False
) -> pd.DataFrame:
    """Each prompt across the models shown (paper Table 14, right side): MinP, MaxP, AvgP, CPS.

    The models are those the task's models table shows: comparable runs, plus the others when
    asked for or when there is no comparable run at all.
    """
    rows = board.rows(num_fewshot)
    include = show_noncomparable or not bool(rows["comparable"].any())
    table = board.prompt_rows(task_id, num_fewshot, include)
    headers = ["Prompt", "Paper id", "Pattern", "MinP", "MaxP", "AvgP", "CPS"]
    if table.empty:
        return pd.DataFrame(columns=headers)
    task = TASKS[task_id]
    records = []
    for _, row in table.iterrows():
        spec = task.prompt(row["prompt"])
        records.append(
            {
                "Prompt": spec.id,
                "Paper id": spec.paper_id,
                "Pattern": str(spec.pattern),
                **{label: _num(row.get(label.lower())) for label in ("MinP", "MaxP", "AvgP", "CPS")},
            }
        )
    return _frame(records, headers)


def task_info_markdown(task_id: str) -> str:
    """Description, metric and the paper's baselines of a task (suite text, escaped)."""
    task = TASKS[task_id]
    lines = [
        f"### {md_text(task.abbrev)} — {md_text(task.name)}",
        md_text(task.description) if task.description else "",
        "",
        f"**Competence:** {md_text(task.competence)} · **Domain:** {md_text(task.domain)} · "
        f"**Evaluation:** {md_text(task.kind)} · **Metric:** {md_text(task.metric_label)} "
        f"({md_text(task.metric)}) · **Dataset:** {md_text(task.dataset.path)}",
    ]
    if task.baselines:
        lines += ["", "**Paper baselines (0–100):**"]
        for base in task.baselines:
            note = f" — {md_text(base.note)}" if base.note else ""
            lines.append(f"- {md_text(base.label)}: {base.score:.2f}{note}")
    return "\n".join(lines)


def prompts_html(task_id: str) -> str:
    """Every prompt's Italian text and answer options as an HTML table (all text escaped)."""
    task = TASKS[task_id]
    rows = []
    for prompt in task.prompts:
        options = (
            " · ".join(html_text(c) for c in prompt.choices)
            if prompt.choices
            else "<em>(generated text)</em>"
        )
        rows.append(
            f"<tr><td><b>{html_text(prompt.id)}</b><br><small>paper {html_text(prompt.paper_id)}</small></td>"
            f"<td>{html_text(prompt.pattern)}</td>"
            f'<td class="prompt-text">{html_text(prompt.template)}</td><td>{options}</td></tr>'
        )
    return (
        '<table class="prompts"><thead><tr><th>Prompt</th><th>Pattern</th><th>Text (Italian)</th>'
        f"<th>Answer options</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


# -- model page -----------------------------------------------------------------------


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


def model_vs_field(board: Board, run: tuple[str, str, str], num_fewshot: int) -> pd.DataFrame:
    """Per task: the model's CPS, the median and best CPS of the comparable field, its position."""
    rows = setting_rows(board, num_fewshot)
    field_rows = rows[rows["comparable"]]
    if field_rows.empty:
        field_rows = rows
    mine = _run_row(rows, run)
    headers = ["Task", "CPS", "Field median", "Field best", "Best model", "Position"]
    records = []
    for task in SUITE:
        column = task_column(task.id, Aggregate.CPS)
        field_scores = field_rows[column].dropna() if column in field_rows.columns else pd.Series(dtype=float)
        value = _num(mine.get(column)) if mine is not None else None
        best_model = field_rows.loc[field_scores.idxmax(), "model"] if not field_scores.empty else ""
        position = (
            f"{int((field_scores > value).sum()) + 1} / {len(field_scores)}"
            if value is not None and not field_scores.empty
            else ""
        )
        records.append(
            {
                "Task": task.abbrev,
                "CPS": value,
                "Field median": _num(field_scores.median()) if not field_scores.empty else None,
                "Field best": _num(field_scores.max()) if not field_scores.empty else None,
                "Best model": best_model,
                "Position": position,
            }
        )
    return _frame(records, headers)


def model_prompt_scores(board: Board, run: tuple[str, str, str], num_fewshot: int) -> pd.DataFrame:
    """Tidy ``task``, ``prompt``, ``score`` (0–100) of one run: the prompt-sensitivity data."""
    scores = board.scores
    if scores.empty:
        return pd.DataFrame(columns=["task", "prompt", "score"])
    picked = _of_run(scores, run, num_fewshot)[["task", "prompt", "score"]]
    return picked.assign(score=picked["score"] * 100.0, task=picked["task"].map(task_label))


def model_settings_view(board: Board, run: tuple[str, str, str]) -> pd.DataFrame:
    """Per task: CPS 0-shot, CPS 5-shot, and the difference; then the averages."""
    zero, five = _run_row(setting_rows(board, 0), run), _run_row(setting_rows(board, 5), run)
    records = []
    for task in SUITE:
        cps = task_column(task.id, Aggregate.CPS)
        a = _num(zero.get(cps)) if zero is not None else None
        b = _num(five.get(cps)) if five is not None else None
        spread0 = _spread(zero, task.id)
        spread5 = _spread(five, task.id)
        records.append(
            {
                "Task": task.abbrev,
                "CPS 0-shot": a,
                "CPS 5-shot": b,
                "Δ (5 − 0)": _diff(a, b),
                "MaxP − AvgP 0-shot": spread0,
                "MaxP − AvgP 5-shot": spread5,
            }
        )
    a = _num(zero.get(MAIN_SCORE_COLUMN)) if zero is not None else None
    b = _num(five.get(MAIN_SCORE_COLUMN)) if five is not None else None
    records.append({"Task": "Average CPS", "CPS 0-shot": a, "CPS 5-shot": b, "Δ (5 − 0)": _diff(a, b)})
    return pd.DataFrame.from_records(records)


def _spread(row: pd.Series | None, task_id: str) -> float | None:
    """MaxP − AvgP as :mod:`leaderboard.tables` computed it, from the unrounded scores."""
    if row is None:
        return None
    return _num(row.get(task_column(task_id, Aggregate.SPREAD)))


RUN_FIELDS = (
    ("data", "Data"),
    ("limit", "Limit"),
    ("harness", "Harness"),
    ("backend", "Backend"),
    ("hardware", "Hardware"),
    ("duration_s", "Duration (s)"),
    ("batch_size", "Batch size"),
    ("started_at", "Started"),
    ("finished_at", "Finished"),
    ("request_id", "Request"),
    ("results_path", "Results file"),
)


def run_metadata_view(board: Board, run: tuple[str, str, str] | None) -> pd.DataFrame:
    """How each setting of a model was run (field × setting): the ``run`` block of its results
    files, as loaded into ``board.runs``; with no ``run``, the field names alone."""
    runs_info: dict[int, dict[str, object]] = {}
    if run is not None:
        mine = _of_run(board.runs, run)
        columns = ["num_fewshot", *(key for key, _ in RUN_FIELDS)]
        runs_info = {int(info["num_fewshot"]): info for info in mine[columns].to_dict("records")}
    settings = sorted(runs_info)
    records = []
    for key, label in RUN_FIELDS:
        record: dict[str, object] = {"Field": label}
        for k in settings:
            record[f"{k}-shot"] = _plain(runs_info[k].get(key))
        records.append(record)
    return pd.DataFrame.from_records(records, columns=["Field", *[f"{k}-shot" for k in settings]])


def _plain(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def model_header_markdown(board: Board, run: tuple[str, str, str]) -> str:
    model, revision, precision = run
    mine = _of_run(board.runs, run)
    if mine.empty:
        return "Pick a model."
    first = mine.iloc[0]
    facts = [
        f"**Revision:** {md_text(revision)}",
        f"**Precision:** {md_text(precision)}",
        f"**Params:** {_plain(first.get('params_b'))} B",
        f"**Type:** {md_text(first.get('model_type') or 'unknown')}",
        f"**Licence:** {md_text(first.get('license') or 'unknown')}",
    ]
    if not bool(mine["comparable"].all()):
        facts.append("⚠️ **includes sample/limited runs (not comparable)**")
    return f"### {model_link(model)}\n\n" + " · ".join(facts)


def details_path_of(board: Board, run: tuple[str, str, str], num_fewshot: int) -> str | None:
    mine = _of_run(board.runs, run, num_fewshot)
    if mine.empty or "details_path" not in mine.columns:
        return None
    value = mine.iloc[0]["details_path"]
    return value if isinstance(value, str) and value else None


def details_view(records: Sequence, limit: int = 500) -> pd.DataFrame:
    """Answers of one (task, prompt): input, answer, target, score — as plain text."""
    headers = ["#", "Input", "Answer", "Target", "Score"]
    rows = [
        {"#": r.doc_id, "Input": r.input, "Answer": r.answer, "Target": r.target, "Score": _plain(r.score)}
        for r in list(records)[:limit]
    ]
    return _frame(rows, headers)


# -- queue ----------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueView:
    pending: pd.DataFrame
    running: pd.DataFrame
    finished: pd.DataFrame
    failed: pd.DataFrame
    problems: str  # Markdown, escaped
    summary: str


def _age(since: str | None, now: datetime) -> str:
    if not since:
        return "—"
    try:
        seconds = int((now - parse_time(since)).total_seconds())
    except ValueError:
        return "—"
    if seconds < 0:
        return "0s"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


def _last_change(request: EvalRequest, status: Status) -> str | None:
    for entry in reversed(request.history):
        if entry.get("status") == status.value:
            return entry.get("time")
    return None


def _request_base(request: EvalRequest) -> dict[str, object]:
    return {
        MODEL: request.model,
        REVISION: request.revision[:12],
        PRECISION: request.precision.value,
        "Setting": f"{request.num_fewshot}-shot",
    }


def queue_view(listing: QueueListing, now: datetime) -> QueueView:
    """The queue by state: PENDING in worker order with positions, RUNNING with worker and age, …"""
    pending = [
        {
            "Position": i,
            **_request_base(r),
            TYPE: r.model_type.value,
            "Submitted by": r.submitted_by,
            "Submitted": r.submitted_time,
        }
        for i, r in enumerate(fair_order(listing.requests), start=1)
    ]
    running = [
        {
            **_request_base(r),
            "Worker": r.claimed_by or "—",
            "Age": _age(_last_change(r, Status.RUNNING) or r.submitted_time, now),
            "Lease expires": r.lease_expires or "—",
        }
        for r in listing.with_status(Status.RUNNING)
    ]
    finished = [
        {
            **_request_base(r),
            "Finished": _last_change(r, Status.FINISHED) or "—",
            "Results": r.results_path or "—",
        }
        for r in sorted(listing.with_status(Status.FINISHED), key=lambda r: r.submitted_time, reverse=True)
    ]
    failed = [
        {
            **_request_base(r),
            "Status": r.status.value,
            "Reason": (r.error or "cancelled").strip()[:500],
            "Attempts": r.attempts,
        }
        for r in sorted(
            listing.with_status(Status.FAILED, Status.CANCELLED), key=lambda r: r.submitted_time, reverse=True
        )
    ]
    problems = ""
    if listing.problems:
        lines = [f"- {md_text(p.path)}: {md_text(p.reason)}" for p in listing.problems]
        problems = "**Malformed request files (skipped):**\n" + "\n".join(lines)
    summary = (
        f"{len(pending)} pending · {len(running)} running · {len(finished)} finished · "
        f"{len(failed)} failed or cancelled"
        + (f" · {len(listing.problems)} malformed" if listing.problems else "")
    )
    return QueueView(
        pending=_frame(
            pending, ["Position", MODEL, REVISION, PRECISION, "Setting", TYPE, "Submitted by", "Submitted"]
        ),
        running=_frame(running, [MODEL, REVISION, PRECISION, "Setting", "Worker", "Age", "Lease expires"]),
        finished=_frame(finished, [MODEL, REVISION, PRECISION, "Setting", "Finished", "Results"]),
        failed=_frame(failed, [MODEL, REVISION, PRECISION, "Setting", "Status", "Reason", "Attempts"]),
        problems=problems,
        summary=summary,
    )


def submitted_markdown(requests: Sequence[EvalRequest]) -> str:
    lines = ["✅ **Submitted.** Created request(s):"]
    for r in requests:
        lines.append(
            f"- {md_text(r.request_id)} — {md_text(r.model)} @ {md_text(r.revision[:12])}, "
            f"{md_text(r.precision.value)}, {r.num_fewshot}-shot, status {md_text(r.status.value)}"
        )
    return "\n".join(lines)


def rejected_markdown(message: str) -> str:
    return f"❌ **Submission refused.** {md_text(message)}"


# -- plots' data ----------------------------------------------------------------------


def radar_data(
    board, runs: Sequence[tuple[str, str, str]], num_fewshot: int
) -> dict[str, list[float | None]]:
    """Per-task CPS (paper order) of the chosen runs, keyed by display name."""
    rows = setting_rows(board, num_fewshot)
    labels = dict((key, label) for label, key in run_choices(board))
    out: dict[str, list[float | None]] = {}
    for run in runs:
        row = _run_row(rows, run)
        if row is None:
            continue
        out[labels.get(run_key(*run), run[0])] = [
            _num(row.get(task_column(t.id, Aggregate.CPS))) for t in SUITE
        ]
    return out


def sensitivity_data(board: Board, num_fewshot: int, show_noncomparable: bool = False) -> pd.DataFrame:
    """``Task``, ``Model``, ``Spread`` = MaxP − AvgP of every shown run on every task."""
    rows, _, _ = _select_rows(board, num_fewshot, RankingFilters(show_noncomparable=show_noncomparable))
    records = []
    for _, row in rows.iterrows():
        for task in SUITE:
            spread = _spread(row, task.id)
            if spread is not None:
                records.append({"Task": task.abbrev, "Model": row["model"], "Spread": spread})
    return _frame(records, ["Task", "Model", "Spread"])
