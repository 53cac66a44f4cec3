"""The track's statistics against simulated data with a known truth (STYLE 13: calibration printed).

The order test's p-value is uniform when the model is indifferent to the canonical order (a
scorer with random tastes, "trained on nothing" about this set), and small when the scorer has
memorised the order; Holm, Wilson, CoDeC and the band are checked on exact cases.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from leaderboard.tracks.contamination.definition import CodecDesign, OrderDesign
from leaderboard.tracks.contamination.metrics import (
    Band,
    BandPosition,
    band_position,
    codec_contexts,
    codec_score,
    holm,
    order_plan,
    order_test,
    reference_band,
    shard_bounds,
    wilson,
)
from tests.contamination.synthetic import SyntheticScorer, synthetic_codec, synthetic_order_test

SMALL = OrderDesign(permutations=10, max_shards=8, min_shard_items=3)


@pytest.mark.parametrize("n_items", [24, 64])  # shards of 3 (every other order) and of 8 (10 random ones)
def test_the_order_p_value_is_uniform_when_the_model_is_indifferent_to_the_order(n_items: int) -> None:
    replicates = 400
    p_values = np.array(
        [
            synthetic_order_test(
                SyntheticScorer(n_items, seed), n_items, OrderDesign(10, 8, 3, seed=seed), f"set{seed}"
            ).p_value
            for seed in range(replicates)
        ]
    )
    ks = stats.kstest(p_values, "uniform")
    histogram = np.histogram(p_values, bins=10, range=(0, 1))[0]
    chi2 = stats.chisquare(histogram)
    rate = float((p_values < 0.05).mean())
    se = math.sqrt(0.05 * 0.95 / len(p_values))
    print(
        f"null, {n_items} items: KS p={ks.pvalue:.3f}, histogram {histogram.tolist()} (chi2 p={chi2.pvalue:.3f}), "
        f"rejections at 5 %: {rate:.3f} ± {se:.3f}"
    )
    assert ks.pvalue > 0.001 and chi2.pvalue > 0.001
    assert abs(rate - 0.05) < 3.5 * se


def test_a_memorised_canonical_order_is_detected() -> None:
    detected = [
        synthetic_order_test(SyntheticScorer(24, seed, bonus=2.0), 24, SMALL, "te").p_value < 0.01
        for seed in range(50)
    ]
    print(f"memorised (bonus 2 nats per canonical succession): detected {sum(detected)}/50 at 1 %")
    assert sum(detected) >= 45


def test_shards_cover_the_set_contiguously_and_permutations_are_reproducible_per_set() -> None:
    assert shard_bounds(10, 3) == [(0, 3), (3, 7), (7, 10)]
    plan = order_plan(24, SMALL, "te")
    assert [(s.start, s.end) for s in plan] == [(3 * k, 3 * k + 3) for k in range(8)]
    for shard in plan:  # 3 items: all 5 other orders, exactly
        assert len(set(shard.permutations)) == 5 and shard.canonical not in shard.permutations
        assert all(sorted(p) == list(shard.canonical) for p in shard.permutations)
    large = order_plan(100, OrderDesign(permutations=10, max_shards=5), "te")
    for shard in large:  # 20 items: 10 random orders, none canonical
        assert len(shard.permutations) == 10 and shard.canonical not in shard.permutations
        assert all(sorted(p) == list(shard.canonical) for p in shard.permutations)
    assert large == order_plan(100, OrderDesign(permutations=10, max_shards=5), "te")
    assert large != order_plan(100, OrderDesign(permutations=10, max_shards=5), "wic")
    assert order_plan(5, SMALL, "tiny") == ()  # too small to cut into two shards of three


def test_order_test_needs_two_shards_and_handles_no_spread() -> None:
    with pytest.raises(ValueError, match="two or more shards"):
        order_test([1.0], [[0.0]])
    assert order_test([1.0, 1.0], [[0.0], [0.0]]).p_value == 0.0
    assert order_test([0.0, 0.0], [[0.0], [0.0]]).p_value == 1.0
    clear = order_test([5.0, 6.0, 5.5], [[0.0, 0.2], [0.1, 0.0], [0.0, 0.1]])
    assert clear.p_value < 0.01 and clear.t is not None and clear.t > 0


def test_holm_adjusts_step_down_and_keeps_the_order() -> None:
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.5})
    assert adjusted == pytest.approx({"a": 0.04, "c": 0.09, "b": 0.09, "d": 0.5})
    assert holm({"x": 0.6, "y": 0.7}) == {"x": 1.0, "y": 1.0}
    assert holm({}) == {}


def test_wilson_interval_matches_the_formula_and_covers_at_its_level() -> None:
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson(6, 6)[1] == 1.0 and wilson(0, 6)[0] == 0.0
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    rng = np.random.default_rng(7)
    draws, n, share = 4000, 24, 0.3
    hits = 0
    for k in rng.binomial(n, share, draws):
        lo, hi = wilson(int(k), n)
        hits += lo <= share <= hi
    coverage, se = hits / draws, math.sqrt(0.95 * 0.05 / draws)
    print(f"Wilson 95 % at n={n}, share {share}: coverage {coverage:.3f} ± {se:.3f}")
    assert 0.92 <= coverage <= 0.985


def test_codec_counts_drops_only_and_separates_seen_from_unseen_sets() -> None:
    score = codec_score([-10.0, -10.0, -10.0, -10.0], [-11.0, -9.0, -10.0, -12.0])
    assert (score.drops, score.n, score.score) == (2, 4, 0.5)  # a tie is not a drop
    with pytest.raises(ValueError):
        codec_score([], [])
    contexts = codec_contexts(20, CodecDesign(context_items=4), "te")
    assert all(i not in c and len(set(c)) == 4 for i, c in enumerate(contexts))
    unseen = synthetic_codec(SyntheticScorer(40, 1), 40, CodecDesign(), "te")
    seen = synthetic_codec(SyntheticScorer(40, 1, bonus=2.0), 40, CodecDesign(), "te")
    assert seen.low > unseen.high


def test_the_band_needs_three_other_models_and_places_an_interval() -> None:
    assert reference_band([0.2, 0.3]) is None
    band = reference_band([0.2, 0.25, 0.3, 0.35])
    assert band is not None and band.models == 4 and 0.2 < band.low < band.high < 0.35
    assert band_position(0.5, 0.6, Band(0.2, 0.35, 4)) is BandPosition.ABOVE
    assert band_position(0.05, 0.1, Band(0.2, 0.35, 4)) is BandPosition.BELOW
    assert band_position(0.3, 0.5, Band(0.2, 0.35, 4)) is BandPosition.WITHIN
    assert band_position(0.3, 0.5, None) is BandPosition.NO_REFERENCE
