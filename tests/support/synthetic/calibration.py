"""Simulated runs with a known truth, fed through the project's own functions: do the intervals
cover and the paired tests hold their error rate?

One **cell** of the grid is (prompt structure, cluster effect, metric).  Per cell, ``replicates``
independent test sets of ``n_tasks`` tasks × ``n_items`` items are drawn; each item has a latent
``z ~ N(0, 1)`` per prompt, correlated across prompts (``PROMPT_CORRELATION``) and, within a
cluster of ``CLUSTER_SIZE`` items, across items (the cluster's share of the variance:
``CLUSTER_SHARES``).  A prompt's *skill* ``s`` turns the latent into the metric's per-item
statistics so that the population score is known in closed form:

* ``accuracy``: correct iff ``z < Φ⁻¹(s)`` — population accuracy ``s``;
* ``rouge``: a continuous score ``Φ(z + √2·Φ⁻¹(s))`` in (0, 1) — population mean ``s``;
* ``f1-macro``: a binary label, predicted right iff ``z < Φ⁻¹(s)`` — population macro-F1 from
  the confusion rates (labels 40/60);
* ``ner``: five tokens per item over PER/LOC/ORG/O, each right iff its ``z < Φ⁻¹(s)``, a wrong
  one another label at random — Evalita's NER F1 (per-label F1 but O's, averaged) from rates.

The intervals are the project's (:func:`leaderboard.tracks.evalita.cps_intervals.cps_task_group`
on the draws of :class:`leaderboard.core.uncertainty.DrawCache`, clusters declared in the
items); the tests are the project's (:func:`leaderboard.core.tiers.paired_test`).  The type-I
pairs are two runs of **equal true CPS** and different prompt structure on the same items.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq
from scipy.stats import norm

from leaderboard.core.items import TaskItems
from leaderboard.core.tiers import paired_test
from leaderboard.core.uncertainty import BootstrapConfig, DrawCache
from leaderboard.tracks.evalita.cps_intervals import bias_aware_interval, cps_task_group
from leaderboard.tracks.evalita.metrics import cps_formula
from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS

Array = NDArray[np.float64]

PROMPT_CORRELATION = 0.5
CLUSTER_SIZE = 10
CLUSTER_SHARES = {"none": 0.0, "moderate": 0.15, "strong": 0.35}
#: Prompt skills: far apart, within a few points (the issue's 1-point steps), tied.
STRUCTURES: dict[str, tuple[float, ...]] = {
    "distinct": (0.50, 0.56, 0.62, 0.68, 0.74, 0.80),
    "near-tie": (0.60, 0.61, 0.62, 0.63, 0.64, 0.65),
    "tied": (0.65,) * 6,
}
#: The type-I pairs' reference: one dominant prompt and five close ones (the issue's case).
DOMINANT = (0.70, 0.61, 0.61, 0.61, 0.61, 0.61)
METRICS = ("accuracy", "f1-macro", "ner", "rouge")
_POSITIVE = 0.4  # f1-macro: share of label 1
_NER_LABELS = np.array([0.25, 0.2, 0.15, 0.4])  # PER, LOC, ORG, O
_NER_TOKENS = 5


# --------------------------------------------------------------------------- the truth


def population_score(metric: str, skill: float) -> float:
    """A prompt's population score for its skill (module docstring)."""
    if metric in ("accuracy", "rouge"):
        return skill
    if metric == "f1-macro":
        f1 = []
        for share in (1 - _POSITIVE, _POSITIVE):
            tp, fn, fp = share * skill, share * (1 - skill), (1 - share) * (1 - skill)
            f1.append(2 * tp / (2 * tp + fp + fn))
        return float(np.mean(f1))
    if metric == "ner":
        g = _NER_LABELS
        k = len(g)
        f1 = []
        for label in range(k - 1):  # "O" (the highest label) is dropped, as _aggreg_ner does
            tp = g[label] * skill
            fn = g[label] * (1 - skill)
            fp = sum(g[j] * (1 - skill) / (k - 1) for j in range(k) if j != label)
            f1.append(2 * tp / (2 * tp + fp + fn))
        return float(np.mean(f1))
    raise ValueError(metric)


def true_cps(metric: str, skills: Sequence[float]) -> float:
    scores = [population_score(metric, s) for s in skills]
    return float(cps_formula(max(scores), float(np.mean(scores))))


def matched(metric: str, skills: Sequence[float], target: float) -> tuple[float, ...]:
    """``skills`` shifted by one constant so that their true CPS equals ``target``."""
    shift = brentq(lambda c: true_cps(metric, [s + c for s in skills]) - target, -0.3, 0.3)
    return tuple(s + shift for s in skills)


# --------------------------------------------------------------------------- simulated items


def _shared(rng: np.random.Generator, n: int, reps: int, share: float) -> Array:
    """``(n, reps, 1)``: the part of each item's latent that every prompt and run shares."""
    n_clusters = math.ceil(n / CLUSTER_SIZE)
    cluster = np.repeat(rng.standard_normal((n_clusters, reps, 1)), CLUSTER_SIZE, axis=0)[:n]
    return math.sqrt(share) * cluster + math.sqrt(PROMPT_CORRELATION - share) * rng.standard_normal(
        (n, reps, 1)
    )


def _latent(rng: np.random.Generator, shared: Array, prompts: int) -> Array:
    """``(n, reps, prompts)`` standard normal latents around the shared part."""
    n, reps, _ = shared.shape
    return shared + math.sqrt(1 - PROMPT_CORRELATION) * rng.standard_normal((n, reps, prompts))


def _stats(metric: str, rng: np.random.Generator, latent: Array, skills: Sequence[float]) -> Array:
    """``(reps, n, P, d)`` per-item statistics of ``metric`` from latents ``(n, reps, P)``."""
    threshold = norm.ppf(np.asarray(skills))
    z = np.moveaxis(latent, 1, 0)  # (reps, n, P)
    if metric == "accuracy":
        return (z < threshold).astype(np.float64)[..., None]
    if metric == "rouge":
        return norm.cdf(z + math.sqrt(2.0) * threshold)[..., None]
    right = z < threshold
    if metric == "f1-macro":
        gold = (rng.random(z.shape[:2]) < _POSITIVE).astype(np.int64)[..., None]  # per item
        pred = np.where(right, gold, 1 - gold)
        out = np.zeros((*z.shape, 4))
        for label in (0, 1):
            out[..., label] = (gold == label) & (pred == label)
            out[..., 2 + label] = (gold == label).astype(float) + (pred == label)
        return out
    if metric == "ner":
        k = len(_NER_LABELS)
        out = np.zeros((*z.shape, 2 * k))
        for _ in range(_NER_TOKENS):  # each token: its own right/wrong draw around the item's latent
            token_right = (z + 0.5 * rng.standard_normal(z.shape)) < norm.ppf(np.asarray(skills)) * math.sqrt(
                1.25
            )
            gold = rng.choice(k, size=z.shape[:2], p=_NER_LABELS)[..., None]
            other = (gold + rng.integers(1, k, size=z.shape)) % k
            pred = np.where(token_right, gold, other)
            for label in range(k):
                out[..., label] += (gold == label) & (pred == label)
                out[..., k + label] += (gold == label).astype(float) + (pred == label)
        return out
    raise ValueError(metric)


_KIND = {"accuracy": "mean", "rouge": "mean", "f1-macro": "f1_macro", "ner": "evalita_ner"}


def _items(task: str, metric: str, stats: Array, clusters: NDArray[np.int64] | None) -> TaskItems:
    n, prompts = stats.shape[0], stats.shape[1]
    return TaskItems(
        task=task,
        metric=_KIND[metric],
        labels=(),
        prompts=tuple(f"p{i + 1}" for i in range(prompts)),
        parts=("",),
        part_index=np.zeros(n, np.int16),
        doc_ids=np.arange(n, dtype=np.int64),
        stats=stats,
        clusters=clusters,
        cluster_names=tuple(f"c{i}" for i in range(int(clusters.max()) + 1)) if clusters is not None else (),
    )


# --------------------------------------------------------------------------- one cell


@dataclass(frozen=True)
class CellResult:
    """Coverage of the 95 % intervals (first prompt, task CPS, mean CPS) and the type-I rates
    of the paired tests (per task and on the mean), each with ``replicates`` trials."""

    structure: str
    clusters: str
    metric: str
    replicates: int
    prompt: float
    task_cps: float
    mean_cps: float
    type1_task: float
    type1_mean: float

    @staticmethod
    def mc_error(rate: float, trials: int) -> float:
        """Monte Carlo standard error of a rate estimated from ``trials``."""
        return math.sqrt(max(rate * (1 - rate), 0.0025 * 0.975) / trials)


def simulate_cell(
    structure: str,
    clusters: str,
    metric: str,
    *,
    replicates: int,
    n_items: int,
    n_tasks: int,
    config: BootstrapConfig,
    seed: int,
) -> CellResult:
    """One cell: coverage of each figure and the type-I error of each paired test."""
    rng = np.random.default_rng(seed)
    share = CLUSTER_SHARES[clusters]
    skills = STRUCTURES[structure]
    truth_prompt = population_score(metric, skills[0])
    truth_cps = true_cps(metric, skills)
    # The type-I partner: one dominant prompt, shifted to the same true CPS.
    partner = matched(metric, DOMINANT, truth_cps)
    labels = np.arange(n_items, dtype=np.int64) // CLUSTER_SIZE if share > 0 else None
    cache = DrawCache()
    covered_prompt = covered_cps = 0
    rejected_task = 0
    mean_a = np.zeros((replicates, config.n_resamples, 2))  # reflected, tie-aware
    mean_b = np.zeros_like(mean_a)
    mean_point = np.zeros(replicates)
    for t in range(n_tasks):
        shared = _shared(rng, n_items, replicates, share)  # item difficulty, common to both runs
        a = _stats(metric, rng, _latent(rng, shared, len(skills)), skills)
        b = _stats(metric, rng, _latent(rng, shared, len(partner)), partner)
        runs_a = [_items(f"t{t}", metric, a[r], labels) for r in range(replicates)]
        runs_b = [_items(f"t{t}", metric, b[r], labels) for r in range(replicates)]
        draws = cache.get(config, runs_a[0])
        step = max(1, 2048 // (len(skills) * a.shape[-1]))
        results_a, results_b = [], []
        for start in range(0, replicates, step):
            results_a += cps_task_group(runs_a[start : start + step], draws, EVALITA_KINDS)
            results_b += cps_task_group(runs_b[start : start + step], draws, EVALITA_KINDS)
        for r, (ra, rb) in enumerate(zip(results_a, results_b, strict=True)):
            interval = ra.prompt_interval("p1", config.level)
            covered_prompt += interval.low <= truth_prompt <= interval.high
            interval = ra.cps_interval(config.level)
            covered_cps += interval.low <= truth_cps <= interval.high
            p, _ = paired_test(ra.reflected, rb.reflected, ra.tie_aware, rb.tie_aware)
            rejected_task += p <= 0.05
            mean_a[r, :, 0] += ra.reflected / n_tasks
            mean_a[r, :, 1] += ra.tie_aware / n_tasks
            mean_b[r, :, 0] += rb.reflected / n_tasks
            mean_b[r, :, 1] += rb.tie_aware / n_tasks
            mean_point[r] += ra.cps / n_tasks
    covered_mean = rejected_mean = 0
    for r in range(replicates):
        interval = bias_aware_interval(mean_a[r, :, 0], mean_a[r, :, 1], config.level)
        covered_mean += interval.low <= truth_cps <= interval.high
        p, _ = paired_test(mean_a[r, :, 0], mean_b[r, :, 0], mean_a[r, :, 1], mean_b[r, :, 1])
        rejected_mean += p <= 0.05
    trials_task = replicates * n_tasks
    return CellResult(
        structure,
        clusters,
        metric,
        replicates,
        prompt=covered_prompt / trials_task,
        task_cps=covered_cps / trials_task,
        mean_cps=covered_mean / replicates,
        type1_task=rejected_task / trials_task,
        type1_mean=rejected_mean / replicates,
    )


def simulate_grid(
    *,
    replicates: int,
    n_items: int,
    n_tasks: int,
    config: BootstrapConfig,
    structures: Sequence[str] = tuple(STRUCTURES),
    clusters: Sequence[str] = tuple(CLUSTER_SHARES),
    metrics: Sequence[str] = METRICS,
    seed: int = 0,
) -> list[CellResult]:
    """Every cell of the grid, each with its own seed (so a cell's figures do not depend on the others)."""
    out = []
    for i, (s, c, m) in enumerate((s, c, m) for s in structures for c in clusters for m in metrics):
        out.append(
            simulate_cell(
                s, c, m, replicates=replicates, n_items=n_items, n_tasks=n_tasks, config=config, seed=seed + i
            )
        )
    return out
