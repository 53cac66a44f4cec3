"""The ranking tab's views: the results snapshot (:class:`Board`), filters, ranks, the both-settings
view, model choices, and the plots' data."""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from leaderboard import tables
from leaderboard.results import LoadedResults
from leaderboard.state import TASK_COLUMNS
from leaderboard.suite import SUITE
from leaderboard.tables import MAIN_SCORE_COLUMN, RANK_COLUMN, Aggregate, task_column
from leaderboard.views.common import (
    AVG,
    KEY,
    META_COLUMNS,
    METRIC_LABELS,
    MODEL,
    NOTE,
    PARAMS,
    PRECISION,
    RANK,
    REVISION,
    SIZE_BUCKETS,
    TYPE,
    RankingFilters,
    RankingView,
    _frame,
    _note,
    _num,
    _run_row,
    _spread,
    model_link,
    parse_run_key,
    run_key,
    task_label,
)


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
            # As the task tab first shows it: non-comparable runs only when nothing else is there.
            include = not bool(self.rows(num_fewshot)["comparable"].any())
            for task in SUITE:
                self.prompt_rows(task.id, num_fewshot, include)
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
