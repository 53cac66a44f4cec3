"""``numbers.percents`` (the display rounding of a whole column at once) gives exactly
``numbers.percent`` of each value — the same floats, signs of zero included — on random values,
the paper's exact halves, values a hair either side of a half, negatives, and non-finite ones."""

from __future__ import annotations

import math

import numpy as np

from leaderboard.core.numbers import percent, percents


def _same(values: np.ndarray) -> None:
    got = percents(values)
    want = [percent(float(v)) if math.isfinite(v) else None for v in values]
    assert len(got) == len(want)
    for value, g, w in zip(values.tolist(), got, want, strict=True):
        assert (g is None) == (w is None), value
        if w is not None:
            assert g == w and math.copysign(1, g) == math.copysign(1, w), (value, g, w)


def test_random_scores_and_their_means() -> None:
    rng = np.random.default_rng(7)
    _same(rng.uniform(0, 1, 50_000))
    _same(rng.uniform(-0.05, 1.05, 20_000))
    # Means of two-decimal scores: exact fives in decimal that binary floats store either side.
    scores = rng.integers(0, 10_001, (30_000, 4)) / 10_000
    _same(scores.mean(axis=1))
    _same(scores[:, :2].mean(axis=1))


def test_halves_and_their_neighbours() -> None:
    k = np.arange(-200, 10_001)
    halves = (k + 0.5) / 10_000  # x.xx5 of 0–100
    neighbours = np.concatenate([np.nextafter(halves, 2), np.nextafter(halves, -2), halves])
    _same(neighbours)
    _same(np.concatenate([halves + 1e-12, halves - 1e-12, halves + 4e-11, halves - 4e-11]))
    _same(k / 10_000)


def test_zeros_signs_and_non_finite_values() -> None:
    _same(np.array([0.0, -0.0, 1e-12, -1e-12, -4e-5, -5e-5, -6e-5, 4e-5, 5e-5, 1.0, -1.0]))
    _same(np.array([np.nan, np.inf, -np.inf, 1e9, -1e9, 123456.789]))
    assert percents(np.array([np.nan, 0.58895])) == [None, percent(0.58895)]
    assert percents(np.array([])) == []
