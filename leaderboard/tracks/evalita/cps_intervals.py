"""CPS, mean CPS and their intervals, calibrated where the prompts tie.

The estimand
------------
A model's CPS on a task is Sat · MaxP of its **population** prompt scores — the scores each
prompt would get on the whole population of items the test set was drawn from; its mean CPS
is the mean of those over the ten tasks.  The published figure is the plug-in estimate from
the test set's items.

Why a plain bootstrap fails here
--------------------------------
MaxP is a maximum of noisy prompt scores, so it is biased upwards exactly when prompts are
close: with six tied prompts the observed best prompt is the luckiest one.  A bootstrap
resample adds the same luck a second time, so the percentile interval sits higher still; and
the mean CPS adds ten tasks' biases while its spread shrinks, so the bias dominates (a
simulation with a known truth: 36 % coverage with tied prompts).  Two estimates of the bias
bracket the truth:

* **reflected** (the "basic" bootstrap): ``θ̂ − (θ* − θ̂)``.  It removes the bias the observed
  prompt gaps imply — right when the prompts are far apart, too little at a tie (the observed
  gaps are wider than the true ones).
* **tie-aware**: the prompt scores are first shrunk towards their mean by the share of their
  spread that noise explains (positive-part James–Stein on the prompt axis:
  ``λ = max(0, 1 − k·v/s²)``, ``s²`` the prompts' observed variance, ``v`` the part of it the
  bootstrap attributes to noise, ``k`` = :data:`TIE_SHRINK`), and MaxP's deviation is taken
  from those: ``max(μ̃ + δ*) − max(μ̃)``.  Prompts that noise cannot tell apart count as
  tied, and their max gets a tie's bias — right at a tie, too much when they are merely close.

The interval is the **union** of the two reflected percentile intervals (a bias-aware
interval: the truth's bias lies between the two estimates), and a paired test calls two runs
different only if every centring between the two says so
(:func:`leaderboard.core.tiers.bias_aware_p_values`).  The point shown stays the published
score; the interval may sit below it when prompts tie, because the published MaxP overstates
the best prompt there.

Chosen by simulation (``bench/bench_calibration.py``, 10 tasks × 500 items × 6 prompts, items
correlated across prompts): the figures are in the README and the About page.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from leaderboard.core.items import RunItems, TaskItems
from leaderboard.core.metric_kinds import MetricKinds
from leaderboard.core.uncertainty import (
    DEFAULT_CONFIG,
    DEFAULT_LEVEL,
    BootstrapConfig,
    DrawCache,
    Draws,
    Interval,
    TaskBootstrap,
    bootstrap_task_group,
    grouped_by_items,
    percentile_intervals,
)
from leaderboard.tracks.evalita.metrics import cps_formula

Array = NDArray[np.float64]

#: The shrinkage factor ``k`` of the tie-aware centring (module docstring), chosen by
#: simulation among 0.5…3: the smallest that keeps the tied case's coverage ≥ 93 %.
TIE_SHRINK = 1.5
#: How many of a task CPS's resamples a results file keeps (the first ones: a mean over any subset
#: of tasks is then resampled with the same indices, paired across runs as the mean CPS is).
#: Fewer than the mean CPS's 1,000: each task's two draw sets cost a results file 4/3 × 8 bytes
#: per resample (200: 21 KB for the ten tasks, against 107 KB for all 1,000) and the app as much
#: memory per run; 200 resamples put a percentile interval's ends within about 0.2 standard errors
#: (Monte Carlo), which the About page states for the custom average.
TASK_DRAWS_KEPT = 200
#: What the draws of this module mean (reflected, with a tie-aware twin): part of every key,
#: so draws of an earlier method are never paired with these.
METHOD_VERSION = "cps-reflected-tie-aware/2"


def cps_point(prompt_scores: Sequence[float]) -> float:
    """CPS of observed prompt scores, as the published one (``fmean`` for AvgP)."""
    return float(cps_formula(max(prompt_scores), fmean(prompt_scores)))


def tie_shrunk(points: Array, deviations: Array, k: float = TIE_SHRINK) -> Array:
    """Prompt scores ``(…, P)`` shrunk towards their mean by the share noise explains.

    ``deviations`` ``(…, B, P)`` are the resampled minus the observed scores.  ``v`` is the
    bootstrap's estimate of how much of the prompts' observed variance is noise:
    ``E*[Σ_p (δ_p − δ̄)²] / (P − 1)``; ``λ = clip(1 − k·v/s², 0, 1)``.
    """
    n_prompts = points.shape[-1]
    if n_prompts < 2:
        return points
    mean = points.mean(axis=-1, keepdims=True)
    spread = ((points - mean) ** 2).sum(axis=-1) / (n_prompts - 1)
    centred = deviations - deviations.mean(axis=-1, keepdims=True)
    noise = (centred**2).sum(axis=-1).mean(axis=-1) / (n_prompts - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = np.clip(1.0 - k * noise / spread, 0.0, 1.0)
    keep = np.where(spread > 0, keep, 0.0)
    return mean + keep[..., None] * (points - mean)


def reflected_cps_draws(points: Array, draws: Array, k: float = TIE_SHRINK) -> tuple[Array, Array, Array]:
    """``(cps (…,), reflected (…, B), tie_aware (…, B))`` from prompt scores and their draws.

    ``points`` ``(…, P)`` observed, ``draws`` ``(…, B, P)`` resampled prompt scores (paired
    across prompts).  Both draw sets are reflected, ``θ̂ − (θ* − θ̂)``, so their mean is a
    bias-corrected estimate and their percentile interval the reflected ("basic") one.
    """
    maxp, avgp = points.max(axis=-1), points.mean(axis=-1)
    cps = cps_formula(maxp, avgp)
    deviations = draws - points[..., None, :]
    avg_star = avgp[..., None] + deviations.mean(axis=-1)
    plain = cps_formula(draws.max(axis=-1), avg_star)
    shrunk = tie_shrunk(points, deviations, k)
    max_star = (
        maxp[..., None] + (shrunk[..., None, :] + deviations).max(axis=-1) - shrunk.max(axis=-1)[..., None]
    )
    tied = cps_formula(max_star, avg_star)
    return cps, 2.0 * cps[..., None] - plain, 2.0 * cps[..., None] - tied


def bias_aware_interval(reflected: Array, tie_aware: Array, level: float = DEFAULT_LEVEL) -> Interval:
    """The union of the two draw sets' percentile intervals (module docstring)."""
    plain, tied = percentile_intervals(np.vstack([reflected, tie_aware]), level)
    return Interval(min(plain.low, tied.low), max(plain.high, tied.high), level)


# --------------------------------------------------------------------------- one task


@dataclass(frozen=True, eq=False)
class TaskCPS:
    """One run on one task: prompt scores and CPS with their resampled values.

    ``bootstrap`` holds the prompts' points and draws; ``cps`` is the published CPS;
    ``reflected`` and ``tie_aware`` ``(B,)`` its two draw sets (module docstring).
    """

    bootstrap: TaskBootstrap
    cps: float
    reflected: Array
    tie_aware: Array
    n_clusters: int | None = None

    @property
    def task(self) -> str:
        return self.bootstrap.task

    @property
    def prompts(self) -> tuple[str, ...]:
        return self.bootstrap.prompts

    @property
    def draws_key(self) -> str:
        return self.bootstrap.draws_key

    @property
    def n_items(self) -> int:
        return self.bootstrap.n_items

    @property
    def prompt_scores(self) -> Array:
        return self.bootstrap.prompt_scores

    @property
    def prompt_draws(self) -> Array:
        return self.bootstrap.prompt_draws

    def prompt_interval(self, prompt: str, level: float = DEFAULT_LEVEL) -> Interval:
        return self.bootstrap.prompt_interval(prompt, level)

    def cps_interval(self, level: float = DEFAULT_LEVEL) -> Interval:
        return bias_aware_interval(self.reflected, self.tie_aware, level)


def cps_task_group(group: Sequence[TaskItems], draws: Draws, kinds: MetricKinds) -> list[TaskCPS]:
    """:func:`~leaderboard.core.uncertainty.bootstrap_task_group`, then each run's CPS draws."""
    boots = bootstrap_task_group(group, draws, kinds)
    points = np.stack([b.prompt_scores for b in boots])  # (runs, P)
    resampled = np.stack([b.prompt_draws.T for b in boots])  # (runs, B, P)
    _, reflected, tie_aware = reflected_cps_draws(points, resampled)
    return [
        TaskCPS(
            boot,
            cps_point(boot.prompt_scores.tolist()),
            np.ascontiguousarray(reflected[r]),
            np.ascontiguousarray(tie_aware[r]),
            items.n_clusters,
        )
        for r, (boot, items) in enumerate(zip(boots, group, strict=True))
    ]


def cps_task(
    items: TaskItems,
    kinds: MetricKinds,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
) -> TaskCPS:
    """One run's task: prompt scores and CPS with their draws."""
    return cps_task_group([items], (cache or DrawCache(1)).get(config, items), kinds)[0]


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class MeanCPS:
    """The mean CPS over some tasks: published point, both draw sets ``(B,)`` and their key."""

    point: float
    reflected: Array
    tie_aware: Array
    key: str

    def interval(self, level: float = DEFAULT_LEVEL) -> Interval:
        return bias_aware_interval(self.reflected, self.tie_aware, level)


@dataclass(frozen=True, eq=False)
class RunCPS:
    """A run's tasks with per-item data, by task id."""

    config: BootstrapConfig
    tasks: Mapping[str, TaskCPS] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", MappingProxyType(dict(self.tasks)))

    def mean_cps(self, task_ids: Sequence[str]) -> MeanCPS | None:
        """The mean CPS over ``task_ids``; ``None`` if one of them lacks per-item data.

        Tasks have independent draws, so a resample of the mean is the mean of the tasks'
        resamples; the point is ``fmean`` of the published CPS (as the ranking's).
        """
        if not task_ids or any(t not in self.tasks for t in task_ids):
            return None
        chosen = [self.tasks[t] for t in task_ids]
        return MeanCPS(
            fmean(t.cps for t in chosen),
            np.mean(np.stack([t.reflected for t in chosen]), axis=0),
            np.mean(np.stack([t.tie_aware for t in chosen]), axis=0),
            mean_draws_key(t.draws_key for t in chosen),
        )


def mean_draws_key(task_keys: Iterable[str]) -> str:
    """The draws key of a mean CPS over tasks whose draws have ``task_keys`` (in task order).

    Equal keys: paired draws.  The ranking's mean CPS and a custom average over the same tasks
    (``app/views/subsets``) get the same key, so their draws and tiers are comparable.
    """
    return hashlib.blake2b("|".join([METHOD_VERSION, *task_keys]).encode(), digest_size=16).hexdigest()


def cps_runs(
    runs: Sequence[RunItems],
    kinds: MetricKinds,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
    *,
    batch_columns: int = 2048,
) -> list[RunCPS]:
    """Many runs at once: runs on the same items of a task share one matrix product."""
    per_run = grouped_by_items(runs, cps_task_group, kinds, config, cache, batch_columns=batch_columns)
    return [RunCPS(config, tasks) for tasks in per_run]


def cps_run(
    run: RunItems,
    kinds: MetricKinds,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
) -> RunCPS:
    """:func:`cps_runs` for one run."""
    return cps_runs([run], kinds, config, cache)[0]


# --------------------------------------------------------------------------- what the app keeps


@dataclass(frozen=True, eq=False)
class RunUncertainty:
    """What a leaderboard keeps per run: every interval, and the mean CPS's draws for tiers.

    ``prompt_intervals[task][prompt]``, ``cps_intervals[task]`` for the tasks with per-item
    data; ``mean_cps``/``mean_cps_interval``, the two draw sets ``mean_cps_draws`` and
    ``mean_cps_tie_draws`` (``(B,)``) and ``mean_key`` (equal keys: paired draws) when every
    task of the ranking has data, else ``None``.
    """

    level: float
    prompt_intervals: Mapping[str, Mapping[str, Interval]]
    cps_intervals: Mapping[str, Interval]
    mean_cps: float | None = None
    mean_cps_interval: Interval | None = None
    mean_cps_draws: Array | None = None
    mean_cps_tie_draws: Array | None = None
    mean_key: str | None = None
    #: Per task: its draws key and its CPS's two draw sets, the first :data:`TASK_DRAWS_KEPT`
    #: resamples as float32 (what a file keeps), so that a mean over any subset of tasks can be
    #: resampled again (a custom average).
    cps_draws: Mapping[str, tuple[str, NDArray[np.float32], NDArray[np.float32]]] = field(
        default_factory=dict
    )

    @classmethod
    def of(cls, run: RunCPS, task_ids: Sequence[str]) -> RunUncertainty:
        level = run.config.level
        mean = run.mean_cps(task_ids)
        prompt_intervals, cps_intervals = {}, {}
        for t, task in run.tasks.items():
            prompts = percentile_intervals(task.prompt_draws, level)  # one quantile call per task
            prompt_intervals[t] = MappingProxyType(dict(zip(task.prompts, prompts, strict=True)))
            cps_intervals[t] = task.cps_interval(level)
        return cls(
            level=level,
            prompt_intervals=MappingProxyType(prompt_intervals),
            cps_intervals=MappingProxyType(cps_intervals),
            mean_cps=None if mean is None else mean.point,
            mean_cps_interval=None if mean is None else mean.interval(level),
            mean_cps_draws=None if mean is None else mean.reflected,
            mean_cps_tie_draws=None if mean is None else mean.tie_aware,
            mean_key=None if mean is None else mean.key,
            cps_draws=MappingProxyType(
                {
                    t: (
                        task.draws_key,
                        task.reflected[:TASK_DRAWS_KEPT].astype(np.float32),
                        task.tie_aware[:TASK_DRAWS_KEPT].astype(np.float32),
                    )
                    for t, task in run.tasks.items()
                }
            ),
        )

    def to_bytes(self) -> bytes:
        """``.npz`` bytes (a JSON header and the draws): what a cache keeps."""

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
            "cps_draws_keys": {t: key for t, (key, _, _) in self.cps_draws.items()},
        }
        sink = io.BytesIO()
        arrays = {"header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}
        if self.mean_cps_draws is not None and self.mean_cps_tie_draws is not None:
            arrays["mean_cps_draws"] = self.mean_cps_draws
            arrays["mean_cps_tie_draws"] = self.mean_cps_tie_draws
        for t, (_, reflected, tie_aware) in self.cps_draws.items():
            arrays[f"cps__{t}"], arrays[f"cps_tie__{t}"] = reflected, tie_aware
        np.savez(sink, **arrays)
        return sink.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> RunUncertainty:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            header = json.loads(npz["header"].tobytes())
            draws = npz.get("mean_cps_draws")
            tie_draws = npz.get("mean_cps_tie_draws")
            cps_draws = {
                t: (key, npz[f"cps__{t}"], npz[f"cps_tie__{t}"])
                for t, key in header.get("cps_draws_keys", {}).items()
            }
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
            mean_cps_tie_draws=tie_draws,
            mean_key=header["mean_key"],
            cps_draws=MappingProxyType(cps_draws),
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

    Runs are bootstrapped ``chunk`` at a time (a :class:`RunCPS` holds ``(P + 2)·B`` floats
    per task, a :class:`RunUncertainty` only ``2·B`` and ``2·TASK_DRAWS_KEPT`` per task), sharing ``cache``'s draws.
    """
    cache = cache or DrawCache()
    runs = list(runs)
    present = [run for run in runs if run is not None and run.tasks]
    kept: list[RunUncertainty] = []
    for start in range(0, len(present), chunk):
        boots = cps_runs(present[start : start + chunk], kinds, config, cache)
        kept += [RunUncertainty.of(boot, task_ids) for boot in boots]
    found = iter(kept)
    return [next(found) if run is not None and run.tasks else None for run in runs]
