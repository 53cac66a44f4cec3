"""Intervals for every score: a paired, item-level bootstrap of prompt scores, CPS and mean CPS.

Track-agnostic and pure (numpy, scipy; no I/O, no UI).  Inputs are :class:`~leaderboard.core.items.TaskItems`
(per item and prompt, the metric's sufficient statistics, ``(n, P, d)``) and a registry of
:class:`~leaderboard.core.metric_kinds.MetricKind`.

The resampling
--------------
* **Items, not datasets, and the same items for every prompt.**  One resample draws ``n``
  items with replacement (each part of a stratified task — Evalita NER's domains — within
  itself, so the parts keep their sizes and their size weights); every prompt of the task is
  scored on those same items, so MaxP, AvgP, Sat = 1 − (MaxP − AvgP) and CPS = Sat · MaxP are
  recomputed per resample from prompt scores that stay paired.
* **Each metric exactly as the harness aggregates it**: a resample is a count vector ``w``
  over items and its score is ``aggregate(w @ S)`` (an F1 over the resampled pairs, not a mean
  of per-item F1s).  All resamples are one matrix product ``W @ S`` with ``W`` ``(B, n)``.
* **Draws fixed by (seed, task, item ids)** (:func:`draw_key`): two runs on the same items get
  the same ``W``.  So every comparison of two runs is paired for free (the difference of their
  resampled scores is the resampled difference), and a run's resampled scores are computed
  once and reused (:class:`RunUncertainty`).  Tasks get independent draws (their keys differ);
  a model's mean CPS per resample is the mean of its tasks' CPS on that resample.
* **Point estimates are the published scores**: the observed items' statistics are summed
  exactly, in document order (:func:`~leaderboard.core.metric_kinds.point_sums`), so a prompt's
  point score equals the harness's to the last bit.
* **Percentile intervals**: the ``(1 − level)/2`` and ``(1 + level)/2`` quantiles of the
  resampled values (``numpy.quantile``, linear interpolation — what
  ``scipy.stats.bootstrap(method="percentile")`` does; scipy's function cannot take the shared
  draws that make comparisons paired, so the resampling is ours and only the quantile is
  left to numpy).

A task without per-item data has no interval (``None``), never a made-up one; a model's mean
CPS has one only when every task has.

Coverage (``tests/uncertainty/test_bootstrap.py``, 1,000 simulated datasets with a known truth):
95 % intervals cover an accuracy 95.8 %, a binary F1 94.6 %, and the CPS of six prompts of
distinct accuracies (0.55…0.72, correlated errors, 400 items) 95.4 % of the time.  A known
limit: when several prompts tie for the best score, MaxP's resampled values are biased upward
(the bootstrap of a maximum at a tie) and the CPS interval under-covers (88.6 % for six prompts
of equal accuracy); prompt scores themselves are unaffected.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from statistics import fmean
from types import MappingProxyType

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
    """A percentile interval ``[low, high]`` at ``level`` (0.95: a 95 % interval)."""

    low: float
    high: float
    level: float


def percentile_intervals(draws: Array, level: float = DEFAULT_LEVEL) -> list[Interval]:
    """The percentile interval of each row of resampled values ``draws`` ``(k, B)``.

    ``scipy.stats.quantile`` at ``(1 − level)/2`` and ``(1 + level)/2``: exactly what
    ``scipy.stats.bootstrap(method="percentile")`` computes from its resampled statistics.
    """
    # Imported here: scipy.stats takes a second to import and the app imports this module
    # while it builds the page (as the tracks' metrics modules do).
    from scipy.stats import quantile

    alpha = (1.0 - level) / 2.0
    bounds = quantile(np.atleast_2d(draws), np.array([alpha, 1.0 - alpha]), axis=-1)
    return [Interval(float(low), float(high), level) for low, high in bounds]


def percentile_interval(draws: Array, level: float = DEFAULT_LEVEL) -> Interval:
    """The percentile interval of resampled values ``draws`` ``(B,)``."""
    return percentile_intervals(np.asarray(draws)[None, :], level)[0]


# --------------------------------------------------------------------------- draws


def draw_key(config: BootstrapConfig, fingerprint: str) -> str:
    """What determines a task's draws: the seed, ``B`` and the item fingerprint (task included)."""
    return hashlib.blake2b(
        f"{config.seed}|{config.n_resamples}|{fingerprint}".encode(), digest_size=16
    ).hexdigest()


@dataclass(frozen=True, eq=False)
class Draws:
    """The resamples of one item set: ``indices`` ``(B, n)`` (each part drawn within itself).

    ``weights`` ``(B, n)`` float32 counts (how often each item is drawn) is what sum-based
    metrics use; ``indices`` what rank statistics (Spearman ρ) use.
    """

    key: str
    indices: NDArray[np.int32]

    @property
    def n_resamples(self) -> int:
        return int(self.indices.shape[0])

    @cached_property
    def weights(self) -> NDArray[np.float32]:
        n = self.indices.shape[1]
        counts = np.empty(self.indices.shape, dtype=np.float32)
        # Row by row: a row's counters stay in cache (one flat bincount is several times slower).
        for b, row in enumerate(self.indices):
            counts[b] = np.bincount(row, minlength=n)
        counts.setflags(write=False)
        return counts

    @cached_property
    def weights64(self) -> NDArray[np.float64]:
        return self.weights.astype(np.float64)


def make_draws(config: BootstrapConfig, fingerprint: str, part_sizes: Sequence[int]) -> Draws:
    """Draw ``B`` resamples of items: part ``k`` (items ``offset_k … offset_k + n_k − 1``) within itself."""
    key = draw_key(config, fingerprint)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(key, 16))))
    blocks, offset = [], 0
    for size in part_sizes:
        blocks.append(rng.integers(0, size, size=(config.n_resamples, size), dtype=np.int32) + offset)
        offset += size
    indices = np.concatenate(blocks, axis=1) if blocks else np.zeros((config.n_resamples, 0), np.int32)
    indices.setflags(write=False)
    return Draws(key, indices)


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
            draws = make_draws(config, items.fingerprint, sizes)
        self._draws[key] = draws  # most recently used last
        while len(self._draws) > self._max:
            self._draws.pop(next(iter(self._draws)))
        return draws


# --------------------------------------------------------------------------- CPS


def cps_of(prompt_scores: Array) -> Array:
    """CPS over the prompt axis (−1): Sat · MaxP with Sat = 1 − (MaxP − AvgP)."""
    maxp = prompt_scores.max(axis=-1)
    avgp = prompt_scores.mean(axis=-1)
    return (1.0 - (maxp - avgp)) * maxp


def cps_point(prompt_scores: Sequence[float]) -> float:
    """CPS of observed prompt scores, with ``leaderboard.scoring``'s operations (fmean for AvgP)."""
    maxp = max(prompt_scores)
    avgp = fmean(prompt_scores)
    return (1.0 - (maxp - avgp)) * maxp


# --------------------------------------------------------------------------- one task


@dataclass(frozen=True, eq=False)
class TaskBootstrap:
    """One run on one task: point scores and their ``B`` resampled values.

    ``prompt_scores`` ``(P,)`` (the published scores), ``prompt_draws`` ``(P, B)``, ``cps``
    and ``cps_draws`` ``(B,)``; ``draws_key`` identifies the resamples (equal keys: paired).
    """

    task: str
    prompts: tuple[str, ...]
    fingerprint: str
    draws_key: str
    n_items: int
    prompt_scores: Array
    prompt_draws: Array
    cps: float
    cps_draws: Array

    def prompt_interval(self, prompt: str, level: float = DEFAULT_LEVEL) -> Interval:
        return percentile_interval(self.prompt_draws[self.prompts.index(prompt)], level)

    def cps_interval(self, level: float = DEFAULT_LEVEL) -> Interval:
        return percentile_interval(self.cps_draws, level)


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
    ``draws`` are those items' resamples.
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
        part_scores.append(kind.aggregate(resampled.reshape(-1, n_runs, n_prompts, width), size))
        part_points.append(kind.aggregate(observed.reshape(n_runs, n_prompts, width), size))
        sizes.append(size)
    scores = combine_parts(part_scores, sizes)  # (B, runs, P)
    points = combine_parts(part_points, sizes)  # (runs, P)
    cps = cps_of(scores)  # (B, runs)
    results = []
    for r, items in enumerate(group):
        prompt_points = [float(x) for x in points[r]]
        results.append(
            TaskBootstrap(
                task=items.task,
                prompts=items.prompts,
                fingerprint=items.fingerprint,
                draws_key=draws.key,
                n_items=n,
                prompt_scores=np.array(prompt_points),
                prompt_draws=np.ascontiguousarray(scores[:, r, :].T),
                cps=cps_point(prompt_points),
                cps_draws=np.ascontiguousarray(cps[:, r]),
            )
        )
    return results


def bootstrap_task(
    items: TaskItems,
    kinds: MetricKinds,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
) -> TaskBootstrap:
    """One run's task: point scores and resampled prompt scores and CPS."""
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

    def mean_cps(self, task_ids: Sequence[str]) -> tuple[float, Array, str] | None:
        """``(point, draws (B,), key)`` of the mean CPS over ``task_ids``; ``None`` if one lacks data.

        The point is ``fmean`` of the tasks' CPS (as ``leaderboard.scoring.overall_score``);
        ``key`` identifies the draws (equal keys: the same resamples of the same items).
        """
        if not task_ids or any(t not in self.tasks for t in task_ids):
            return None
        chosen = [self.tasks[t] for t in task_ids]
        draws = np.mean(np.stack([t.cps_draws for t in chosen]), axis=0)
        key = hashlib.blake2b("|".join(t.draws_key for t in chosen).encode(), digest_size=16).hexdigest()
        return fmean(t.cps for t in chosen), draws, key


def bootstrap_runs(
    runs: Sequence[RunItems],
    kinds: MetricKinds,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
    *,
    batch_columns: int = 2048,
) -> list[RunBootstrap]:
    """Bootstrap many runs at once: runs on the same items of a task share one matrix product.

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
    per_run: list[dict[str, TaskBootstrap]] = [{} for _ in runs]
    for members in groups.values():
        first = members[0][1]
        draws = cache.get(config, first)
        step = max(1, batch_columns // (len(first.prompts) * first.width))
        for start in range(0, len(members), step):
            chunk = members[start : start + step]
            for (r, _), result in zip(
                chunk, bootstrap_task_group([m for _, m in chunk], draws, kinds), strict=True
            ):
                per_run[r][result.task] = result
    return [RunBootstrap(config, tasks) for tasks in per_run]


def bootstrap_run(
    run: RunItems,
    kinds: MetricKinds,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
) -> RunBootstrap:
    """:func:`bootstrap_runs` for one run."""
    return bootstrap_runs([run], kinds, config, cache)[0]


# --------------------------------------------------------------------------- what the app keeps


@dataclass(frozen=True, eq=False)
class RunUncertainty:
    """What a leaderboard keeps per run: every interval, and the mean CPS's draws for tiers.

    ``prompt_intervals[task][prompt]``, ``cps_intervals[task]`` for the tasks with per-item
    data; ``mean_cps``/``mean_cps_interval``/``mean_cps_draws`` (``(B,)``) and ``mean_key``
    (equal keys: paired draws) when every task of the ranking has it, else ``None``.
    A few KB per run (``B`` floats), against ``(P + 1)·B`` per task for a :class:`RunBootstrap`.
    """

    level: float
    prompt_intervals: Mapping[str, Mapping[str, Interval]]
    cps_intervals: Mapping[str, Interval]
    mean_cps: float | None = None
    mean_cps_interval: Interval | None = None
    mean_cps_draws: Array | None = None
    mean_key: str | None = None

    @classmethod
    def of(cls, boot: RunBootstrap, task_ids: Sequence[str]) -> RunUncertainty:
        level = boot.config.level
        mean = boot.mean_cps(task_ids)
        prompt_intervals, cps_intervals = {}, {}
        for t, tb in boot.tasks.items():
            # One quantile call per task: every prompt's draws and the CPS's.
            *prompts, cps = percentile_intervals(np.vstack([tb.prompt_draws, tb.cps_draws]), level)
            prompt_intervals[t] = MappingProxyType(dict(zip(tb.prompts, prompts, strict=True)))
            cps_intervals[t] = cps
        return cls(
            level=level,
            prompt_intervals=MappingProxyType(prompt_intervals),
            cps_intervals=MappingProxyType(cps_intervals),
            mean_cps=None if mean is None else mean[0],
            mean_cps_interval=None if mean is None else percentile_interval(mean[1], level),
            mean_cps_draws=None if mean is None else mean[1],
            mean_key=None if mean is None else mean[2],
        )

    def to_bytes(self) -> bytes:
        """``.npz`` bytes (a JSON header and the draws): what a cache or the store keeps."""

        def pair(i: Interval | None) -> list[float] | None:
            return None if i is None else [i.low, i.high]

        header = {
            "level": self.level,
            "prompt_intervals": {
                t: {p: pair(i) for p, i in ps.items()} for t, ps in self.prompt_intervals.items()
            },
            "cps_intervals": {t: pair(i) for t, i in self.cps_intervals.items()},
            "mean_cps": self.mean_cps,
            "mean_cps_interval": pair(self.mean_cps_interval),
            "mean_key": self.mean_key,
        }
        sink = io.BytesIO()
        arrays = {"header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}
        if self.mean_cps_draws is not None:
            arrays["mean_cps_draws"] = self.mean_cps_draws
        np.savez(sink, **arrays)
        return sink.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> RunUncertainty:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            header = json.loads(npz["header"].tobytes())
            draws = npz.get("mean_cps_draws")
        level = float(header["level"])

        def interval(pair: list[float] | None) -> Interval | None:
            return None if pair is None else Interval(float(pair[0]), float(pair[1]), level)

        return cls(
            level=level,
            prompt_intervals=MappingProxyType(
                {
                    t: MappingProxyType({p: interval(i) for p, i in ps.items()})  # type: ignore[misc]
                    for t, ps in header["prompt_intervals"].items()
                }
            ),
            cps_intervals=MappingProxyType({t: interval(i) for t, i in header["cps_intervals"].items()}),  # type: ignore[misc]
            mean_cps=header["mean_cps"],
            mean_cps_interval=interval(header["mean_cps_interval"]),
            mean_cps_draws=draws,
            mean_key=header["mean_key"],
        )


def uncertainties(
    runs: Iterable[RunItems | None],
    kinds: MetricKinds,
    task_ids: Sequence[str],
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
    *,
    chunk: int = 100,
) -> list[RunUncertainty | None]:
    """:class:`RunUncertainty` per run (``None`` for a run without per-item data).

    Runs are bootstrapped ``chunk`` at a time (a :class:`RunBootstrap` holds ``(P + 1)·B``
    floats per task, a :class:`RunUncertainty` only ``B``), sharing ``cache``'s draws.
    """
    cache = cache or DrawCache()
    runs = list(runs)
    present = [run for run in runs if run is not None and run.tasks]
    kept: list[RunUncertainty] = []
    for start in range(0, len(present), chunk):
        boots = bootstrap_runs(present[start : start + chunk], kinds, config, cache)
        kept += [RunUncertainty.of(boot, task_ids) for boot in boots]
    found = iter(kept)
    return [next(found) if run is not None and run.tasks else None for run in runs]
