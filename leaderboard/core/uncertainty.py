"""The generic bootstrap engine: items, strata, clusters and draws; resampled prompt scores.

Track-agnostic and pure (numpy, scipy; no I/O, no UI).  Inputs are :class:`~leaderboard.core.items.TaskItems`
(per item and prompt, the metric's sufficient statistics, ``(n, P, d)``) and a registry of
:class:`~leaderboard.core.metric_kinds.MetricKind`.  What a track derives from the resampled
prompt scores (a CPS over prompts, a mean over questions, a correlation with people) lives with the
track; so does the choice of interval for a non-smooth figure (a maximum over prompts).

The resampling
--------------
* **Items, not datasets, and the same items for every prompt.**  One resample draws ``n``
  items with replacement (each part of a stratified task — a NER task's text domains — within
  itself, so the parts keep their sizes and their size weights); every prompt of the task is
  scored on those same items, so anything derived from several prompts stays paired.
* **Clusters are drawn whole.**  Items that share a cluster (the questions of one book,
  WiC's pairs of one lemma; :attr:`TaskItems.clusters`) are not independent: a resample draws
  the part's clusters with replacement and takes every item of each (the one-stage cluster
  bootstrap, Davison & Hinkley 1997 §3.8), so the spread between clusters is in the interval.
* **Each metric exactly as the harness aggregates it**: a resample is a count vector ``w``
  over items and its score is ``aggregate(w @ S)`` (an F1 over the resampled pairs, not a mean
  of per-item F1s).  All resamples are one matrix product ``W @ S`` with ``W`` ``(B, n)``.
* **Draws fixed by (seed, task, item ids, clusters)** (:func:`draw_key`): two runs on the same
  items get the same ``W``.  So every comparison of two runs is paired for free (the
  difference of their resampled scores is the resampled difference).
* **Point estimates are the published scores**: the observed items' statistics are summed
  exactly, in document order (:func:`~leaderboard.core.metric_kinds.point_sums`), so a prompt's
  point score equals the harness's to the last bit.
* **Intervals of smooth figures** (a prompt's score, a mean) are percentile intervals: the
  ``(1 − level)/2`` and ``(1 + level)/2`` quantiles of the resampled values.  A figure that is a
  maximum over noisy estimates is not smooth; its track builds reflected, bias-aware draws
  (a track's ``cps_intervals``-like module) and their percentile interval is the
  reflected one.

A task without per-item data has no interval (``None``), never a made-up one.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from leaderboard.core.items import RunItems, TaskItems
from leaderboard.core.metric_kinds import MetricKinds, combine_parts, point_sums

Array = NDArray[np.float64]

#: Default seed of every bootstrap (any fixed value; changing it changes every draw).
DEFAULT_SEED = 20250621
DEFAULT_RESAMPLES = 1000
DEFAULT_LEVEL = 0.95
# float32 sums are exact for integer statistics while every partial sum stays below 2**24.
_FLOAT32_EXACT = 2**24


@dataclass(frozen=True)
class BootstrapConfig:
    """Seed, number of resamples ``B`` and confidence level of every interval."""

    seed: int = DEFAULT_SEED
    n_resamples: int = DEFAULT_RESAMPLES
    level: float = DEFAULT_LEVEL

    def __post_init__(self) -> None:
        if self.n_resamples < 2:
            raise ValueError("a bootstrap needs at least 2 resamples")
        if not 0.0 < self.level < 1.0:
            raise ValueError(f"level {self.level} is not in (0, 1)")


DEFAULT_CONFIG = BootstrapConfig()


@dataclass(frozen=True)
class Interval:
    """An interval ``[low, high]`` at ``level`` (0.95: a 95 % interval)."""

    low: float
    high: float
    level: float


def percentile_intervals(draws: Array, level: float = DEFAULT_LEVEL) -> list[Interval]:
    """The percentile interval of each row of resampled values ``draws`` ``(k, B)``.

    ``scipy.stats.quantile`` at ``(1 − level)/2`` and ``(1 + level)/2``: exactly what
    ``scipy.stats.bootstrap(method="percentile")`` computes from its resampled statistics
    (:func:`percentile_bounds`: the same numbers, bit for bit).
    """
    lows, highs = percentile_bounds(draws, level)
    return [Interval(float(low), float(high), level) for low, high in zip(lows, highs, strict=True)]


def percentile_bounds(draws: Array, level: float = DEFAULT_LEVEL) -> tuple[Array, Array]:
    """The ends of :func:`percentile_intervals` as two float64 arrays ``(k,)``, with numpy alone.

    ``scipy.stats.quantile(draws, [a, 1 − a], axis=-1)`` (its default ``linear`` method, Hyndman
    and Fan's type 7, NaN propagated) computed by its own formula — ``jg = p·n + (1 − p)``,
    ``j = ⌊jg⌋ − 1``, ``g = jg mod 1``, ``(1 − g)·y[j] + g·y[j + 1]`` on the sorted row ``y`` —
    but with the two order statistics it reads found by ``np.partition`` instead of a full sort
    (the same values: a row's k-th smallest is one number), and without importing scipy.stats
    (a second on the first request that asked for an interval).
    ``tests/uncertainty/test_percentile_bounds.py`` checks it equals scipy's bit for bit.
    """
    x = np.atleast_2d(np.asarray(draws, dtype=np.float64))
    rows, n = x.shape[0], x.shape[-1]
    if n == 0:  # scipy: a row of no values is a row of one NaN
        return np.full(rows, np.nan), np.full(rows, np.nan)
    alpha = (1.0 - level) / 2.0
    p = np.array([alpha, 1.0 - alpha])
    size = np.float64(n)
    jg = p * size + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    g[j < 0] = 0
    j = np.clip(j, 0.0, size - 1).astype(np.int64)
    jp1 = np.clip(jp1, 0.0, size - 1).astype(np.int64)
    needed = np.unique(np.concatenate([j, jp1]))
    y = np.partition(x, needed, axis=-1)
    ends = (1 - g) * y[:, j] + g * y[:, jp1]
    nan = np.isnan(x).any(axis=-1)
    if nan.any():
        ends[nan] = np.nan
    return ends[:, 0].copy(), ends[:, 1].copy()


def percentile_interval(draws: Array, level: float = DEFAULT_LEVEL) -> Interval:
    """The percentile interval of resampled values ``draws`` ``(B,)``."""
    return percentile_intervals(np.asarray(draws)[None, :], level)[0]


def standard_error(draws: Array) -> float:
    """The bootstrap standard error of a figure: the standard deviation of its draws."""
    return float(np.std(np.asarray(draws, dtype=np.float64), ddof=1))


# --------------------------------------------------------------------------- draws


def draw_key(config: BootstrapConfig, fingerprint: str) -> str:
    """What determines a task's draws: the seed, ``B`` and the item fingerprint (task included)."""
    return hashlib.blake2b(
        f"{config.seed}|{config.n_resamples}|{fingerprint}".encode(), digest_size=16
    ).hexdigest()


@dataclass(frozen=True, eq=False)
class Draws:
    """The resamples of one item set: ``indices`` ``(B, L)`` into its ``n_items`` items.

    Item draws: ``L = n`` (each part drawn within itself).  Cluster draws: whole clusters are
    drawn with replacement (each part within itself) and a row lists the items of its clusters,
    padded with ``n_items`` (one past the last item) to the longest row.  ``weights`` ``(B, n)``
    float32 counts (how often each item is drawn) is what sum-based metrics use; ``indices``
    what rank statistics (Spearman ρ) use, after appending a missing value at position ``n``.
    """

    key: str
    indices: NDArray[np.int32]
    n_items: int = -1

    def __post_init__(self) -> None:
        if self.n_items < 0:
            object.__setattr__(self, "n_items", int(self.indices.shape[1]))

    @property
    def n_resamples(self) -> int:
        return int(self.indices.shape[0])

    @cached_property
    def weights(self) -> NDArray[np.float32]:
        n = self.n_items
        counts = np.empty((self.indices.shape[0], n), dtype=np.float32)
        # Row by row: a row's counters stay in cache (one flat bincount is several times slower).
        for b, row in enumerate(self.indices):
            counts[b] = np.bincount(row, minlength=n + 1)[:n]
        counts.setflags(write=False)
        return counts

    @cached_property
    def weights64(self) -> NDArray[np.float64]:
        return self.weights.astype(np.float64)


def _cluster_rows(
    rng: np.random.Generator, n_resamples: int, labels: NDArray[np.int64], offset: int
) -> list[NDArray[np.int32]]:
    """One part's cluster resamples: per resample, the items of ``G`` clusters drawn from its ``G``."""
    _, inverse = np.unique(labels, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(int(inverse.max()) + 2))
    members = [(order[a:b] + offset).astype(np.int32) for a, b in itertools.pairwise(bounds)]
    drawn = rng.integers(0, len(members), size=(n_resamples, len(members)))
    return [np.concatenate([members[g] for g in row]) for row in drawn]


def make_draws(
    config: BootstrapConfig,
    fingerprint: str,
    part_sizes: Sequence[int],
    clusters: Sequence[NDArray[np.int64] | None] | None = None,
) -> Draws:
    """Draw ``B`` resamples: part ``k`` (items ``offset_k … offset_k + n_k − 1``) within itself.

    ``clusters[k]``, when given, labels part ``k``'s items by cluster: whole clusters are then
    drawn.  ``fingerprint`` must say which items and clusters (it keys the random stream).
    Without clusters the draws are those of every earlier version of the engine.
    """
    key = draw_key(config, fingerprint)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(key, 16))))
    n_total = int(sum(part_sizes))
    labelled = list(clusters) if clusters is not None else [None] * len(part_sizes)
    if len(labelled) != len(part_sizes):
        raise ValueError(f"{len(labelled)} cluster labellings for {len(part_sizes)} parts")
    if all(labels is None for labels in labelled):
        blocks, offset = [], 0
        for size in part_sizes:
            blocks.append(rng.integers(0, size, size=(config.n_resamples, size), dtype=np.int32) + offset)
            offset += size
        indices = np.concatenate(blocks, axis=1) if blocks else np.zeros((config.n_resamples, 0), np.int32)
    else:
        rows: list[list[NDArray[np.int32]]] = [[] for _ in range(config.n_resamples)]
        offset = 0
        for size, labels in zip(part_sizes, labelled, strict=True):
            if size == 0:
                continue
            if labels is None:
                per_row = list(
                    rng.integers(0, size, size=(config.n_resamples, size), dtype=np.int32) + offset
                )
            else:
                if len(labels) != size:
                    raise ValueError(f"{len(labels)} cluster labels for a part of {size} items")
                per_row = _cluster_rows(rng, config.n_resamples, np.asarray(labels), offset)
            for b, row in enumerate(per_row):
                rows[b].append(row)
            offset += size
        joined = [np.concatenate(r) if r else np.zeros(0, np.int32) for r in rows]
        width = max(len(r) for r in joined)
        indices = np.full((config.n_resamples, width), n_total, dtype=np.int32)
        for b, row in enumerate(joined):
            indices[b, : len(row)] = row
    indices.setflags(write=False)
    return Draws(key, indices, n_total)


class DrawCache:
    """Draws by key, kept for reuse (the same items in every run of a setting, both settings).

    Passed in by the caller (the app keeps one); holds at most ``max_entries`` item sets.
    """

    def __init__(self, max_entries: int = 64) -> None:
        self._max = max_entries
        self._draws: dict[str, Draws] = {}

    def get(self, config: BootstrapConfig, items: TaskItems) -> Draws:
        key = draw_key(config, items.fingerprint)
        draws = self._draws.pop(key, None)
        if draws is None:
            sizes = [s.stop - s.start for s in items.part_slices]
            clusters = None if items.clusters is None else [items.clusters[s] for s in items.part_slices]
            draws = make_draws(config, items.fingerprint, sizes, clusters)
        self._draws[key] = draws  # most recently used last
        while len(self._draws) > self._max:
            self._draws.pop(next(iter(self._draws)))
        return draws


# --------------------------------------------------------------------------- one task


@dataclass(frozen=True, eq=False)
class TaskBootstrap:
    """One run on one task: its prompts' point scores and their ``B`` resampled values.

    ``prompt_scores`` ``(P,)`` (the published scores), ``prompt_draws`` ``(P, B)``;
    ``draws_key`` identifies the resamples (equal keys: paired).
    """

    task: str
    prompts: tuple[str, ...]
    fingerprint: str
    draws_key: str
    n_items: int
    prompt_scores: Array
    prompt_draws: Array

    def prompt_interval(self, prompt: str, level: float = DEFAULT_LEVEL) -> Interval:
        return percentile_interval(self.prompt_draws[self.prompts.index(prompt)], level)


def _part_sums(draws: Draws, block: Array, part: slice) -> tuple[Array, Array]:
    """Resampled sums ``W[:, part] @ block`` ``(B, C)`` and the exact observed sums ``(C,)``.

    ``block`` ``(n_part, C)``.  Integer statistics (counts, 0/1) are summed in float32, which
    is exact for them and twice as fast, and in any order; others in float64, and their
    observed sums left to right (:func:`point_sums`, on a transposed copy so that the running
    sum walks contiguous memory).
    """
    if (
        block.size
        and np.abs(block).max() * block.shape[0] < _FLOAT32_EXACT
        and np.array_equal(block, np.rint(block))
    ):
        resampled = (draws.weights[:, part] @ block.astype(np.float32)).astype(np.float64)
        return resampled, block.sum(axis=0)
    observed = point_sums(np.ascontiguousarray(block.T)[:, :, None])[:, 0]
    return draws.weights64[:, part] @ block, observed


def bootstrap_task_group(group: Sequence[TaskItems], draws: Draws, kinds: MetricKinds) -> list[TaskBootstrap]:
    """Bootstrap several runs' items for one task on the same items (one matrix product per part).

    Every member must have the same task, metric, prompts, parts and items (``fingerprint``);
    ``draws`` are those items' resamples.  With cluster draws a resample's number of items
    varies, and a kind that divides by it (a mean) gets each resample's own count.
    """
    first = group[0]
    for other in group[1:]:
        if (other.fingerprint, other.metric, other.prompts) != (
            first.fingerprint,
            first.metric,
            first.prompts,
        ):
            raise ValueError(f"{first.task}: a group must share items, metric and prompts")
    kind = kinds.get(first.metric)
    n_runs, n_prompts, n, width = len(group), len(first.prompts), first.n_items, first.width
    # (n, runs·P·d): every run's every prompt side by side, one product per part.
    stats = np.concatenate([items.stats.reshape(n, -1) for items in group], axis=1)
    part_scores, part_points, sizes = [], [], []
    for part in first.part_slices:
        size = part.stop - part.start
        if size == 0:
            continue
        resampled, observed = _part_sums(draws, stats[part], part)
        drawn: int | Array = size
        if first.clusters is not None:
            drawn = np.maximum(draws.weights64[:, part].sum(axis=1), 1.0)[:, None, None]
        part_scores.append(kind.aggregate(resampled.reshape(-1, n_runs, n_prompts, width), drawn))  # type: ignore[arg-type]
        part_points.append(kind.aggregate(observed.reshape(n_runs, n_prompts, width), size))
        sizes.append(size)
    scores = combine_parts(part_scores, sizes)  # (B, runs, P)
    points = combine_parts(part_points, sizes)  # (runs, P)
    return [
        TaskBootstrap(
            task=items.task,
            prompts=items.prompts,
            fingerprint=items.fingerprint,
            draws_key=draws.key,
            n_items=n,
            prompt_scores=np.array([float(x) for x in points[r]]),
            prompt_draws=np.ascontiguousarray(scores[:, r, :].T),
        )
        for r, items in enumerate(group)
    ]


def bootstrap_task(
    items: TaskItems,
    kinds: MetricKinds,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
) -> TaskBootstrap:
    """One run's task: point scores and resampled prompt scores."""
    draws = (cache or DrawCache(1)).get(config, items)
    return bootstrap_task_group([items], draws, kinds)[0]


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True, eq=False)
class RunBootstrap:
    """A run's bootstrapped tasks (those with per-item data), by task id."""

    config: BootstrapConfig
    tasks: Mapping[str, TaskBootstrap] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", MappingProxyType(dict(self.tasks)))


R = TypeVar("R")


def grouped_by_items(
    runs: Sequence[RunItems],
    per_group: Callable[[Sequence[TaskItems], Draws, MetricKinds], list[R]],
    kinds: MetricKinds,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
    *,
    batch_columns: int = 2048,
) -> list[dict[str, R]]:
    """``per_group`` over every task's runs that share its items, in batches: per run, by task.

    Runs on the same items of a task share one draw set and one matrix product;
    ``batch_columns`` bounds the columns (runs × prompts × statistics) of one product, which
    bounds memory (``B × batch_columns`` floats).
    """
    cache = cache or DrawCache()
    groups: dict[tuple[str, str, str, tuple[str, ...]], list[tuple[int, TaskItems]]] = {}
    for r, run in enumerate(runs):
        for items in run.tasks.values():
            groups.setdefault((items.task, items.fingerprint, items.metric, items.prompts), []).append(
                (r, items)
            )
    per_run: list[dict[str, R]] = [{} for _ in runs]
    for members in groups.values():
        first = members[0][1]
        draws = cache.get(config, first)
        step = max(1, batch_columns // (len(first.prompts) * first.width))
        for start in range(0, len(members), step):
            chunk = members[start : start + step]
            for (r, items), result in zip(chunk, per_group([m for _, m in chunk], draws, kinds), strict=True):
                per_run[r][items.task] = result
    return per_run


def bootstrap_runs(
    runs: Sequence[RunItems],
    kinds: MetricKinds,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
    *,
    batch_columns: int = 2048,
) -> list[RunBootstrap]:
    """Bootstrap many runs' prompt scores at once (:func:`grouped_by_items`)."""
    per_run = grouped_by_items(runs, bootstrap_task_group, kinds, config, cache, batch_columns=batch_columns)
    return [RunBootstrap(config, tasks) for tasks in per_run]


def bootstrap_run(
    run: RunItems,
    kinds: MetricKinds,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
) -> RunBootstrap:
    """:func:`bootstrap_runs` for one run."""
    return bootstrap_runs([run], kinds, config, cache)[0]


# --------------------------------------------------------------------------- the smallest detectable gap

#: Power of :func:`minimum_detectable_effect` (Miller 2024: 80 %).
DEFAULT_POWER = 0.80


def minimum_detectable_effect(
    se_difference: float, alpha: float = 0.05, power: float = DEFAULT_POWER
) -> float:
    """The smallest true difference a two-sided test at ``alpha`` detects with ``power``.

    ``(z_{1−α/2} + z_{power}) · SE(difference)`` (Miller 2024, "Adding error bars to evals",
    §4): 2.80 × the standard error of the difference at α = 0.05 and 80 % power.
    """
    from scipy.stats import norm  # imported here: see percentile_intervals

    return float((norm.ppf(1.0 - alpha / 2.0) + norm.ppf(power)) * se_difference)
