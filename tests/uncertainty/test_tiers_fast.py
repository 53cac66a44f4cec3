"""The tiers' fast path (``significance_counts``: certain pairs counted without their covariance,
the rest a block of rows at a time) gives exactly the reference's counts
(``significance_matrix``, every pair tested and Holm over each row) on random boards."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.core import tiers
from leaderboard.core.tiers import TierEntry, assign_tiers, significance_counts, significance_matrix


def random_board(seed: int, n: int, b: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """``n`` runs' paired float32 draws: a shared item effect, skills from crowded to spread out,
    noise that varies by run, and a second centring that differs for some runs (a CPS-like tie)."""
    rng = np.random.default_rng(seed)
    shared = rng.normal(0, 1, b)
    skill = rng.uniform(40, 42, n) if seed % 2 else rng.uniform(20, 80, n)
    noise = rng.uniform(0.2, 3.0, n)
    draws = skill[:, None] + noise[:, None] * (0.6 * shared[None, :] + 0.8 * rng.normal(0, 1, (n, b)))
    draws[rng.integers(1, n, n // 10)] = draws[0]  # identical runs: a tie of every figure
    shift = np.where(rng.random(n) < 0.3, rng.uniform(0, 1.5, n), 0.0)
    return draws.astype(np.float32), (draws + shift[:, None]).astype(np.float32)


def reference_counts(draws: np.ndarray, alt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    matrix = significance_matrix(draws.astype(np.float64), alt.astype(np.float64))
    return (matrix > 0).sum(axis=1), (matrix < 0).sum(axis=1)


@pytest.mark.parametrize("seed", range(8))
def test_fast_counts_equal_the_reference_on_random_boards(seed: int, monkeypatch) -> None:
    # Small blocks, so that several blocks and the pruning across them are exercised.
    monkeypatch.setattr(tiers, "_BLOCK", 37)
    draws, alt = random_board(seed, n=150 + 40 * seed)
    better, worse = significance_counts(draws, alt)
    ref_better, ref_worse = reference_counts(draws, alt)
    assert better.tolist() == ref_better.tolist()
    assert worse.tolist() == ref_worse.tolist()
    assert better.sum() > 0  # the boards do tell runs apart


def test_fast_counts_prune_most_pairs_of_a_spread_board_and_still_agree(monkeypatch) -> None:
    rng = np.random.default_rng(11)
    n, b = 400, 200
    skill = np.linspace(0, 100, n)
    draws = (skill[:, None] + 0.3 * rng.normal(0, 1, (n, b))).astype(np.float32)
    monkeypatch.setattr(tiers, "_BLOCK", 50)
    tested = []
    two_sided = tiers._two_sided
    monkeypatch.setattr(tiers, "_two_sided", lambda d, se: tested.append(d.size) or two_sided(d, se))
    better, worse = significance_counts(draws)
    pairs_tested = sum(tested)
    ref_better, ref_worse = reference_counts(draws, draws)
    assert better.tolist() == ref_better.tolist() and worse.tolist() == ref_worse.tolist()
    assert pairs_tested < n * n / 4  # most pairs are too far apart for their test to be in doubt


def test_assign_tiers_keeps_float64_draws_exact_and_agrees_with_the_reference() -> None:
    draws, alt = random_board(5, n=120)
    wide = draws.astype(np.float64) + 1e-9  # not float32 values: kept in float64
    entries = [
        TierEntry(str(i), float(row.mean()), row, "k", a)
        for i, (row, a) in enumerate(zip(wide, alt.astype(np.float64), strict=True))
    ]
    got = [r.tier for r in assign_tiers(entries)]
    matrix = significance_matrix(wide, alt.astype(np.float64))
    assert got == [int(v) + 1 for v in (matrix > 0).sum(axis=1)]


def test_one_run_and_no_runs() -> None:
    assert [r.tier for r in assign_tiers([TierEntry("a", 0.5, np.zeros(10, np.float32), "k")])] == [1]
    better, worse = significance_counts(np.zeros((0, 10), np.float32))
    assert better.tolist() == [] and worse.tolist() == []
