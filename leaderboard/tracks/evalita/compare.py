"""Is run A better than run B?  Per task ΔCPS with its interval and p-value, the items where
they disagree, and a one-line verdict.  Pure: per-item data in, a frozen result out.

Per task, both runs are scored on the items (and prompts) they **share**, with the same
resamples (the draws of that item set: ``leaderboard.core.uncertainty``), so ΔCPS per resample
is a paired difference.  Each run's CPS has two reflected draw sets (the plain and the
tie-aware centring: ``leaderboard.tracks.evalita.cps_intervals``); ΔCPS's interval is the union
of the four pairings' percentile intervals, and its p-value the bias-aware paired test of
``leaderboard.core.tiers`` (different only if every centring says so).  The tasks' p-values
are Holm-adjusted over the tasks compared; a task's verdict is "A better" or "B better" when
its adjusted p-value is ≤ ``alpha``, else "no difference".  With every requested task
compared, the mean CPS gets the same treatment (its own test, not adjusted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import fmean

import numpy as np
from numpy.typing import NDArray

from leaderboard.core.items import ItemId, RunItems, TaskItems
from leaderboard.core.metric_kinds import MetricKinds
from leaderboard.core.tiers import DEFAULT_ALPHA, holm, paired_test
from leaderboard.core.uncertainty import (
    DEFAULT_CONFIG,
    BootstrapConfig,
    DrawCache,
    Interval,
    percentile_intervals,
)
from leaderboard.tracks.evalita.cps_intervals import cps_task_group

Array = NDArray[np.float64]


def difference_interval(a: tuple[Array, Array], b: tuple[Array, Array], level: float) -> Interval:
    """The union of the percentile intervals of ``a_i − b_j`` over both runs' two draw sets."""
    pairings = np.vstack([x - y for x in a for y in b])
    found = percentile_intervals(pairings, level)
    return Interval(min(i.low for i in found), max(i.high for i in found), level)


class Verdict(StrEnum):
    A_BETTER = "A better"
    B_BETTER = "B better"
    NO_DIFFERENCE = "no difference"


@dataclass(frozen=True)
class PromptDisagreement:
    """The shared items on which the two runs' per-item statistics differ under one prompt
    (a different answer: for multiple choice, a different choice)."""

    prompt: str
    items: tuple[ItemId, ...]


@dataclass(frozen=True)
class TaskComparison:
    """One task: CPS of A and B on their shared items, ΔCPS = A − B, its interval and p-values."""

    task: str
    n_items: int
    cps_a: float
    cps_b: float
    delta: float
    interval: Interval
    p_value: float
    p_holm: float
    verdict: Verdict
    disagreements: tuple[PromptDisagreement, ...]


@dataclass(frozen=True)
class MeanComparison:
    """The mean CPS over the tasks compared: Δ = A − B, its interval, p-value and verdict."""

    delta: float
    interval: Interval
    p_value: float
    verdict: Verdict


@dataclass(frozen=True)
class Comparison:
    """A vs B: ``tasks`` compared (in the requested order), ``missing`` tasks (no per-item data
    or no shared item on one side), ``mean`` when nothing is missing."""

    a_label: str
    b_label: str
    tasks: tuple[TaskComparison, ...]
    missing: tuple[str, ...]
    mean: MeanComparison | None

    @property
    def summary(self) -> str:
        """One line: "A better on 3 tasks, no difference on 6, B better on 1"."""
        count = {v: sum(t.verdict is v for t in self.tasks) for v in Verdict}

        def tasks(n: int) -> str:
            return f"{n} task" if n == 1 else f"{n} tasks"

        line = (
            f"{self.a_label} better on {tasks(count[Verdict.A_BETTER])}, "
            f"no difference on {count[Verdict.NO_DIFFERENCE]}, "
            f"{self.b_label} better on {count[Verdict.B_BETTER]}"
        )
        if self.missing:
            line += f" ({len(self.missing)} not compared: no per-item data)"
        return line


def _shared(a: TaskItems, b: TaskItems) -> tuple[TaskItems, TaskItems] | None:
    """Both tasks restricted to their common prompts and items (``None``: nothing in common)."""
    if a.metric != b.metric or a.parts != b.parts:
        return None
    prompts = [p for p in a.prompts if p in b.prompts]
    if not prompts:
        return None
    if a.fingerprint == b.fingerprint and list(a.prompts) == prompts == list(b.prompts):
        return a, b
    _, in_a, in_b = np.intersect1d(a.keys(), b.keys(), assume_unique=True, return_indices=True)
    if in_a.size == 0:
        return None
    keep_a = np.zeros(a.n_items, bool)
    keep_a[in_a] = True
    keep_b = np.zeros(b.n_items, bool)
    keep_b[in_b] = True
    return a.restricted(keep_a, prompts), b.restricted(keep_b, prompts)


def _verdict(sign: int, significant: bool) -> Verdict:
    """From the test's sign (the bias-corrected difference's, which may differ from the point's)."""
    if not significant or sign == 0:
        return Verdict.NO_DIFFERENCE
    return Verdict.A_BETTER if sign > 0 else Verdict.B_BETTER


def compare_runs(
    a: RunItems,
    b: RunItems,
    kinds: MetricKinds,
    task_ids: Sequence[str],
    *,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
    alpha: float = DEFAULT_ALPHA,
    a_label: str = "A",
    b_label: str = "B",
) -> Comparison:
    """Compare run ``a`` with run ``b`` on ``task_ids`` (module docstring)."""
    cache = cache or DrawCache()
    compared, missing = [], []
    for task_id in task_ids:
        pair = None
        if task_id in a.tasks and task_id in b.tasks:
            pair = _shared(a.tasks[task_id], b.tasks[task_id])
        if pair is None:
            missing.append(task_id)
            continue
        ia, ib = pair
        boot_a, boot_b = cps_task_group([ia, ib], cache.get(config, ia), kinds)
        draws = ((boot_a.reflected, boot_a.tie_aware), (boot_b.reflected, boot_b.tie_aware))
        delta = boot_a.cps - boot_b.cps
        differs = np.any(ia.stats != ib.stats, axis=-1)  # (n, P)
        disagreements = tuple(
            PromptDisagreement(prompt, ia.item_ids(differs[:, p])) for p, prompt in enumerate(ia.prompts)
        )
        compared.append((task_id, ia.n_items, boot_a.cps, boot_b.cps, delta, draws, disagreements))
    tests = [paired_test(c[5][0][0], c[5][1][0], c[5][0][1], c[5][1][1]) for c in compared]
    p_values = [p for p, _ in tests]
    adjusted = holm(np.array(p_values))
    tasks = tuple(
        TaskComparison(
            task=task_id,
            n_items=n,
            cps_a=cps_a,
            cps_b=cps_b,
            delta=delta,
            interval=difference_interval(*draws, config.level),
            p_value=p,
            p_holm=float(p_adj),
            verdict=_verdict(sign, p_adj <= alpha),
            disagreements=disagreements,
        )
        for (task_id, n, cps_a, cps_b, delta, draws, disagreements), (p, sign), p_adj in zip(
            compared, tests, adjusted, strict=True
        )
    )
    mean = None
    if compared and not missing:
        mean_delta = fmean(c[2] for c in compared) - fmean(c[3] for c in compared)

        def averaged(side: int, which: int) -> Array:
            return np.mean(np.stack([c[5][side][which] for c in compared]), axis=0)

        a_mean, b_mean = (averaged(0, 0), averaged(0, 1)), (averaged(1, 0), averaged(1, 1))
        p, sign = paired_test(a_mean[0], b_mean[0], a_mean[1], b_mean[1])
        mean = MeanComparison(
            mean_delta, difference_interval(a_mean, b_mean, config.level), p, _verdict(sign, p <= alpha)
        )
    return Comparison(a_label, b_label, tasks, tuple(missing), mean)
