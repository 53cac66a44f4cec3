"""A board's tier counts are kept by a digest of its draws: the same draws again (a re-read that
left a setting as it was) are not tested again, and any changed draw is."""

from __future__ import annotations

import numpy as np

from leaderboard.core import tiers
from leaderboard.core.tiers import TierEntry, assign_tiers


def _entries(draws: np.ndarray, alt: np.ndarray) -> list[TierEntry]:
    return [
        TierEntry(str(i), float(row.mean()), row, "k", other)
        for i, (row, other) in enumerate(zip(draws, alt, strict=True))
    ]


def _board(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    skill = np.linspace(40, 60, 60)
    draws = (skill[:, None] + 2.0 * rng.normal(0, 1, (60, 200))).astype(np.float32)
    return draws, (draws + 0.3).astype(np.float32)


def test_the_same_draws_are_tested_once_and_a_changed_draw_again(monkeypatch) -> None:
    calls = []
    counts = tiers.significance_counts
    monkeypatch.setattr(tiers, "significance_counts", lambda *a: calls.append(1) or counts(*a))
    monkeypatch.setattr(tiers, "_counts", type(tiers._counts)())
    draws, alt = _board(3)
    first = [r.tier for r in assign_tiers(_entries(draws, alt))]
    again = [r.tier for r in assign_tiers(_entries(draws.copy(), alt.copy()))]
    assert again == first and len(calls) == 1 and max(first) > 1
    changed = draws.copy()
    changed[5, 7] += np.float32(0.5)
    other = [r.tier for r in assign_tiers(_entries(changed, alt))]
    assert len(calls) == 2
    assert other == [int(v) + 1 for v in (tiers.significance_matrix(changed, alt) > 0).sum(axis=1)]
    assign_tiers(_entries(draws, alt), alpha=0.01)  # another level: tested again
    assert len(calls) == 3


def test_kept_counts_are_bounded_and_not_shared_with_the_caller(monkeypatch) -> None:
    monkeypatch.setattr(tiers, "_counts", type(tiers._counts)())
    for seed in range(tiers.COUNTS_KEPT + 3):
        assign_tiers(_entries(*_board(seed)))
    assert len(tiers._counts) == tiers.COUNTS_KEPT
    draws, alt = _board(100)
    better, _ = tiers._counts_once(draws, alt, tiers.DEFAULT_ALPHA)
    better[:] = -1  # the caller's copy: the kept counts are untouched
    assert (tiers._counts_once(draws, alt, tiers.DEFAULT_ALPHA)[0] >= 0).all()
