"""``percentile_bounds`` (numpy alone) equals ``scipy.stats.quantile`` bit for bit: the custom
average's intervals (issue 32) are computed without importing scipy.stats on the request path."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import quantile

from leaderboard.core.uncertainty import percentile_bounds, percentile_intervals


def _scipy(draws: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - level) / 2.0
    bounds = quantile(np.atleast_2d(draws), np.array([alpha, 1.0 - alpha]), axis=-1)
    return bounds[:, 0], bounds[:, 1]


@pytest.mark.parametrize("b", [1, 2, 3, 7, 39, 40, 41, 199, 200, 201, 1000])
@pytest.mark.parametrize("level", [0.95, 0.9, 0.5, 0.99])
def test_percentile_bounds_equal_scipys_quantile_bit_for_bit(b: int, level: float) -> None:
    rng = np.random.default_rng(b)
    draws = rng.normal(0.5, 0.1, (50, b))
    draws[:10] = np.round(draws[:10], 2)  # many ties
    draws[10] = 0.25  # one value repeated
    lows, highs = percentile_bounds(draws, level)
    want_lows, want_highs = _scipy(draws, level)
    np.testing.assert_array_equal(lows, want_lows)
    np.testing.assert_array_equal(highs, want_highs)
    assert lows.dtype == highs.dtype == np.float64


def test_percentile_bounds_of_float32_rows_infinities_and_nans_are_scipys() -> None:
    rng = np.random.default_rng(7)
    draws = rng.normal(0, 1, (6, 200)).astype(np.float32)
    wide = draws.astype(np.float64)
    wide[1, 3] = np.nan  # propagated: the row's ends are NaN
    wide[2, :5] = np.inf
    wide[3, -5:] = -np.inf
    for x in (draws, wide):
        lows, highs = percentile_bounds(x)
        want_lows, want_highs = _scipy(x, 0.95)
        np.testing.assert_array_equal(lows, want_lows)
        np.testing.assert_array_equal(highs, want_highs)
    assert np.isnan(percentile_bounds(wide)[0][1]) and np.isfinite(percentile_bounds(wide)[0][0])


def test_percentile_bounds_of_one_row_and_of_no_values() -> None:
    row = np.linspace(0, 1, 101)
    lows, highs = percentile_bounds(row)
    assert (lows[0], highs[0]) == pytest.approx((0.025, 0.975), abs=1e-12)
    (interval,) = percentile_intervals(row)
    assert (interval.low, interval.high, interval.level) == (lows[0], highs[0], 0.95)
    lows, highs = percentile_bounds(np.empty((3, 0)))
    assert np.isnan(lows).all() and np.isnan(highs).all() and lows.shape == (3,)
