"""Tiers, and the paired test and Holm correction they use.

The test
--------
Two runs on the same items have the same bootstrap draws (``leaderboard.core.uncertainty``:
draws are fixed by seed, task and item ids), so the difference of their draws is the
bootstrap distribution of the **paired** difference — each resample scores both runs on the
same items.  A figure's draws here are **reflected** (``θ̂ − (θ* − θ̂)``): their mean is a
bias-corrected estimate.  A figure whose bias is only bracketed (a maximum over prompts that
may tie: a track's CPS-like figure) carries a second draw set with the other
plausible centring; the test then takes the least favourable centring of the difference:

``Δ ∈ [min centre_A − max centre_B, max centre_A − min centre_B]``; when that range holds 0
the p-value is 1, else ``p = 2·(1 − Φ(d / se))`` with ``d`` its distance from 0 and ``se`` the
standard deviation of the paired difference of the draws (:func:`bias_aware_p_values`).
With one draw set this is the usual bootstrap z-test on the bias-corrected difference.

Why a z-test and not a count of resamples beyond zero, or a permutation test: a count-based
p-value cannot go below ``1/(B + 1)`` (0.001 for 1,000 resamples), while Holm over ``m``
comparisons asks the smallest p-value to be below ``α/m`` — 5·10⁻⁵ for a run compared with
999 others: no run could ever be told apart.  The mean CPS averages ten tasks of hundreds to
thousands of items, so its paired difference is close to normal.

The tiers (:func:`assign_tiers`)
--------------------------------
**A run's tier is 1 + the number of runs significantly better than it** — the upper end of
its rank range, as Chatbot Arena's "rank (UB)": tier 1 means no run is significantly better.
"Significantly better": the paired test above, Holm-adjusted over that run's ``N − 1``
comparisons, at ``alpha`` — so for each run, the chance that its tier counts a run that is not
truly better is at most ``alpha``.  Consequences, each pinned by a test:

* a run not significantly below any other has tier 1, wherever it ranks;
* tiers do not depend on the input order, and adding a run far below the others changes no
  other run's tier (its comparisons are rejected first in every family, which leaves Holm's
  thresholds for the others as they were);
* tiers are not contiguous blocks: a run may have tier 2 and the next-ranked run tier 1 (the
  first is significantly below the leader; the second is too noisy to be).

Runs without draws (no per-item data) get no tier (``None``).  All runs compared must share
their draws (``draws_key``): the same items and resamples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
DEFAULT_ALPHA = 0.05


def _two_sided(distance: Array, se: Array) -> Array:
    from scipy.stats import norm  # imported here: see uncertainty.percentile_intervals

    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2.0 * norm.sf(distance / se)
    # A difference that is the same on every resample (se 0): p 0 unless it is 0.
    return np.where(se > 0, p, np.where(distance > 0, 0.0, 1.0))


def bias_aware_p_values(
    centre_a: tuple[Array, Array], centre_b: tuple[Array, Array], se: Array
) -> tuple[Array, Array]:
    """Two-sided p-values of "no difference" and the difference's sign, from centre ranges.

    ``centre_a``/``centre_b``: each run's two plausible centres (the means of its two draw
    sets; equal for a smooth figure), arrays that broadcast; ``se``: the paired difference's
    standard error.  Returns ``(p, sign)``: sign ``+1`` when A is above B under every
    centring, ``−1`` when below, ``0`` when the range of differences holds 0 (then p is 1).
    """
    low = np.minimum(*centre_a) - np.maximum(*centre_b)
    high = np.maximum(*centre_a) - np.minimum(*centre_b)
    sign = np.where(low > 0, 1, np.where(high < 0, -1, 0))
    distance = np.where(sign > 0, low, np.where(sign < 0, -high, 0.0))
    p = np.where(sign == 0, 1.0, _two_sided(distance, np.asarray(se, dtype=np.float64)))
    return p, sign


def paired_test(
    a: Array, b: Array, a_alt: Array | None = None, b_alt: Array | None = None
) -> tuple[float, int]:
    """The paired test of one pair of runs from their reflected draws ``(B,)`` (module docstring).

    ``a_alt``/``b_alt``: a second draw set with the other plausible centring, where the
    figure has one (``None``: the figure is smooth and its draws are its only centring).
    Returns ``(p, sign)``: sign ``+1`` A above B, ``−1`` below, ``0`` undecided (p = 1).
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    a_alt = a if a_alt is None else np.asarray(a_alt, dtype=np.float64)
    b_alt = b if b_alt is None else np.asarray(b_alt, dtype=np.float64)
    se = np.std(a - b, ddof=1)
    p, sign = bias_aware_p_values((a.mean(), a_alt.mean()), (b.mean(), b_alt.mean()), np.asarray(se))
    return float(p), int(sign)


def paired_p_value(a: Array, b: Array, a_alt: Array | None = None, b_alt: Array | None = None) -> float:
    """The p-value of :func:`paired_test`."""
    return paired_test(a, b, a_alt, b_alt)[0]


def holm(p_values: Array) -> Array:
    """Holm's step-down adjusted p-values (family-wise error ≤ α when adjusted p ≤ α).

    Sorted ascending, ``p̃_(k) = max_{j ≤ k} min(1, (m − j + 1)·p_(j))``; returned in the
    input order, along the last axis (one family per row).
    (``scipy.stats.false_discovery_control`` has only Benjamini–Hochberg/Yekutieli.)
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.shape[-1] if p.ndim else 0
    if m == 0:
        return p.copy()
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1)
    scaled = np.minimum(1.0, (m - np.arange(m)) * ranked)
    adjusted = np.empty_like(p)
    np.put_along_axis(adjusted, order, np.maximum.accumulate(scaled, axis=-1), axis=-1)
    return adjusted


@dataclass(frozen=True)
class TierEntry:
    """One run of a setting: its published score, its reflected draws ``(B,)``, their key,
    and (for a figure with a bracketed bias) its second draw set ``alt_draws``."""

    key: str
    score: float | None
    draws: Array | None = None
    draws_key: str | None = None
    alt_draws: Array | None = None


@dataclass(frozen=True)
class TierResult:
    """A run's tier (``None``: no per-item data or no score), how many of the ``n_ranked`` runs
    are significantly better (``tier − 1``) and significantly worse than it."""

    key: str
    tier: int | None
    better: int | None = None
    worse: int | None = None
    n_ranked: int | None = None

    @property
    def worst_rank(self) -> int | None:
        """The lower end of the run's rank range (the tier is the upper end): ``N − worse``."""
        return None if self.worse is None or self.n_ranked is None else self.n_ranked - self.worse


def significance_matrix(
    draws: Array, alt_draws: Array | None = None, alpha: float = DEFAULT_ALPHA
) -> NDArray[np.int8]:
    """``S[i, j] = 1`` when run ``j`` is significantly better than run ``i`` (−1: worse, 0: neither).

    ``draws`` ``(N, B)`` reflected, paired draws (``alt_draws`` the second set, if any); each
    row's ``N − 1`` comparisons are one Holm family.  Memory: a few ``N × N`` matrices
    (8 MB each for 1,000 runs).
    """
    draws = np.asarray(draws, dtype=np.float64)
    alt = draws if alt_draws is None else np.asarray(alt_draws, dtype=np.float64)
    n, b = draws.shape
    centred = draws - draws.mean(axis=1, keepdims=True)
    cov = centred @ centred.T / (b - 1)
    var = np.diag(cov)
    se = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2.0 * cov, 0.0))
    means, alt_means = draws.mean(axis=1), alt.mean(axis=1)
    # p[i, j]: run j against run i (A = j, B = i): sign +1 when j is above i.
    p, sign = bias_aware_p_values(
        (means[None, :], alt_means[None, :]), (means[:, None], alt_means[:, None]), se
    )
    off = ~np.eye(n, dtype=bool)
    family = p[off].reshape(n, n - 1)
    adjusted = np.ones((n, n))
    adjusted[off] = holm(family).reshape(-1)
    return np.where(off & (adjusted <= alpha), sign, 0).astype(np.int8)


def assign_tiers(entries: Sequence[TierEntry], alpha: float = DEFAULT_ALPHA) -> tuple[TierResult, ...]:
    """Tiers of ``entries`` (module docstring), returned in the input order.

    Raises ``ValueError`` if the entries with draws do not share one ``draws_key`` (their
    draws would not be paired) or have draws of different lengths.
    """
    ranked = [i for i, e in enumerate(entries) if e.score is not None and e.draws is not None]
    keys = {entries[i].draws_key for i in ranked}
    if len(keys) > 1:
        raise ValueError(f"tiers need paired draws, found {len(keys)} different draws keys")
    results = [TierResult(e.key, None) for e in entries]
    if not ranked:
        return tuple(results)
    # One shared matrix, float32 when the draws are (as decoded from a results file): half the
    # memory of float64 rows; every figure is then computed in float64, as the reference does.
    chosen = [(entries[i].draws, entries[i].alt_draws) for i in ranked]
    dtype = (
        np.float32 if all(_is_float32(d) and (a is None or _is_float32(a)) for d, a in chosen) else np.float64
    )
    draws = np.stack([np.asarray(d, dtype=dtype) for d, _ in chosen])
    alt = np.stack([np.asarray(d if a is None else a, dtype=dtype) for d, a in chosen])
    better, worse = significance_counts(draws, alt, alpha)
    for row, i in enumerate(ranked):
        results[i] = TierResult(
            entries[i].key, int(better[row]) + 1, int(better[row]), int(worse[row]), len(ranked)
        )
    return tuple(results)


def _is_float32(values: object) -> bool:
    return isinstance(values, np.ndarray) and values.dtype == np.float32


#: Rows of the significance computation done at once (a ``block × B`` float64 slab and a few
#: ``block × N`` matrices: about 100 MB at 10,000 runs).
_BLOCK = 512


def significance_counts(
    draws: NDArray[np.floating], alt_draws: NDArray[np.floating] | None = None, alpha: float = DEFAULT_ALPHA
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per run, how many runs are significantly better and how many significantly worse: the row
    sums of :func:`significance_matrix` (``> 0`` and ``< 0``), without its ``N × N`` matrices.

    The same tests and Holm families, computed where their outcome is not already certain: a
    pair whose centre gap ``d`` is at least ``z · (sd_i + sd_j)`` — ``se ≤ sd_i + sd_j`` whatever
    the draws' covariance — has ``p ≤ α / m``, and Holm rejects every p-value that small
    whatever its place in the family (``(m − k)·p ≤ m·p ≤ α``), so those pairs count without
    their covariance; a p-value above ``α / m`` sorts after all of them, so its place in the
    family is the number of certain pairs plus its rank among the computed ones.  Only the
    covariances of the other pairs are computed (float64, from the draws as given), a block of
    rows at a time.  At 10,000 runs the reference needs 800 MB per ``N × N`` matrix; this needs
    :data:`_BLOCK` rows of them.  ``tests/uncertainty/test_tiers_fast.py`` checks it equals
    :func:`significance_matrix` on random boards.
    """
    from scipy.stats import norm  # imported here: see uncertainty.percentile_intervals

    x = np.asarray(draws)
    x_alt = x if alt_draws is None else np.asarray(alt_draws)
    n, b = x.shape
    if n < 2:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    m = n - 1
    # In float64, as the reference (a row's figures do not depend on the other rows).
    means, alt_means, var = np.empty(n), np.empty(n), np.empty(n)
    for start in range(0, n, _BLOCK):
        part = slice(start, start + _BLOCK)
        rows64 = x[part].astype(np.float64)
        means[part] = rows64.mean(axis=1)
        alt_means[part] = x_alt[part].astype(np.float64).mean(axis=1)
        centred = rows64 - means[part, None]
        var[part] = np.einsum("ij,ij->i", centred, centred) / (b - 1)
    sd = np.sqrt(np.maximum(var, 0.0))
    c_low, c_high = np.minimum(means, alt_means), np.maximum(means, alt_means)
    # Certain rejection: d / se ≥ z with p = 2·Φ̄(z) a little below α / m (a margin for rounding).
    z_certain = float(norm.isf(alpha / (2.0 * m))) * (1.0 + 1e-6) + 1e-9
    better = np.zeros(n, dtype=np.int64)
    worse = np.zeros(n, dtype=np.int64)
    for start in range(0, n, _BLOCK):
        rows = np.arange(start, min(start + _BLOCK, n))
        # A = j (columns), B = i (rows), as in significance_matrix.
        low = c_low[None, :] - c_high[rows, None]
        high = c_high[None, :] - c_low[rows, None]
        sign = np.where(low > 0, 1, np.where(high < 0, -1, 0)).astype(np.int8)
        distance = np.where(sign > 0, low, np.where(sign < 0, -high, 0.0))
        certain = (sign != 0) & (distance > 0) & (distance >= z_certain * (sd[rows, None] + sd[None, :]))
        certain[np.arange(len(rows)), rows] = False
        # Columns uncertain for some row of the block: their covariance with the block is computed.
        cols = np.flatnonzero(~certain.all(axis=0))
        centred_rows = x[rows].astype(np.float64) - means[rows, None]
        centred_cols = x[cols].astype(np.float64) - means[cols, None]
        cov = centred_rows @ centred_cols.T / (b - 1)
        se = np.sqrt(np.maximum(var[rows, None] + var[None, cols] - 2.0 * cov, 0.0))
        block_sign = sign[:, cols]
        p = np.where(block_sign == 0, 1.0, _two_sided(distance[:, cols], se))
        # Pairs counted as certain are not in the computed family; nor is a run against itself.
        excluded = certain[:, cols] | (rows[:, None] == cols[None, :])
        p[excluded] = 2.0  # sorts after every p-value of the family
        n_certain = certain.sum(axis=1)
        order = np.argsort(p, axis=1, kind="stable")
        ranked = np.take_along_axis(p, order, axis=1)
        place = n_certain[:, None] + np.arange(len(cols))[None, :]
        ok = (ranked <= 1.0) & (np.minimum(1.0, (m - place) * ranked) <= alpha)
        rejected_sorted = np.logical_and.accumulate(ok, axis=1)
        rejected = np.zeros_like(rejected_sorted)
        np.put_along_axis(rejected, order, rejected_sorted, axis=1)
        certain_sign = np.where(certain, sign, 0)
        better[rows] = (certain_sign > 0).sum(axis=1) + (rejected & (block_sign > 0)).sum(axis=1)
        worse[rows] = (certain_sign < 0).sum(axis=1) + (rejected & (block_sign < 0)).sum(axis=1)
    return better, worse
