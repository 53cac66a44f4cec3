"""The ranking's four user views (issue 32), as pure functions over one setting's runs.

* :func:`custom_average` — the mean CPS over the tasks a user picks, with its 95 % interval and
  tier recomputed from the runs' kept per-task draws (the first
  :data:`~leaderboard.tracks.evalita.cps_intervals.TASK_DRAWS_KEPT` resamples) as the mean CPS's are
  (:mod:`leaderboard.tracks.evalita.cps_intervals`: the mean of the tasks' reflected and
  tie-aware draws, :func:`~leaderboard.tracks.evalita.cps_intervals.bias_aware_interval`'s
  union of percentile intervals, :func:`~leaderboard.core.tiers.assign_tiers` on the paired
  draws of the most common key).  With every task picked it is the ranking's mean CPS, from its
  own kept draws (all 1,000 resamples).
* :func:`missing_tasks` — which of the chosen tasks a run has no CPS for (the "complete
  results only" filter and its count of what it hides).
* :func:`model_kind` — chat/instruct, base, or unknown, from what a results file records.
* :func:`organisation_counts` — how many runs each organisation has in a setting, and which
  of them is the best of its N siblings (Singh et al. 2025, "The Leaderboard Illusion").

Everything is vectorised over runs (numpy / pandas); the kept draws are read as float32 rows
(:func:`~leaderboard.tracks.evalita.app.compact.kept_draws`: rows of the compact blocks' matrices,
nothing decoded; a parsed block's text decoded) and summed as matrices.  The views (:mod:`.ranking`) memoise the results per board
snapshot and state, so a second visitor asking for the same view pays nothing.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from eval_queue.requests import ModelType
from leaderboard.core.numbers import percents
from leaderboard.core.summary import UncertaintySummary
from leaderboard.core.tiers import FamilyTiers, matrix_tiers
from leaderboard.core.uncertainty import percentile_bounds
from leaderboard.tracks.evalita.app.compact import locate_kept_draws, release_spilled
from leaderboard.tracks.evalita.app.records import RUN_KEY, LoadedResults, PromptScores, RunKey
from leaderboard.tracks.evalita.app.tables import MAIN_SCORE_COLUMN, TIER_COLUMN, high_column, low_column
from leaderboard.tracks.evalita.cps_intervals import mean_draws_key
from leaderboard.tracks.evalita.definition import SUITE, TASK_IDS, TASKS
from leaderboard.tracks.evalita.metrics import cps_formula
from leaderboard.tracks.evalita.uncertainty import (
    MEAN_CPS_FIGURE,
    MEAN_CPS_TIE_FIGURE,
    cps_figure,
    cps_tie_figure,
)

Array = NDArray[np.float64]

#: The model kinds the ranking can keep apart (EuroEval #2104), in the order the filter shows them.
CHAT, BASE, UNKNOWN_KIND = "chat", "base", "unknown"
MODEL_KINDS: tuple[str, ...] = (CHAT, BASE, UNKNOWN_KIND)
KIND_LABELS: Mapping[str, str] = {
    CHAT: "chat / instruct",
    BASE: "base (pretrained)",
    UNKNOWN_KIND: "unknown",
}
_BASE_TYPES = frozenset({ModelType.PRETRAINED.value, ModelType.CONTINUALLY_PRETRAINED.value})


def chosen_tasks(task_ids: Sequence[str]) -> tuple[str, ...]:
    """``task_ids`` in suite order, unknown and repeated ids dropped (a link's order never matters)."""
    wanted = set(task_ids)
    return tuple(str(t) for t in TASK_IDS if t in wanted)


# --------------------------------------------------------------------------- custom average


#: Custom averages whose draws stay in memory for their tiers (a float64 ``N × B`` matrix, the
#: second set's means only: 16 MB at 10,000 runs × 200 resamples): the latest one, whose pages a
#: visitor turns.  An older one's draws are gathered again when a tier is asked of it (a tenth of
#: a second at 10,000 runs), so memory stays bounded whatever views the board keeps (its memo keeps
#: the latest two task sets' views: ``board.MEMO_GROUPS``; each holds its :class:`CustomTiers`,
#: whose draws this bound releases sooner).
TIER_DRAWS_KEPT = 1
_tier_draws: OrderedDict[int, FamilyTiers] = OrderedDict()
_tier_draws_lock = threading.Lock()
_serial = itertools.count()


class CustomTiers:
    """The tiers of a custom average's runs, computed when asked: :meth:`at` for the rows a page
    shows (each run's own Holm family, :class:`~leaderboard.core.tiers.FamilyTiers`: ``rows × N``
    tests), :meth:`every` for all of them (:func:`~leaderboard.core.tiers.matrix_tiers`, what the
    CSV and the export write).  A run's tier depends only on its own comparisons, so both give
    each run the same tier (``tests/ui/test_custom_average_exact.py``).

    ``chosen``: the positions of the tiered runs (the others have none); ``gather()``: their
    ``(reflected, tie-aware)`` draw rows, gathered again if they were dropped from memory.
    """

    def __init__(
        self,
        size: int,
        chosen: NDArray[np.int64],
        gather: Callable[[], tuple[Array, Array]],
        draws: tuple[Array, Array] | None = None,
    ) -> None:
        self.size = size
        self.chosen = np.asarray(chosen, dtype=np.int64)
        self._slot = np.full(size, -1, dtype=np.int64)
        self._slot[self.chosen] = np.arange(len(self.chosen))
        self._gather = gather
        self._key = next(_serial)  # not id(): a later object may reuse a collected one's id
        self._known: dict[int, int] = {}
        self._every: tuple[int | None, ...] | None = None
        self._lock = threading.Lock()
        if draws is not None and len(self.chosen):
            self._keep(FamilyTiers(*draws))

    def _keep(self, family: FamilyTiers) -> None:
        with _tier_draws_lock:
            _tier_draws[self._key] = family
            _tier_draws.move_to_end(self._key)
            while len(_tier_draws) > TIER_DRAWS_KEPT:
                _tier_draws.popitem(last=False)

    def _family(self) -> FamilyTiers:
        with _tier_draws_lock:
            family = _tier_draws.get(self._key)
            if family is not None:
                _tier_draws.move_to_end(self._key)
                return family
        family = FamilyTiers(*self._gather())
        self._keep(family)
        return family

    def at(self, positions: Sequence[int] | NDArray[np.integer]) -> list[int | None]:
        """The tiers of the runs at ``positions`` (``-1``: no run, no tier)."""
        positions = np.asarray(positions, dtype=np.int64).reshape(-1)
        slots = np.where(positions >= 0, self._slot[np.maximum(positions, 0)], -1) if self.size else positions
        with self._lock:
            if self._every is not None:
                return [self._every[p] if p >= 0 else None for p in positions.tolist()]
            missing = sorted({s for s in slots.tolist() if s >= 0 and s not in self._known})
            if missing:
                found = self._family().tiers(missing)
                self._known.update(zip(missing, found.tolist(), strict=True))
            return [self._known[s] if s >= 0 else None for s in slots.tolist()]

    def every(self) -> tuple[int | None, ...]:
        """Every run's tier (``None``: not tiered), in the runs' order."""
        with self._lock:
            if self._every is None:
                tiers: list[int | None] = [None] * self.size
                if len(self.chosen):
                    # Both draw sets (a FamilyTiers keeps only the first): gathered again, the same
                    # rows bit for bit, a tenth of a second beside the whole board's tests.
                    found = matrix_tiers(*self._gather()).tolist()
                    for i, tier in zip(self.chosen.tolist(), found, strict=True):
                        tiers[i] = tier
                self._every = tuple(tiers)
                with _tier_draws_lock:  # every tier known: the draws are no longer needed
                    _tier_draws.pop(self._key, None)
            return self._every


@dataclass(frozen=True)
class CustomAverage:
    """The mean CPS over ``tasks`` of each run (0–1; NaN where a chosen task has no CPS), its
    interval (NaN where a run kept no per-task draws) and its tiers (``None``: no draws, no
    score, not comparable, or draws of other items), computed when asked (:class:`CustomTiers`)."""

    tasks: tuple[str, ...]
    points: Array
    lows: Array
    highs: Array
    tier_of: CustomTiers

    @property
    def tiers(self) -> tuple[int | None, ...]:
        """Every run's tier (the whole board's tests: :meth:`CustomTiers.every`)."""
        return self.tier_of.every()


def task_cps_matrix(
    keys: Sequence[RunKey], prompt_scores: Mapping[RunKey, PromptScores], task_ids: Sequence[str]
) -> Array:
    """``(N, T)`` unrounded CPS of each run on each task (NaN when a prompt has no score), by
    :func:`~leaderboard.tracks.evalita.metrics.cps_formula` on MaxP and AvgP over the task's prompts."""
    out = np.full((len(keys), len(task_ids)), np.nan)
    empty: Mapping[str, float | None] = {}
    runs = [prompt_scores.get(key, {}) for key in keys]  # one lookup per run, not per prompt
    for column, task_id in enumerate(task_ids):
        prompts = TASKS[task_id].prompt_ids
        per_run = [run.get(task_id, empty) for run in runs]
        # ``None`` (the paper's N/A, or no score) becomes NaN, and NaN propagates to the CPS.
        scores = np.array([[scores.get(p) for p in prompts] for scores in per_run], dtype=np.float64)
        if len(keys):
            out[:, column] = cps_formula(scores.max(axis=1), scores.mean(axis=1))
    return out


def _task_draws(
    summaries: Sequence[UncertaintySummary | None], task_ids: Sequence[str]
) -> tuple[Array, Array, list[str | None]]:
    """Per run, the mean over ``task_ids`` of the tasks' reflected and tie-aware CPS draws
    ``(N, B)`` (NaN rows for a run lacking one) and the key of those means (``None``: none).

    The draws of every run are located first (:func:`~leaderboard.tracks.evalita.app.compact.locate_kept_draws`)
    and gathered a task at a time, one matrix per task and side: no array per run
    (``tests/ui/test_custom_average_exact.py`` compares it with the run-by-run reference)."""
    # Every task: the ranking's mean CPS itself, with all its kept resamples.
    figures = (
        [(MEAN_CPS_FIGURE, MEAN_CPS_TIE_FIGURE)]
        if set(task_ids) == set(TASK_IDS)
        else [(cps_figure(t), cps_tie_figure(t)) for t in task_ids]
    )
    names = [name for pair in figures for name in pair]  # reflected, tie-aware, per task
    n = len(summaries)
    located = locate_kept_draws(summaries, names)
    lengths = np.stack([kept.lengths for kept in located], axis=1) if n else np.empty((0, len(names)), int)
    present = np.flatnonzero((lengths >= 0).all(axis=1))
    # One number of resamples, the most common among the runs whose draw sets all have one
    # (Counter keeps the first seen of equal counts: the runs' order, as run by run).
    same = (lengths[present] == lengths[present, :1]).all(axis=1)
    common = Counter(lengths[present[same], 0].tolist()).most_common(1)
    b = common[0][0] if common else 0
    ok = present[same & (lengths[present, 0] == b)] if len(present) else present
    keys: list[str | None] = [None] * n
    merged: dict[tuple[str | None, ...], str] = {}  # a few distinct key tuples among thousands of runs
    reflected_keys = [located[2 * j].keys for j in range(len(figures))]
    for i in ok.tolist():
        if len(figures) == 1:
            keys[i] = reflected_keys[0][i]
        else:
            task_keys = tuple(column[i] for column in reflected_keys)
            key = merged.get(task_keys)
            if key is None:
                key = merged[task_keys] = mean_draws_key(task_keys)  # type: ignore[arg-type]
            keys[i] = key
    reflected = np.full((n, b), np.nan)
    tie_aware = np.full((n, b), np.nan)
    if len(ok):
        for side, out in ((0, reflected), (1, tie_aware)):
            total = np.zeros((len(ok), b))
            for j in range(len(figures)):
                # float32 rows added to float64 totals, task by task (the order fixes the sums' bits).
                total += located[2 * j + side].rows(ok)
            # Tasks have independent draws: a resample of the mean is the mean of the tasks' resamples.
            out[ok] = total / len(figures)
    # The per-task draws are copied into the sums: their mapped pages need not stay resident.
    release_spilled(summaries)
    return reflected, tie_aware, keys


def custom_average(
    keys: Sequence[RunKey],
    prompt_scores: Mapping[RunKey, PromptScores],
    uncertainty: Mapping[RunKey, UncertaintySummary | None],
    task_ids: Sequence[str],
    comparable: Sequence[bool],
    task_cps: Array | None = None,
) -> CustomAverage:
    """The custom average of one setting's runs over ``task_ids`` (module docstring).

    Tiers are among the ``comparable`` runs with a score and draws of the most common key, as
    the ranking's tiers are (``tables.setting_tiers``).  ``task_cps``: the runs' ``(N, 10)``
    :func:`task_cps_matrix` over every task, when the caller keeps it (else computed here).
    """
    tasks = chosen_tasks(task_ids)
    n = len(keys)
    if not tasks or not n:
        empty = np.full(n, np.nan)
        untiered = CustomTiers(n, np.zeros(0, dtype=np.int64), lambda: (np.zeros((0, 0)), np.zeros((0, 0))))
        return CustomAverage(tasks, empty, empty.copy(), empty.copy(), untiered)
    if task_cps is None:
        points = task_cps_matrix(keys, prompt_scores, tasks).mean(axis=1)
    else:
        points = task_cps[:, [TASK_IDS.index(t) for t in tasks]].mean(axis=1)
    summaries = [uncertainty.get(k) for k in keys]
    reflected, tie_aware, draw_keys = _task_draws(summaries, tasks)
    lows, highs = np.full(n, np.nan), np.full(n, np.nan)
    has = np.array([k is not None for k in draw_keys]) & np.isfinite(points)
    if has.any():
        # bias_aware_interval, for every run at once: the union of both draw sets' percentile intervals.
        # percentile_bounds: percentile_intervals' numbers as arrays, without importing scipy.stats.
        rows = np.flatnonzero(has)
        plain_low, plain_high = percentile_bounds(reflected[rows])
        tied_low, tied_high = percentile_bounds(tie_aware[rows])
        # min(a, b) and max(a, b) of each pair, as Python's (the first unless the second is beyond).
        lows[rows] = np.where(tied_low < plain_low, tied_low, plain_low)
        highs[rows] = np.where(tied_high > plain_high, tied_high, plain_high)
    chosen = tiered_runs(points, draw_keys, comparable)

    def gather() -> tuple[Array, Array]:
        # The same rows again (the same draws: the same sums, bit for bit).
        again, again_tied, _ = _task_draws(summaries, tasks)
        return again[chosen], again_tied[chosen]

    tier_of = CustomTiers(n, chosen, gather, (reflected[chosen], tie_aware[chosen]))
    return CustomAverage(tasks, points, lows, highs, tier_of)


def tiered_runs(
    points: Array, draw_keys: Sequence[str | None], comparable: Sequence[bool]
) -> NDArray[np.int64]:
    """The positions of the runs a custom average tiers: the comparable runs with a point and
    draws of the most common key (as the ranking's tiers are, ``tables.setting_tiers``)."""
    eligible = [
        i for i, key in enumerate(draw_keys) if key is not None and comparable[i] and np.isfinite(points[i])
    ]
    if not eligible:
        return np.zeros(0, dtype=np.int64)
    common, _ = Counter(draw_keys[i] for i in eligible).most_common(1)[0]
    return np.array([i for i in eligible if draw_keys[i] == common], dtype=np.int64)


# --------------------------------------------------------------------------- complete results


def missing_tasks(rows: pd.DataFrame, columns: Mapping[str, str]) -> pd.Series:
    """Per row, the chosen tasks it has no CPS for, as "SUM, NER" (empty string: complete).

    ``columns``: task id → the column of ``rows`` holding its CPS (NaN/None: missing).
    """
    parts = [
        np.where(rows[column].isna().to_numpy(), TASKS[task_id].abbrev, "")
        for task_id, column in columns.items()
    ]
    if not parts:
        return pd.Series("", index=rows.index, dtype=object)
    return pd.Series([", ".join(p for p in row if p) for row in zip(*parts, strict=True)], index=rows.index)


def hidden_text(missing: pd.Series) -> str:
    """ "N runs hidden: missing SUM (3), NER (1)" for the incomplete rows ``missing`` lists (empty: none)."""
    incomplete = missing[missing != ""]
    if incomplete.empty:
        return ""
    counts = Counter(part for text in incomplete for part in text.split(", "))
    order = [t.abbrev for t in SUITE if t.abbrev in counts]
    what = ", ".join(f"{abbrev} ({counts[abbrev]})" for abbrev in order)
    runs = "run" if len(incomplete) == 1 else "runs"
    return f"{len(incomplete):,} {runs} hidden: missing {what}"


# --------------------------------------------------------------------------- model kind


def model_kind(model_type: pd.Series, chat_template: pd.Series) -> pd.Series:
    """Chat/instruct, base or unknown per run.

    ``chat``: the run applied the model's chat template, or its submitter called it
    instruction-tuned; ``base``: pretrained (or continually pretrained) and run without a chat
    template; ``unknown`` otherwise — fine-tuned and merged models say nothing either way, and
    runs from before ``chat_template`` was recorded carry no model type of their own.
    """
    types = model_type.astype(object).where(model_type.notna(), None)
    chat = chat_template.astype(object).map(lambda v: v is True or v == 1)
    kind = pd.Series(UNKNOWN_KIND, index=model_type.index, dtype=object)
    kind[types.isin(list(_BASE_TYPES))] = BASE
    kind[(types == ModelType.INSTRUCTION_TUNED.value) | chat] = CHAT
    return kind


# --------------------------------------------------------------------------- organisations


def organisation(models: pd.Series) -> pd.Series:
    """The organisation of each model id: the part before the first ``/`` (the id itself without one)."""
    return pd.Series([str(m).split("/", 1)[0] for m in models], index=models.index, dtype=object)


def organisation_counts(
    models: pd.Series, rank: pd.Series, counted: pd.Series
) -> tuple[pd.Series, pd.Series]:
    """Per row: how many ``counted`` runs its organisation has in this setting, and whether the
    row is its organisation's best ranked run (lowest ``rank``, ties by model id).

    ``counted`` marks the sibling runs (the setting's comparable runs); the others get their
    organisation's count and are never its best.
    """
    codes, _ = pd.factorize(organisation(models))
    is_counted = counted.to_numpy(dtype=bool)
    n = np.bincount(codes, weights=is_counted, minlength=codes.max() + 1 if len(codes) else 0)[codes]
    ranks = pd.to_numeric(rank, errors="coerce").to_numpy(dtype=np.float64)
    candidates = np.flatnonzero(is_counted & np.isfinite(ranks))
    top = np.zeros(len(codes), dtype=bool)
    if len(candidates):
        names = models.astype(str).to_numpy()[candidates]
        # Per organisation, its lowest rank first (ties by model id): the first of each code.
        order = candidates[np.lexsort((names, ranks[candidates], codes[candidates]))]
        first = np.ones(len(order), dtype=bool)
        first[1:] = codes[order][1:] != codes[order][:-1]
        top[order[first]] = True
    return pd.Series(n.astype(int), index=models.index), pd.Series(top, index=models.index)


def best_of_text(orgs: pd.Series, counts: pd.Series, top: pd.Series) -> pd.Series:
    """ "best of N from ORG" on each organisation's best row when it has N ≥ 2 runs (plain text:
    the table shows it as text, never markup)."""
    text = "best of " + counts.astype(str) + " from " + orgs.astype(str)
    return text.where(top & (counts >= 2), "")


# --------------------------------------------------------------------------- one setting's rows

#: The columns :func:`with_view_columns` adds (the export writes them under these names).
KIND_COLUMN, ORG_COLUMN, ORG_RUNS_COLUMN, ORG_BEST_COLUMN = "kind", "org", "org_runs", "org_best"
CUSTOM_COLUMN, CUSTOM_TIER_COLUMN, CUSTOM_RANK_COLUMN = "custom_avg_cps", "custom_tier", "custom_rank"
CUSTOM_TASKS_COLUMN = "custom_tasks"
#: The custom average unrounded (ordering only; never shown or exported).
CUSTOM_SORT = "_custom_sort"
#: Each row's position in its setting's custom average (:meth:`CustomTiers.at`; never shown).
CUSTOM_POSITION = "_custom_position"
VIEW_COLUMNS: tuple[str, ...] = (KIND_COLUMN, ORG_COLUMN, ORG_RUNS_COLUMN, ORG_BEST_COLUMN)
CUSTOM_COLUMNS: tuple[str, ...] = (
    CUSTOM_TASKS_COLUMN,
    CUSTOM_RANK_COLUMN,
    CUSTOM_COLUMN,
    low_column(CUSTOM_COLUMN),
    high_column(CUSTOM_COLUMN),
    CUSTOM_TIER_COLUMN,
)


def _percent(values: Array) -> list[float | None]:
    # numbers.percent of each value, a whole column at once (the same numbers: numbers.percents).
    return percents(values)


def with_view_columns(
    rows: pd.DataFrame,
    loaded: LoadedResults,
    tasks: Sequence[str],
    rank_column: str,
    task_cps: Callable[[Sequence[RunKey]], Array] | None = None,
) -> pd.DataFrame:
    """One setting's ranking rows (``tables.ranking_table`` columns, its rank in ``rank_column``)
    with :data:`VIEW_COLUMNS` and, when ``tasks`` are chosen, :data:`CUSTOM_COLUMNS` (0–100),
    every run's custom tier filled (the export; :func:`view_columns` leaves them to be asked).

    ``task_cps(keys)``: the rows' :func:`task_cps_matrix` over every task, from a caller that
    keeps it (the board, once per setting: every later custom average reuses it)."""
    rows, tiers = view_columns(rows, loaded, tasks, rank_column, task_cps)
    if tiers is not None:
        rows[CUSTOM_TIER_COLUMN] = pd.array(tiers.every(), dtype="Int64")
    return rows.drop(columns=CUSTOM_POSITION, errors="ignore")


def view_columns(
    rows: pd.DataFrame,
    loaded: LoadedResults,
    tasks: Sequence[str],
    rank_column: str,
    task_cps: Callable[[Sequence[RunKey]], Array] | None = None,
) -> tuple[pd.DataFrame, CustomTiers | None]:
    """:func:`with_view_columns` with the custom tiers left to be asked: ``(rows, tiers)``, the
    rows' :data:`CUSTOM_TIER_COLUMN` empty and each row's :data:`CUSTOM_POSITION` the one
    ``tiers.at`` takes (``tiers`` ``None``: no custom average, or every task — whose tiers are the
    ranking's own, filled)."""
    rows = rows.copy(deep=False)  # copy-on-write (pandas 3): the setting's columns shared, not copied
    tasks = chosen_tasks(tasks)
    runs = loaded.runs
    index = pd.MultiIndex.from_frame(rows[list(RUN_KEY)]) if len(rows) else None
    if len(runs) and index is not None:
        chat = runs.set_index(list(RUN_KEY))["chat_template"].reindex(index).to_numpy()
    else:
        chat = np.full(len(rows), None, dtype=object)
    rows[KIND_COLUMN] = model_kind(rows["model_type"], pd.Series(chat, index=rows.index, dtype=object))
    comparable = rows["comparable"].fillna(False).astype(bool)
    rank = rows[rank_column]
    tiers: CustomTiers | None = None
    if tasks == tuple(TASK_IDS):
        # Every task: the custom average is the ranking's mean CPS, whose interval and tier the
        # rows already hold (custom_average computes the same from the same draws: a test pins it).
        rows[CUSTOM_TASKS_COLUMN] = ",".join(tasks)
        rows[CUSTOM_SORT] = rows[MAIN_SCORE_COLUMN].astype(float)
        rows[CUSTOM_COLUMN] = rows[MAIN_SCORE_COLUMN]
        for column in (low_column, high_column):
            rows[column(CUSTOM_COLUMN)] = rows[column(MAIN_SCORE_COLUMN)]
        rows[CUSTOM_TIER_COLUMN] = rows[TIER_COLUMN].astype("Int64")
        rows[CUSTOM_RANK_COLUMN] = rows[rank_column].astype("Int64")
        rank = rows[CUSTOM_RANK_COLUMN]
    elif tasks:
        keys = [(m, r, p, int(k)) for m, r, p, k in rows[list(RUN_KEY)].itertuples(index=False)]
        average = custom_average(
            keys,
            loaded.prompt_scores,
            loaded.uncertainty,
            tasks,
            comparable.tolist(),
            None if task_cps is None else task_cps(keys),
        )
        rows[CUSTOM_TASKS_COLUMN] = ",".join(tasks)
        rows[CUSTOM_SORT] = average.points
        rows[CUSTOM_COLUMN] = _percent(average.points)
        rows[low_column(CUSTOM_COLUMN)] = _percent(average.lows)
        rows[high_column(CUSTOM_COLUMN)] = _percent(average.highs)
        rows[CUSTOM_TIER_COLUMN] = pd.array([None] * len(rows), dtype="Int64")
        rows[CUSTOM_POSITION] = np.arange(len(rows), dtype=np.int64)
        tiers = average.tier_of
        ranked = rows[CUSTOM_SORT].where(comparable)
        rows[CUSTOM_RANK_COLUMN] = ranked.rank(method="min", ascending=False).astype("Int64")
        rank = rows[CUSTOM_RANK_COLUMN]
    rows[ORG_COLUMN] = organisation(rows["model"])
    rows[ORG_RUNS_COLUMN], rows[ORG_BEST_COLUMN] = organisation_counts(rows["model"], rank, comparable)
    return rows, tiers
