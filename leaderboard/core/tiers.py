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

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
DEFAULT_ALPHA = 0.05


def _two_sided(distance: Array, se: Array) -> Array:
    # ``ndtr(−z)`` is what ``scipy.stats.norm.sf(z)`` computes, without its argument checks.
    from scipy.special import ndtr  # imported here: see uncertainty.percentile_intervals

    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2.0 * ndtr(-(distance / se))
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
    better, worse = _counts_once(draws, alt, alpha)
    for row, i in enumerate(ranked):
        results[i] = TierResult(
            entries[i].key, int(better[row]) + 1, int(better[row]), int(worse[row]), len(ranked)
        )
    return tuple(results)


def matrix_tiers(
    draws: NDArray[np.floating], alt_draws: NDArray[np.floating] | None = None, alpha: float = DEFAULT_ALPHA
) -> NDArray[np.int64]:
    """The tiers (``1 +`` runs significantly better) of runs whose paired draws are the rows of
    ``draws`` ``(N, B)`` (``alt_draws`` the second set, if any): what :func:`assign_tiers` gives
    entries holding those rows, without an entry per run or the rows stacked again (a view's
    draws already are one matrix), by the same :func:`significance_counts` and kept counts."""
    draws = np.asarray(draws)
    alt = draws if alt_draws is None else np.asarray(alt_draws)
    if draws.shape != alt.shape:
        raise ValueError(f"draws {draws.shape} and alt_draws {alt.shape} differ in shape")
    if not len(draws):
        return np.zeros(0, dtype=np.int64)
    better, _ = _counts_once(draws, alt, alpha)
    return better + 1


#: The latest boards' counts, by a digest of their draws: a re-read whose changes leave a setting's
#: runs and draws as they were (a new run of the other setting, a metadata fix) gets that setting's
#: tiers back without their pairs tested again.  A few entries of ``2 × N`` integers each.
COUNTS_KEPT = 8
_counts: OrderedDict[bytes, tuple[NDArray[np.int64], NDArray[np.int64]]] = OrderedDict()
_counts_lock = threading.Lock()


def _counts_once(
    draws: NDArray[np.floating], alt: NDArray[np.floating], alpha: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """:func:`significance_counts`, or its result for the same draws and ``alpha`` kept from an
    earlier call (the same inputs: the same counts)."""
    digest = hashlib.blake2b(digest_size=20)
    for matrix in (draws, alt):
        matrix = np.ascontiguousarray(matrix)
        digest.update(f"{matrix.dtype.str}{matrix.shape}".encode())
        digest.update(matrix.data)
    digest.update(repr(float(alpha)).encode())
    key = digest.digest()
    with _counts_lock:
        if key in _counts:
            _counts.move_to_end(key)
            better, worse = _counts[key]
            return better.copy(), worse.copy()
    better, worse = significance_counts(draws, alt, alpha)
    with _counts_lock:
        _counts[key] = (better.copy(), worse.copy())
        while len(_counts) > COUNTS_KEPT:
            _counts.popitem(last=False)
    return better, worse


def _is_float32(values: object) -> bool:
    return isinstance(values, np.ndarray) and values.dtype == np.float32


#: Runs per block of the significance computation (``block × block`` matrices, ``block × B``
#: float64 slabs: a few MB, whatever N).
_BLOCK = 512


def _row_moments(
    x: NDArray[np.floating], x_alt: NDArray[np.floating], divisor: int
) -> tuple[Array, Array, Array]:
    """Each row's mean, its second set's mean and its variance (sum of squares / ``divisor``), in
    float64 as the reference computes them (a row's figures do not depend on the other rows), a
    block of rows at a time."""
    n = len(x)
    means, alt_means, var = np.empty(n), np.empty(n), np.empty(n)
    for start in range(0, n, _BLOCK):
        part = slice(start, start + _BLOCK)
        rows64 = x[part].astype(np.float64)
        means[part] = rows64.mean(axis=1)
        alt_means[part] = x_alt[part].astype(np.float64).mean(axis=1)
        centred = rows64 - means[part, None]
        var[part] = np.einsum("ij,ij->i", centred, centred) / divisor
    return means, alt_means, var


def significance_counts(
    draws: NDArray[np.floating], alt_draws: NDArray[np.floating] | None = None, alpha: float = DEFAULT_ALPHA
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per run, how many runs are significantly better and how many significantly worse: the row
    sums of :func:`significance_matrix` (``> 0`` and ``< 0``), without its ``N × N`` matrices.

    The same tests and Holm families; only the p-values whose place in a family can change the
    outcome are computed and sorted.  With ``m = N − 1`` comparisons per run, Holm rejects
    every p-value ``≤ α / m`` whatever its place (``(m − k)·p ≤ m·p ≤ α``) and never one above
    ``α``; a p-value between the two sorts after every one of the first kind, so its place in
    its family is their number plus its rank among the in-between ones.  So a pair is

    * certain without its covariance when its centre gap ``d ≥ z_{α/m} · (sd_i + sd_j)``
      (``se ≤ sd_i + sd_j`` whatever the covariance) — runs far apart, most pairs of a large
      board: their blocks (runs sorted by centre) are skipped;
    * else certain from ``d / se`` (its covariance computed once for the pair, not twice);
    * else kept with its exact p-value, and each run's kept p-values go through Holm with
      their places offset by the run's certain ones.

    At 10,000 runs the reference needs 800 MB per ``N × N`` matrix; this needs a few
    ``block × block`` ones and the kept pairs.  ``tests/uncertainty/test_tiers_fast.py`` checks
    it equals :func:`significance_matrix` on random boards.
    """
    # ``-ndtri(q)`` is ``scipy.stats.norm.isf(q)`` (exactly): scipy.special alone, not scipy.stats (~50 MB
    # more of the server's memory, which nothing else on the ranking's path imports); imported when
    # a board is first tiered, not with the module.
    from scipy.special import ndtri

    x = np.asarray(draws)
    x_alt = x if alt_draws is None else np.asarray(alt_draws)
    n, b = x.shape
    better = np.zeros(n, dtype=np.int64)
    worse = np.zeros(n, dtype=np.int64)
    if n < 2:
        return better, worse
    m = n - 1
    means, alt_means, var = _row_moments(x, x_alt, b - 1)
    sd = np.sqrt(np.maximum(var, 0.0))
    c_low, c_high = np.minimum(means, alt_means), np.maximum(means, alt_means)
    # Margins for rounding: "certain" is a little beyond each threshold.
    z_reject = float(-ndtri(alpha / (2.0 * m))) * (1.0 + 1e-6) + 1e-9
    z_keep = float(-ndtri(alpha / 2.0)) * (1.0 - 1e-6)
    # A kept p-value can be rejected only if ``p ≤ α / (m − s + 1)``, ``s`` the run's comparisons whose
    # centre ranges do not overlap (the others have p = 1 and sort last, so no p-value below 1 has a
    # place beyond ``s − 1``): the pairs in doubt below that bound fail wherever they sort, and so do
    # all larger p-values, so they are never kept (no p-value computed, nothing stored).
    by_low, by_high = np.sort(c_low), np.sort(c_high)
    apart = (n - np.searchsorted(by_low, c_high, side="right")) + np.searchsorted(by_high, c_low, side="left")
    with np.errstate(divide="ignore"):
        z_least = -ndtri(alpha / (2.0 * np.maximum(m - apart + 1, 1)))
    z_least = np.maximum(z_least * (1.0 - 1e-6), z_keep)
    # Runs in centre order, so that runs far apart fall in blocks that are wholly certain.
    order = np.argsort(c_low + c_high, kind="stable")
    starts = range(0, n, _BLOCK)
    blocks = [order[s : s + _BLOCK] for s in starts]
    centred_blocks: dict[int, NDArray[np.float64]] = {}

    def centred(k: int) -> NDArray[np.float64]:
        if k not in centred_blocks:
            idx = blocks[k]
            centred_blocks[k] = x[idx].astype(np.float64) - means[idx, None]
        return centred_blocks[k]

    # Kept pairs by the block of the run whose family they join; a block's families are complete
    # (and its kept pairs dropped) once its row of blocks is done.
    kept: dict[int, list[tuple[NDArray[np.int32], NDArray[np.float64], NDArray[np.int8]]]] = {}
    for bi, rows in enumerate(blocks):
        sd_rows, top_rows = float(sd[rows].max()), float(c_high[rows].max())
        for bj in range(bi, len(blocks)):
            cols = blocks[bj]
            if bj > bi:
                # Every column run above every row run by at least the widest pair's certain
                # gap: the whole block is certain (what the pair by pair test below finds).
                gap = float(c_low[cols].min()) - top_rows
                if gap > 0 and gap >= z_reject * (sd_rows + float(sd[cols].max())):
                    better[rows] += len(cols)
                    worse[cols] += len(rows)
                    continue
            # A = j (columns), B = i (rows), as in significance_matrix: sign +1 when j is above i.
            low = c_low[None, cols] - c_high[rows, None]
            high = c_high[None, cols] - c_low[rows, None]
            # The distance of the centre range from 0: ``low`` when j is above i, ``−high`` when
            # below (the same numbers: the other is negative then), and ≤ 0 when they overlap.
            np.negative(high, out=high)
            distance = np.maximum(low, high)
            del high
            apart_pairs = distance > 0  # the sign is not 0
            if bi == bj:
                apart_pairs &= np.triu(np.ones(apart_pairs.shape, dtype=bool), 1)
            width = sd[rows, None] + sd[None, cols]
            width *= z_reject
            certain = distance >= width
            del width
            certain &= apart_pairs
            undecided = apart_pairs & ~certain
            r_any, c_any = undecided.any(axis=1), undecided.any(axis=0)
            if r_any.any():
                # Covariances of the bounding box of the pairs in doubt only (a band along the
                # centre order: often a corner of the block), slices rather than gathers.
                r0, r1 = int(r_any.argmax()), len(r_any) - int(r_any[::-1].argmax())
                c0, c1 = int(c_any.argmax()), len(c_any) - int(c_any[::-1].argmax())
                box = (slice(r0, r1), slice(c0, c1))
                cov = centred(bi)[r0:r1] @ centred(bj)[c0:c1].T
                cov /= b - 1
                cov *= 2.0
                se = var[rows[r0:r1], None] + var[None, cols[c0:c1]]
                se -= cov
                del cov
                np.maximum(se, 0.0, out=se)
                np.sqrt(se, out=se)
                d = distance[box]
                with np.errstate(divide="ignore", invalid="ignore"):
                    z = d / se  # +inf where se is 0 (d > 0 for every pair in doubt)
                # z ≥ z_reject holds for no pair whose ranges overlap (d ≤ 0): only the pairs in doubt
                # and those already certain (off the diagonal block, every pair is one run's pair).
                reject = z >= z_reject
                if bi == bj:
                    reject &= undecided[box]
                certain[box] |= reject
                # Kept for the row's run, the column's run, or both (each its own bound, above): the
                # pairs in doubt (not certain, not below the diagonal) with z between the bounds.
                doubt = z >= np.minimum.outer(z_least[rows[r0:r1]], z_least[cols[c0:c1]])
                doubt &= ~reject
                ii, jj = np.nonzero(doubt)
                in_doubt = undecided[r0 + ii, c0 + jj]
                ii, jj = ii[in_doubt], jj[in_doubt]
                if len(ii):
                    zs, row_runs, col_runs = z[ii, jj], rows[r0 + ii], cols[c0 + jj]
                    s_ij = np.where(low[r0 + ii, c0 + jj] > 0, 1, -1).astype(np.int8)
                    for end, runs, s_end in ((bi, row_runs, s_ij), (bj, col_runs, -s_ij)):
                        # Their z (``d / se``, se > 0): the p-value is computed from it later, for
                        # the few that can still be rejected once the run's counts are known.
                        keep = zs >= z_least[runs]
                        kept.setdefault(end, []).append((runs[keep].astype(np.int32), zs[keep], s_end[keep]))
                del se, z, d, doubt, reject
            up = certain & (low > 0)
            n_certain_rows = np.count_nonzero(certain, axis=1)
            n_certain_cols = np.count_nonzero(certain, axis=0)
            up_rows, up_cols = np.count_nonzero(up, axis=1), np.count_nonzero(up, axis=0)
            better[rows] += up_rows  # a block's runs are distinct: no index repeats
            worse[rows] += n_certain_rows - up_rows
            better[cols] += n_certain_cols - up_cols  # i above j: i is better than j
            worse[cols] += up_cols
        centred_blocks.pop(bi, None)
        if bi in kept:
            _holm_kept(kept.pop(bi), better, worse, m, alpha)
    return better, worse


def _holm_kept(
    parts: list[tuple[NDArray[np.int32], NDArray[np.float64], NDArray[np.int8]]],
    better: NDArray[np.int64],
    worse: NDArray[np.int64],
    m: int,
    alpha: float,
) -> None:
    """Holm over each run's kept p-values (``(run, z, sign)`` parts, ``z = d / se`` of the pair's
    test: sign +1 when the other run is above), placed after the run's certain rejections (``better + worse`` so far); adds the
    rejected ones to ``better``/``worse``."""
    from scipy.special import ndtri  # as in significance_counts

    run = np.concatenate([part[0] for part in parts])
    z = np.concatenate([part[1] for part in parts])
    s = np.concatenate([part[2] for part in parts])
    # A kept p-value takes a place below ``certain + kept`` of its run, where Holm asks
    # ``(m − place)·p ≤ α``: one failing that at the last place, ``m − certain − kept + 1``, fails
    # at every place (rounding is monotone), and every p-value sorting after it is larger — so it
    # is dropped before sorting, and the others keep their places (most kept pairs, on a large board).
    kept_per_run = np.bincount(run, minlength=len(better))
    last_of_run = m - (better + worse) - kept_per_run + 1
    # p ≤ α / last needs z ≥ the normal quantile of α / (2·last): below it (with a margin far above
    # rounding) a pair fails for sure, and its p-value is not computed (one quantile per run).
    with np.errstate(divide="ignore"):
        z_need = -ndtri(alpha / (2.0 * np.maximum(last_of_run, 1))) * (1.0 - 1e-6)
    near = z >= z_need[run]
    run, z, s = run[near], z[near], s[near]
    last = last_of_run[run]
    p = _two_sided(z, np.ones_like(z))  # 2·Φ(−d/se), as for every pair: z is d / se
    maybe = np.minimum(1.0, last * p) <= alpha
    run, p, s = run[maybe], p[maybe], s[maybe]
    if not len(run):
        return
    by = np.lexsort((p, run))
    run, p, s = run[by], p[by], s[by]
    first = np.r_[0, np.flatnonzero(np.diff(run)) + 1]
    sizes = np.diff(np.r_[first, len(run)])
    rank = np.arange(len(run)) - np.repeat(first, sizes)
    place = (better + worse)[run] + rank
    fails = ~(np.minimum(1.0, (m - place) * p) <= alpha)
    # Holm stops at a run's first failure: its kept pairs before it are rejected.
    fail_at = np.where(fails, rank, len(run))
    rejected = rank < np.repeat(np.minimum.reduceat(fail_at, first), sizes)
    np.add.at(better, run, (rejected & (s > 0)).astype(np.int64))
    np.add.at(worse, run, (rejected & (s < 0)).astype(np.int64))


class FamilyTiers:
    """Tiers of chosen runs only, each from its own Holm family: a run's tier depends on its own
    ``N − 1`` comparisons alone (module docstring), so the rows a page shows need ``rows × N``
    tests, not the board's ``N × N`` (issue 32: 25 rows of a custom average over 10,000 runs).

    ``draws`` ``(N, B)`` (``alt_draws`` the second set, if any) as for :func:`significance_counts`;
    the runs' means and variances are computed once, here, in float64 as it computes them.
    :meth:`tiers` of some rows equals ``1 +`` those rows' :func:`significance_matrix` counts
    (``tests/uncertainty/test_family_tiers.py`` checks it, and that it equals
    :func:`significance_counts`).
    """

    def __init__(
        self,
        draws: NDArray[np.floating],
        alt_draws: NDArray[np.floating] | None = None,
        alpha: float = DEFAULT_ALPHA,
    ) -> None:
        self.draws = np.asarray(draws)
        alt = self.draws if alt_draws is None else np.asarray(alt_draws)
        if self.draws.shape != alt.shape:
            raise ValueError(f"draws {self.draws.shape} and alt_draws {alt.shape} differ in shape")
        self.alpha = alpha
        # Of the second set only its means are needed: it is not kept (half the memory).
        self.means, self.alt_means, self.var = _row_moments(self.draws, alt, max(self.draws.shape[1] - 1, 1))

    def tiers(self, rows: Sequence[int] | NDArray[np.integer]) -> NDArray[np.int64]:
        """The tiers (``1 +`` runs significantly better) of the runs at positions ``rows``."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        n = len(self.draws)
        if not len(rows) or n < 2:
            return np.ones(len(rows), dtype=np.int64)
        b = self.draws.shape[1]
        better = np.empty(len(rows), dtype=np.int64)
        # A few hundred rows at a time: ``rows × N`` float64 matrices (40 MB at 500 × 10,000).
        for start in range(0, len(rows), _BLOCK):
            chosen = rows[start : start + _BLOCK]
            mine = self.draws[chosen].astype(np.float64) - self.means[chosen, None]
            cov = np.empty((len(chosen), n))
            for col in range(0, n, 4 * _BLOCK):
                part = slice(col, col + 4 * _BLOCK)
                others = self.draws[part].astype(np.float64) - self.means[part, None]
                cov[:, part] = mine @ others.T
            cov /= b - 1
            se = self.var[chosen, None] + self.var[None, :] - 2.0 * cov
            np.sqrt(np.maximum(se, 0.0, out=se), out=se)
            # A = every run j, B = the chosen run i: sign +1 when j is above i (significance_matrix).
            p, sign = bias_aware_p_values(
                (self.means[None, :], self.alt_means[None, :]),
                (self.means[chosen, None], self.alt_means[chosen, None]),
                se,
            )
            # The family of run i: every other run (its own column dropped).
            others_of = np.ones(p.shape, dtype=bool)
            others_of[np.arange(len(chosen)), chosen] = False
            family = p[others_of].reshape(len(chosen), n - 1)
            signs = sign[others_of].reshape(len(chosen), n - 1)
            better[start : start + len(chosen)] = ((holm(family) <= self.alpha) & (signs > 0)).sum(axis=1)
        return better + 1


def family_tiers(
    draws: NDArray[np.floating],
    alt_draws: NDArray[np.floating] | None,
    rows: Sequence[int] | NDArray[np.integer],
    alpha: float = DEFAULT_ALPHA,
) -> NDArray[np.int64]:
    """The tiers of the runs at positions ``rows`` among all the rows of ``draws`` (:class:`FamilyTiers`)."""
    return FamilyTiers(draws, alt_draws, alpha).tiers(rows)
