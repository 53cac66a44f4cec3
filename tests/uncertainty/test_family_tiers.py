"""Tiers of chosen rows only (``FamilyTiers``: each row's own Holm family, ``rows × N`` tests) are
the rows' tiers from the whole board: the reference ``significance_matrix`` and the fast
``significance_counts`` the ranking's full tiers come from — on random boards with ties, runs
whose draws are constant, and a second centring (alt draws)."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.core import tiers
from leaderboard.core.tiers import FamilyTiers, family_tiers, significance_counts, significance_matrix
from tests.uncertainty.test_tiers_fast import random_board


def _reference_tiers(draws: np.ndarray, alt: np.ndarray | None) -> np.ndarray:
    alt = draws if alt is None else alt
    return (significance_matrix(draws.astype(np.float64), alt.astype(np.float64)) > 0).sum(axis=1) + 1


@pytest.mark.parametrize("seed", range(6))
def test_the_tiers_of_some_rows_are_their_tiers_on_the_whole_board(seed: int, monkeypatch) -> None:
    monkeypatch.setattr(tiers, "_BLOCK", 29)  # several row and column blocks
    draws, alt = random_board(seed, n=120 + 30 * seed)
    draws = draws.astype(np.float64)
    alt = alt.astype(np.float64)
    rng = np.random.default_rng(seed)
    draws[rng.integers(0, len(draws), 5)] = 55.0  # constant draws: se 0 against each other
    reference = _reference_tiers(draws, alt)
    fast = significance_counts(draws, alt)[0] + 1
    assert fast.tolist() == reference.tolist()
    rows = rng.permutation(len(draws))[:40]
    assert family_tiers(draws, alt, rows).tolist() == reference[rows].tolist()
    every = FamilyTiers(draws, alt).tiers(np.arange(len(draws)))
    assert every.tolist() == reference.tolist()
    assert reference.max() > 1  # the board does tell runs apart


def test_one_draw_set_ties_and_a_single_run() -> None:
    rng = np.random.default_rng(3)
    draws = np.linspace(0, 5, 60)[:, None] + rng.normal(0, 1, (60, 100))
    draws[10:20] = draws[10]  # ten identical runs: no one is above another
    reference = _reference_tiers(draws, None)
    assert family_tiers(draws, None, [12, 0, 59, 12]).tolist() == reference[[12, 0, 59, 12]].tolist()
    assert family_tiers(draws[:1], None, [0]).tolist() == [1]
    assert family_tiers(draws, None, []).tolist() == []


def test_draws_and_alt_draws_must_have_one_shape() -> None:
    with pytest.raises(ValueError, match="differ in shape"):
        FamilyTiers(np.zeros((3, 10)), np.zeros((3, 9)))
