"""Tiers of models that are not distinguishable, and the paired test and Holm correction they use.

The test
--------
Two runs on the same items have the same bootstrap draws (``leaderboard.core.uncertainty``:
draws are fixed by seed, task and item ids), so ``d* = draws_A − draws_B`` is the bootstrap
distribution of the **paired** difference of their mean CPS — each resample scores both runs
on the same items with the same prompts.  :func:`paired_p_value` is the two-sided test of
"no difference" with the bootstrap standard error of that difference:
``z = (score_A − score_B) / sd(d*)``, ``p = 2·(1 − Φ(|z|))`` (``scipy.stats.norm``).

Why this test and not a count of resamples beyond zero, or a permutation test: a count-based
bootstrap (or permutation) p-value cannot go below ``1/(B + 1)`` (0.001 for 1,000 resamples),
while Holm over ``m`` comparisons asks the smallest p-value to be below ``α/m`` — 5·10⁻⁵ for a
leader compared with 999 models: no model could ever be told apart.  The mean CPS averages
ten tasks of hundreds to thousands of items, so its paired difference is close to normal and
its bootstrap standard error is what the normal test needs.  A permutation test would also
recompute CPS from the items for every pair and permutation (about 5·10⁸ CPS evaluations for
1,000 models), where the shared draws make each comparison a subtraction.

The tiers (:func:`assign_tiers`)
--------------------------------
Within one setting, with runs sorted by score (highest first; ties keep the input order):

1. The first run not yet in a tier **leads** a new tier.
2. The leader is compared with **every** run after it (the family of this step, ``m`` tests);
   the p-values are Holm-adjusted over that family (:func:`holm`).
3. The tier is the leader and the runs after it up to, not including, the first one whose
   adjusted p-value is ≤ ``alpha`` — the first run significantly worse than the leader.
   That run leads the next tier (step 1), compared afresh with the runs after it.

Tier numbers are dense (1, 2, 3, …) and follow the ranking, so a tier is a contiguous block of
ranks: each leader is significantly below the previous tier's leader, and no run of a tier
before the next leader is.  Runs without draws (no per-item data) get no tier (``None``).
All runs compared must share their draws (``draws_key``): the same items and resamples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
DEFAULT_ALPHA = 0.05


def paired_p_values(delta: Array, delta_draws: Array) -> Array:
    """Two-sided p-values of "no difference" for point differences ``delta`` ``(m,)``.

    ``delta_draws`` ``(m, B)`` are the paired resampled differences.  A difference that is
    the same on every resample (standard error 0) has p = 0 unless it is 0 (then p = 1).
    """
    from scipy.stats import norm  # imported here: see uncertainty.percentile_intervals

    delta = np.asarray(delta, dtype=np.float64)
    se = np.std(delta_draws, axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(delta) / se
    p = 2.0 * norm.sf(z)
    p = np.where(se > 0, p, np.where(delta == 0, 1.0, 0.0))
    return np.where(delta == 0, 1.0, p)


def paired_p_value(delta: float, delta_draws: Array) -> float:
    """:func:`paired_p_values` for one difference."""
    return float(paired_p_values(np.array([delta]), np.asarray(delta_draws)[None, :])[0])


def holm(p_values: Array) -> Array:
    """Holm's step-down adjusted p-values (family-wise error ≤ α when adjusted p ≤ α).

    Sorted ascending, ``p̃_(k) = max_{j ≤ k} min(1, (m − j + 1)·p_(j))``; returned in the
    input order.  (``scipy.stats.false_discovery_control`` has only Benjamini–Hochberg/Yekutieli.)
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


@dataclass(frozen=True)
class TierEntry:
    """One run of a setting: its score (mean CPS), its resampled scores ``(B,)`` and their key."""

    key: str
    score: float | None
    draws: Array | None = None
    draws_key: str | None = None


@dataclass(frozen=True)
class TierResult:
    """A run's tier (``None``: no per-item data or no score), its leader, and its adjusted
    p-value against the leader (``None`` for a leader)."""

    key: str
    tier: int | None
    leader: str | None
    p_vs_leader: float | None


def assign_tiers(entries: Sequence[TierEntry], alpha: float = DEFAULT_ALPHA) -> tuple[TierResult, ...]:
    """Tiers of ``entries`` (module docstring), returned in the input order.

    Raises ``ValueError`` if the entries with draws do not share one ``draws_key`` (their
    draws would not be paired) or have draws of different lengths.
    """
    ranked = [i for i, e in enumerate(entries) if e.score is not None and e.draws is not None]
    ranked.sort(key=lambda i: -float(entries[i].score))  # type: ignore[arg-type]  # stable: ties keep input order
    keys = {entries[i].draws_key for i in ranked}
    if len(keys) > 1:
        raise ValueError(f"tiers need paired draws, found {len(keys)} different draws keys")
    results: list[TierResult | None] = [None] * len(entries)
    tiered = set(ranked)
    for i, entry in enumerate(entries):
        if i not in tiered:
            results[i] = TierResult(entry.key, None, None, None)
    if ranked:
        scores = np.array([entries[i].score for i in ranked], dtype=np.float64)
        draws = np.stack([np.asarray(entries[i].draws, dtype=np.float64) for i in ranked])
        tier, start = 1, 0
        while start < len(ranked):
            leader = ranked[start]
            results[leader] = TierResult(entries[leader].key, tier, entries[leader].key, None)
            rest = np.arange(start + 1, len(ranked))
            if rest.size == 0:
                break
            adjusted = holm(paired_p_values(scores[start] - scores[rest], draws[start] - draws[rest]))
            worse = np.flatnonzero(adjusted <= alpha)
            stop = int(worse[0]) if worse.size else rest.size
            for offset in range(stop):
                member = ranked[rest[offset]]
                results[member] = TierResult(
                    entries[member].key, tier, entries[leader].key, float(adjusted[offset])
                )
            start = int(rest[stop]) if stop < rest.size else len(ranked)
            tier += 1
    return tuple(r for r in results if r is not None)
