"""The ranking tab's views: the results snapshot (:class:`Board`), filters, sort orders, the
both-settings view, model choices, and the plots' data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

import numpy as np
import pandas as pd

from eval_queue.vocabulary import RunRef
from leaderboard.tracks.evalita.app.tables import (
    MAIN_SCORE_COLUMN,
    TIER_COLUMN,
    high_column,
    low_column,
    task_column,
)
from leaderboard.tracks.evalita.app.views import subsets
from leaderboard.tracks.evalita.app.views.board import Board
from leaderboard.tracks.evalita.app.views.labels import (
    AVG,
    META_COLUMNS,
    SIZE_BUCKETS,
    RankingFilters,
    column_label,
)
from leaderboard.tracks.evalita.definition import SUITE, TASK_IDS, TASKS
from leaderboard.tracks.evalita.vocabulary import RANKING_AGGREGATES, Aggregate, Setting
from leaderboard.views.common import (
    CI,
    KEY_COLUMN,
    MODEL,
    NOTE,
    PAGE_SIZE,
    PARAMS,
    PRECISION,
    RANK,
    REVISION,
    TIER,
    TYPE,
    TablePage,
    _frame,
    _keys,
    _notes,
    _num,
    _revisions,
    _run_row,
    interval_text,
    paged,
)

#: The ranking's sort orders (link value → label), each in its natural direction.
RANKING_SORTS: Mapping[str, str] = MappingProxyType(
    {
        "rank": "Rank (best average CPS first)",
        "model": "Model name (A–Z)",
        "params": "Size (largest first)",
        "params-asc": "Size (smallest first)",
        **{task.id: f"{task.abbrev} CPS (best first)" for task in SUITE},
    }
)
DEFAULT_SORT = "rank"


#: The columns of the issue-32 views (the table's headings; the CSV writes them as shown).
CUSTOM_AVG, CUSTOM_CI, CUSTOM_TIER = f"{AVG} (custom)", f"{CI} (custom)", f"{TIER} (custom)"
KIND, ORG_RUNS, BEST_OF = "Kind", "Org runs", "Best of N"
_CUSTOM, _CUSTOM_SORT, _CUSTOM_RANK = subsets.CUSTOM_COLUMN, subsets.CUSTOM_SORT, subsets.CUSTOM_RANK_COLUMN
_CUSTOM_TIER, _KIND = subsets.CUSTOM_TIER_COLUMN, subsets.KIND_COLUMN
_ORG_RUNS, _ORG_TOP = subsets.ORG_RUNS_COLUMN, subsets.ORG_BEST_COLUMN
_CUSTOM_POSITION = subsets.CUSTOM_POSITION


def setting_rows(board: Board, num_fewshot: int, average_over: tuple[str, ...] = ()) -> pd.DataFrame:
    """The setting's runs (:meth:`Board.rows`) with the user views' columns: model kind,
    organisation counts and best run, and the custom average over ``average_over``
    (:func:`subsets.view_columns`, computed once per snapshot, setting and task set; its custom
    tiers left empty: :func:`setting_view` gives what fills them)."""
    return setting_view(board, num_fewshot, average_over)[0]


def setting_view(
    board: Board, num_fewshot: int, average_over: tuple[str, ...] = ()
) -> tuple[pd.DataFrame, subsets.CustomTiers | None]:
    """:func:`setting_rows` and the custom average's tiers, asked for the rows shown
    (:class:`subsets.CustomTiers`; ``None`` without a custom average of its own)."""
    tasks = subsets.chosen_tasks(average_over)

    def task_cps(keys: Sequence[tuple[str, str, str, int]]) -> np.ndarray:
        # Every task's unrounded CPS of the setting's runs, once per snapshot: each later set of
        # tasks only averages its columns.
        return board.memo(
            ("task-cps", num_fewshot),
            lambda: subsets.task_cps_matrix(keys, board.loaded.prompt_scores, TASK_IDS),
        )

    return board.memo(
        ("setting-rows", num_fewshot, tasks),
        lambda: subsets.view_columns(board.rows(num_fewshot), board.loaded, tasks, "_rank", task_cps),
        group=_custom_group(tasks),
    )


def _custom_group(tasks: tuple[str, ...]) -> tuple[str, ...] | None:
    """The memo group of a custom average's views (:meth:`Board.memo`): its task set, so only the
    latest sets asked stay in memory; ``None`` (the main memo) without a custom average."""
    return ("custom average", *tasks) if tasks else None


def _view_tasks(filters: RankingFilters) -> tuple[str, ...]:
    """The tasks "complete results" asks for: the custom average's, else all ten."""
    return subsets.chosen_tasks(filters.average_over) or tuple(task.id for task in SUITE)


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


def _sorted(rows: pd.DataFrame, sort: str, suffix: str = "") -> pd.DataFrame:
    """``rows`` in the order ``sort`` names (a key of :data:`RANKING_SORTS`); ties by model name.

    ``suffix`` picks the setting's columns in the both-settings view (``_0``: sorted as 0-shot).
    """
    if sort == "model":
        return rows.assign(_name=rows["model"].str.lower()).sort_values(
            ["_name", "revision", "precision"], kind="stable"
        )
    if sort in ("params", "params-asc"):
        numeric = pd.to_numeric(rows["params_b"], errors="coerce")
        return rows.assign(_params=numeric).sort_values(
            ["_params", "model"], ascending=[sort == "params-asc", True], na_position="last", kind="stable"
        )
    if sort == DEFAULT_SORT and _CUSTOM_RANK + suffix in rows.columns:
        # A custom average in view: "rank" orders by it (the official rank stays in its column).
        return _order(rows, _CUSTOM_RANK + suffix, _CUSTOM_SORT + suffix)
    if sort in TASKS:
        column = task_column(sort, Aggregate.CPS) + suffix
        return rows.assign(_score=rows[column].astype(float)).sort_values(
            ["_score", "model"], ascending=[False, True], na_position="last", kind="stable"
        )
    return _order(rows, "_rank" + suffix, MAIN_SCORE_COLUMN + suffix)


def _select_rows(
    board: Board, num_fewshot: int, filters: RankingFilters
) -> tuple[pd.DataFrame, str, int, subsets.CustomTiers | None]:
    rows, tiers = setting_view(board, num_fewshot, filters.average_over)
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
    rows = apply_filters(rows, filters)
    if filters.kinds:
        rows = rows[rows[_KIND].isin(filters.kinds)]
    if filters.org_best:
        rows = rows[rows[_ORG_TOP]]
    if filters.complete_only:
        columns = {t: task_column(t, Aggregate.CPS) for t in _view_tasks(filters)}
        missing = subsets.missing_tasks(rows, columns)
        hidden = subsets.hidden_text(missing)
        if hidden:
            banner = "\n\n".join(text for text in (banner, f"{hidden} (complete results only)") if text)
        rows = rows[missing == ""]
    return rows, banner, total, tiers


@dataclass(frozen=True)
class TierColumn:
    """A custom tier column of a view, filled for the rows asked: ``positions[i]`` is table row
    ``i``'s run in ``tiers`` (``-1``: the row has no run in that setting)."""

    label: str
    positions: np.ndarray
    tiers: subsets.CustomTiers

    def at(self, rows: np.ndarray) -> pd.Series:
        """The tiers of table rows ``rows`` (positions in the table), as :func:`_ranks` writes them."""
        return pd.Series(self.tiers.at(self.positions[rows]), dtype=object)


@dataclass(frozen=True)
class RankingView:
    """The ranking as shown: :attr:`table` holds every matching row in order, with plain values
    (exactly what the CSV writes, plus the hidden :data:`KEY_COLUMN`); ``total`` counts the
    setting's runs before any filter.

    A custom average's tier columns (:attr:`tier_columns`) are empty in :attr:`partial` and filled
    when asked: :meth:`page` fills its rows' (a few runs' Holm families), :attr:`table` every
    row's (the whole board's tests: the CSV).  Each run's tier is the same either way."""

    partial: pd.DataFrame
    banner: str
    total: int
    tier_columns: tuple[TierColumn, ...] = ()

    @cached_property
    def table(self) -> pd.DataFrame:
        """Every row, every tier filled (computed once per view)."""
        if not self.tier_columns:
            return self.partial
        table = self.partial.copy()
        every = np.arange(len(table))
        for column in self.tier_columns:
            table[column.label] = column.at(every).to_numpy()
        return table

    def page(self, number: int, size: int = PAGE_SIZE) -> TablePage:
        """Page ``number`` of the table (:func:`paged`), its rows' tiers filled."""
        page = paged(self.partial, number, size)
        if not self.tier_columns or page.rows.empty:
            return page
        rows = page.rows.copy()
        shown = np.arange(page.first - 1, page.last)
        for column in self.tier_columns:
            rows[column.label] = column.at(shown).to_numpy()
        return TablePage(rows, page.number, page.count, page.first, page.last, page.total)

    @property
    def shown(self) -> pd.DataFrame:
        """The table without its hidden key column (the CSV, the plots)."""
        return self.table.drop(columns=KEY_COLUMN)


def _positions(rows: pd.DataFrame, column: str) -> np.ndarray:
    """Each row's position in its setting's custom average (``-1``: none)."""
    return pd.to_numeric(rows[column], errors="coerce").fillna(-1).to_numpy(dtype=np.int64)


def ranking_view(
    board: Board, setting: Setting | str, filters: RankingFilters, sort: str = DEFAULT_SORT
) -> RankingView:
    """The ranking for ``setting`` under ``filters``, in the order ``sort`` names (once per snapshot:
    paging through it, or coming back to it, costs nothing)."""
    setting = Setting(setting)
    return board.memo(
        ("ranking", setting, filters, sort),
        lambda: _ranking_view(board, setting, filters, sort),
        group=_custom_group(subsets.chosen_tasks(filters.average_over)),
    )


def _ranking_view(board: Board, setting: Setting, filters: RankingFilters, sort: str) -> RankingView:
    if setting.num_fewshot is None:
        return _both_view(board, filters, sort)
    rows, banner, total, tiers = _select_rows(board, setting.num_fewshot, filters)
    rows = _sorted(rows, sort)
    shown = _run_columns(board, setting.num_fewshot, rows)
    table = pd.DataFrame(
        {
            RANK: shown[RANK],
            MODEL: rows["model"].to_numpy(),
            AVG: rows[MAIN_SCORE_COLUMN].astype(float).to_numpy(),
            CI: shown[CI],
            TIER: shown[TIER],
        }
    )
    tier_columns: list[TierColumn] = []
    if filters.average_over:
        table[CUSTOM_AVG] = rows[_CUSTOM].astype(float).to_numpy()
        table[CUSTOM_CI] = _intervals(rows, _CUSTOM)
        if tiers is not None:  # filled when asked (RankingView.page, RankingView.table)
            table[CUSTOM_TIER] = np.full(len(rows), None, dtype=object)
            tier_columns.append(TierColumn(CUSTOM_TIER, _positions(rows, _CUSTOM_POSITION), tiers))
        else:
            table[CUSTOM_TIER] = _ranks(rows[_CUSTOM_TIER])
    _add_organisation(table, rows, "")  # beside the scores: a best of N is read with its score
    for column in _IDENTITY:
        table[column] = shown[column]
    for task in SUITE:
        for aggregate in _chosen(filters):
            table[column_label(task.id, aggregate)] = _metric_column(rows, task.id, aggregate, "")
    table[KEY_COLUMN] = shown[KEY_COLUMN]
    return RankingView(partial=table, banner=banner, total=total, tier_columns=tuple(tier_columns))


def _chosen(filters: RankingFilters) -> list[Aggregate]:
    return [aggregate for aggregate in RANKING_AGGREGATES if aggregate in filters.columns]


def _ranks(ranks: pd.Series) -> pd.Series:
    """Integer ranks (or tiers), ``None`` for the unranked (object dtype, so 1 stays 1 and not 1.0)."""
    return pd.Series([None if pd.isna(v) else int(v) for v in ranks], dtype=object)


def _intervals(rows: pd.DataFrame, column: str, suffix: str = "") -> list[str]:
    """The 95 % interval of ``column`` per row as text (``—`` for a run without per-item data)."""
    lows, highs = rows[low_column(column) + suffix], rows[high_column(column) + suffix]
    return [interval_text(low, high) for low, high in zip(lows, highs, strict=True)]


def _metric_column(rows: pd.DataFrame, task_id: str, aggregate: Aggregate, suffix: str) -> object:
    column = task_column(task_id, aggregate) + suffix
    if column not in rows.columns:
        return None
    values = rows[column]
    if not aggregate.is_score:
        return values.fillna("").astype(str).to_numpy()
    return values.astype(float).to_numpy()


_IDENTITY = (PARAMS, TYPE, KIND, PRECISION, REVISION, NOTE)


def _add_identity(table: pd.DataFrame, rows: pd.DataFrame) -> None:
    for column, values in _identity(rows).items():
        table[column] = values


def _identity(rows: pd.DataFrame) -> dict[str, object]:
    """The :data:`_IDENTITY` columns of ``rows``, in that order."""
    return {
        PARAMS: pd.to_numeric(rows["params_b"], errors="coerce").to_numpy(),
        TYPE: rows["model_type"].fillna("unknown").astype(str).to_numpy(),
        KIND: rows[_KIND].astype(str).to_numpy(),
        PRECISION: rows["precision"].astype(str).to_numpy(),
        REVISION: _revisions(rows["revision"]),
        NOTE: _notes(rows),
    }


def run_columns(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """The single-setting table's columns that depend on the run alone (never on the filters, the
    sort or a custom average): rank, interval, tier, identity and key of each row of ``rows``."""
    return {
        RANK: _ranks(rows["_rank"]).to_numpy(),
        CI: np.array(_intervals(rows, MAIN_SCORE_COLUMN), dtype=object),
        TIER: _ranks(rows[TIER_COLUMN]).to_numpy(),
        **{
            column: np.asarray(values, dtype=object if isinstance(values, list) else None)
            for column, values in _identity(rows).items()
        },
        KEY_COLUMN: np.array(_keys(rows), dtype=object),
    }


#: Columns the table was always given as lists (an empty list makes a float64 column, an empty
#: object array an object one: the same frames as before, empty ones included).
_LISTED = (CI, REVISION, NOTE, KEY_COLUMN)


def _run_columns(board: Board, num_fewshot: int, rows: pd.DataFrame) -> dict[str, object]:
    """:func:`run_columns` of ``rows`` (the setting's rows, filtered and sorted), taken from the
    setting's, made once per snapshot: every view of 10,000 runs formats the same cells."""
    index, every = board.memo(
        ("run-columns", num_fewshot),
        lambda: (setting_rows(board, num_fewshot).index, run_columns(setting_rows(board, num_fewshot))),
    )
    at = index.get_indexer(rows.index) if index.is_unique else None
    if at is None or (at < 0).any():
        every, at = run_columns(rows), np.arange(len(rows))
    return taken(every, at)


def taken(columns: Mapping[str, np.ndarray], at: np.ndarray) -> dict[str, object]:
    """Rows ``at`` of :func:`run_columns`' ``columns``, as the table is given them."""
    return {
        column: values[at].tolist() if column in _LISTED else values[at] for column, values in columns.items()
    }


def _add_organisation(table: pd.DataFrame, rows: pd.DataFrame, suffix: str, label: str = "") -> None:
    """The organisation's run count in the setting and the "best of N from ORG" marker."""
    counts = rows[_ORG_RUNS + suffix]
    table[ORG_RUNS + label] = pd.Series([None if pd.isna(v) else int(v) for v in counts], dtype=object)
    top = rows[_ORG_TOP + suffix].astype("boolean").fillna(False).astype(bool)
    text = subsets.best_of_text(rows["model"].pipe(subsets.organisation), counts.fillna(0).astype(int), top)
    table[BEST_OF + label] = text.to_numpy()


def _diff_column(a: pd.Series, b: pd.Series) -> object:
    return (b.astype(float) - a.astype(float)).round(2).to_numpy()


def _both_view(board: Board, filters: RankingFilters, sort: str) -> RankingView:
    zero, banner0, total0, tiers0 = _select_rows(board, 0, filters)
    five, banner5, total5, tiers5 = _select_rows(board, 5, filters)
    both = zero.merge(five, on=list(RunRef.COLUMNS), how="outer", suffixes=("_0", "_5"))
    for column in (*META_COLUMNS, _KIND):
        both[column] = both[f"{column}_0"].combine_first(both[f"{column}_5"])
    both["comparable"] = both["comparable_0"].fillna(True).astype(bool) & both["comparable_5"].fillna(
        True
    ).astype(bool)
    both = _sorted(both, sort, "_0")
    table = pd.DataFrame(
        {
            RANK: _ranks(both["_rank_0"]),
            MODEL: both["model"].to_numpy(),
            f"{AVG} {Setting.ZERO.label}": both[f"{MAIN_SCORE_COLUMN}_0"].astype(float).to_numpy(),
            f"{AVG} {Setting.FIVE.label}": both[f"{MAIN_SCORE_COLUMN}_5"].astype(float).to_numpy(),
            f"{AVG} Δ": _diff_column(both[f"{MAIN_SCORE_COLUMN}_0"], both[f"{MAIN_SCORE_COLUMN}_5"]),
            f"{CI} {Setting.ZERO.label}": _intervals(both, MAIN_SCORE_COLUMN, "_0"),
            f"{CI} {Setting.FIVE.label}": _intervals(both, MAIN_SCORE_COLUMN, "_5"),
            f"{TIER} {Setting.ZERO.label}": _ranks(both[f"{TIER_COLUMN}_0"]),
            f"{TIER} {Setting.FIVE.label}": _ranks(both[f"{TIER_COLUMN}_5"]),
        }
    )
    tier_columns: list[TierColumn] = []
    if filters.average_over:
        for suffix, setting, tiers in (("_0", Setting.ZERO, tiers0), ("_5", Setting.FIVE, tiers5)):
            table[f"{CUSTOM_AVG} {setting.label}"] = both[_CUSTOM + suffix].astype(float).to_numpy()
            table[f"{CUSTOM_CI} {setting.label}"] = _intervals(both, _CUSTOM, suffix)
            label = f"{TIER} {setting.label} (custom)"
            table[label] = _ranks(both[_CUSTOM_TIER + suffix])
            if tiers is not None:
                tier_columns.append(TierColumn(label, _positions(both, _CUSTOM_POSITION + suffix), tiers))
    for suffix, setting in (("_0", Setting.ZERO), ("_5", Setting.FIVE)):
        _add_organisation(table, both, suffix, f" {setting.label}")
    _add_identity(table, both)
    for task in SUITE:
        for aggregate in _chosen(filters):
            label = column_label(task.id, aggregate)
            table[f"{label} 0"] = _metric_column(both, task.id, aggregate, "_0")
            table[f"{label} 5"] = _metric_column(both, task.id, aggregate, "_5")
            if aggregate.is_score:
                column = task_column(task.id, aggregate)
                table[f"{label} Δ"] = _diff_column(both[f"{column}_0"], both[f"{column}_5"])
    table[KEY_COLUMN] = _keys(both)
    return RankingView(
        partial=table, banner=banner0 or banner5, total=max(total0, total5), tier_columns=tuple(tier_columns)
    )


def all_model_types(board: Board) -> list[str]:
    return _distinct(board.runs, "model_type")


def all_precisions(board: Board) -> list[str]:
    return _distinct(board.runs, "precision")


def _distinct(frame: pd.DataFrame, column: str) -> list[str]:
    if frame.empty or column not in frame.columns:
        return []
    return sorted({str(v) for v in frame[column].dropna()})


def run_choices(board: Board) -> list[tuple[str, str]]:
    """``(label, key)`` for every evaluated run reference, labelled unambiguously."""
    return board.choices()


#: The most runs a run dropdown lists: beyond it, the best ranked ones of each setting and the
#: runs chosen (a list of 10,000 runs is a megabyte per dropdown and no use to scroll; any run
#: is opened from the ranking's search or by its link).
MAX_CHOICES = 500


def shown_choices(board: Board, keep: Iterable[str] = ()) -> tuple[tuple[str, str], ...]:
    """:func:`run_choices`, or on a board of more than :data:`MAX_CHOICES` runs the best ranked
    ones of each setting plus ``keep`` (the runs chosen), in the same order."""
    choices = board.choices()
    if len(choices) <= MAX_CHOICES:
        return tuple(choices)
    top = board.memo(
        ("top choices",),
        lambda: frozenset(key for k in (0, 5) for key in top_runs(board, MAX_CHOICES // 2, k)),
    )
    wanted = top | {key for key in keep if isinstance(key, str)}
    return tuple(choice for choice in choices if choice[1] in wanted)


def run_of_key(board: Board, key: object) -> RunRef | None:
    """The evaluated run a key names (a link, a dropdown, a clicked row's hidden key), else ``None``."""
    if not isinstance(key, str):
        return None
    ref = RunRef.parse(key)
    if ref is None or key not in board.choice_keys():
        return None
    return ref


def top_runs(board: Board, n: int, num_fewshot: int = 0) -> list[str]:
    """Keys of the ``n`` best ranked runs (comparable ones when there are any): the default choices."""
    rows = board.rows(num_fewshot)
    if rows["comparable"].any():
        rows = rows[rows["comparable"]]
    return _keys(_order(rows).head(n))


def pick_runs(board: Board, keys: Iterable[str]) -> list[RunRef]:
    return [ref for key in keys if (ref := run_of_key(board, key)) is not None]


def radar_data(board: Board, runs: Sequence[RunRef], num_fewshot: int) -> dict[str, list[float | None]]:
    """Per-task CPS (paper order) of the chosen runs, keyed by display name."""
    rows = setting_rows(board, num_fewshot)
    labels = {key: label for label, key in board.choices()}
    out: dict[str, list[float | None]] = {}
    for run in runs:
        row = _run_row(rows, run)
        if row is None:
            continue
        out[labels.get(run.key, run.model)] = [_num(row.get(task_column(t.id, Aggregate.CPS))) for t in SUITE]
    return out


def sensitivity_data(board: Board, num_fewshot: int, show_noncomparable: bool = False) -> pd.DataFrame:
    """``Task``, ``Model``, ``Spread`` = MaxP − AvgP of every shown run on every task."""
    return board.memo(
        ("sensitivity", num_fewshot, show_noncomparable),
        lambda: _sensitivity(board, num_fewshot, show_noncomparable),
    )


def _sensitivity(board: Board, num_fewshot: int, show_noncomparable: bool) -> pd.DataFrame:
    rows, _, _, _ = _select_rows(board, num_fewshot, RankingFilters(show_noncomparable=show_noncomparable))
    headers = ["Task", "Model", "Spread"]
    if rows.empty:
        return _frame([], headers)
    # One (runs × tasks) matrix of each run's spread (NaN: none), read row by row as a record per
    # run and task would be: run by run, tasks in suite order (``_spread`` of each cell).
    columns = [task_column(task.id, Aggregate.SPREAD) for task in SUITE]
    spread = np.column_stack(
        [
            pd.to_numeric(rows[column], errors="coerce").to_numpy(dtype=np.float64)
            if column in rows.columns
            else np.full(len(rows), np.nan)
            for column in columns
        ]
    )
    run, task = np.nonzero(~np.isnan(spread))
    if not len(run):
        return _frame([], headers)
    abbrevs = np.array([t.abbrev for t in SUITE], dtype=object)
    return pd.DataFrame(
        {
            "Task": abbrevs[task],
            "Model": rows["model"].to_numpy(dtype=object)[run],
            # ``_num``'s rounding (Python's, not numpy's: the same two decimals as before).
            "Spread": [round(float(v), 2) for v in spread[run, task]],
        },
        columns=headers,
    )
