"""Tiers: a run's tier is 1 + the number of runs significantly better than it (paired test,
Holm over that run's comparisons); the properties the About page states, each as a test."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from leaderboard.core.items import RunItems, TaskItems
from leaderboard.core.tiers import (
    TierEntry,
    assign_tiers,
    bias_aware_p_values,
    holm,
    paired_p_value,
    paired_test,
)
from leaderboard.tracks.evalita.cps_intervals import uncertainties
from leaderboard.tracks.evalita.definition import TASK_IDS
from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS
from tests.support.synthetic.items import SMALL_SIZES, SyntheticSuite


def entries(runs: dict[str, RunItems], task_ids=TASK_IDS) -> list[TierEntry]:
    kept = uncertainties(runs.values(), EVALITA_KINDS, task_ids)
    return [
        TierEntry(key, u.mean_cps, u.mean_cps_draws, u.mean_key, u.mean_cps_tie_draws)
        for key, u in zip(runs, kept, strict=True)
    ]


def tiers_by_key(results) -> dict[str, int | None]:
    return {r.key: r.tier for r in results}


def test_two_runs_with_identical_answers_share_a_tier():
    suite = SyntheticSuite(SMALL_SIZES, seed=1)
    strong = suite.run(1, 0.8)
    runs = {"strong": strong, "twin": RunItems("evalita", dict(strong.tasks)), "weak": suite.run(2, 0.3)}
    tiers = tiers_by_key(assign_tiers(entries(runs)))
    assert tiers == {"strong": 1, "twin": 1, "weak": 3}  # two runs are significantly better


def rouge_like(values: np.ndarray, task: str) -> TaskItems:
    n = values.shape[0]
    return TaskItems(
        task,
        "mean",
        (),
        ("p1", "p2"),
        ("",),
        np.zeros(n, np.int16),
        np.arange(n, dtype=np.int64),
        values[:, :, None],
    )


def test_a_run_better_on_every_item_is_a_tier_above():
    rng = np.random.default_rng(3)
    tasks = ("sum", "ls", "re")
    base = {t: rng.uniform(0.1, 0.8, (60, 2)) for t in tasks}
    worse = RunItems("evalita", {t: rouge_like(v, t) for t, v in base.items()})
    better = RunItems("evalita", {t: rouge_like(v + 0.01, t) for t, v in base.items()})
    tiers = tiers_by_key(assign_tiers(entries({"worse": worse, "better": better}, tasks)))
    assert tiers == {"better": 1, "worse": 2}


def standardized(rng: np.random.Generator, size: int) -> np.ndarray:
    noise = rng.standard_normal(size)
    return (noise - noise.mean()) / noise.std(ddof=1)


def entry(key: str, centre: float, noise: np.ndarray) -> TierEntry:
    """A run whose reflected draws are ``centre + noise`` (noise with mean 0)."""
    return TierEntry(key, centre, centre + noise, "k")


def test_a_run_not_significantly_below_any_other_has_tier_1_wherever_it_ranks():
    # The case: L .600; A .595 tightly paired with L (significantly below it); B .590,
    # noisier, significantly below nobody.  A tier that ended at the first significant run
    # put B in tier 2 behind A although nothing beats it.
    rng = np.random.default_rng(4)
    common = 0.01 * standardized(rng, 1000)
    leader = entry("L", 0.600, common)
    tight = entry("A", 0.595, common + 0.001 * standardized(rng, 1000))
    noisy = entry("B", 0.590, 0.03 * standardized(rng, 1000))
    results = {r.key: r for r in assign_tiers([leader, tight, noisy])}
    assert {k: r.tier for k, r in results.items()} == {"L": 1, "A": 2, "B": 1}
    assert results["A"].better == 1 and results["L"].worse == 1
    assert (results["L"].tier, results["L"].worst_rank) == (1, 2)  # rank range 1–2
    assert (results["B"].tier, results["B"].worst_rank) == (1, 3)


def test_input_order_changes_no_tier():
    rng = np.random.default_rng(5)
    scores = [0.70, 0.699, 0.60, 0.598, 0.50, 0.40]
    runs = [entry(f"r{i}", s, 0.002 * standardized(rng, 1000)) for i, s in enumerate(scores)]
    forward = tiers_by_key(assign_tiers(runs))
    for seed in range(3):
        shuffled = [runs[i] for i in np.random.default_rng(seed).permutation(len(runs))]
        results = assign_tiers(shuffled)
        assert [r.key for r in results] == [r.key for r in shuffled]  # returned in the input order
        assert tiers_by_key(results) == forward
    assert forward == {"r0": 1, "r1": 1, "r2": 3, "r3": 3, "r4": 5, "r5": 6}


def test_adding_a_run_far_below_changes_no_other_tier():
    rng = np.random.default_rng(6)
    runs = [
        entry(f"r{i}", s, 0.004 * standardized(rng, 1000)) for i, s in enumerate([0.6, 0.595, 0.59, 0.58])
    ]
    before = tiers_by_key(assign_tiers(runs))
    after = tiers_by_key(assign_tiers([*runs, entry("far", 0.2, 0.004 * standardized(rng, 1000))]))
    assert after.pop("far") == 5
    assert after == before


def test_holm_keeps_together_what_an_uncorrected_test_would_split():
    # A run against two better runs with unadjusted p-values 0.04 and 0.03: each alone would be
    # significant at 0.05, but Holm over its family (0.06, 0.06) is not.
    rng = np.random.default_rng(4)
    b, se = 1000, 0.01
    base = 0.6 + se * standardized(rng, b)
    z_close, z_far = norm.isf(0.04 / 2), norm.isf(0.03 / 2)
    close_noise, far_noise = se * standardized(rng, b), se * standardized(rng, b)
    close = base + z_close * np.std(close_noise, ddof=1) + close_noise - close_noise.mean()
    far = base + z_far * np.std(far_noise, ddof=1) + far_noise - far_noise.mean()
    runs = [
        TierEntry("base", 0.6, base, "k"),
        TierEntry("close", float(close.mean()), close, "k"),
        TierEntry("far", float(far.mean()), far, "k"),
    ]
    np.testing.assert_allclose([paired_p_value(close, base), paired_p_value(far, base)], [0.04, 0.03])
    assert tiers_by_key(assign_tiers(runs))["base"] == 1
    # Without the correction both would count as better.
    assert tiers_by_key(assign_tiers(runs, alpha=0.07))["base"] == 3


def test_holm_adjusted_p_values_per_row():
    np.testing.assert_allclose(holm(np.array([0.01, 0.04, 0.03, 0.005])), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm(np.array([0.5, 0.9])), [1.0, 1.0])  # capped at 1, then monotone
    np.testing.assert_allclose(holm(np.array([[0.01, 0.04], [0.5, 0.9]])), [[0.02, 0.04], [1.0, 1.0]])
    assert holm(np.array([])).size == 0


def test_a_constant_difference_is_significant_and_no_difference_is_not():
    assert paired_p_value(np.full(100, 0.62), np.full(100, 0.60)) == 0.0
    assert paired_p_value(np.zeros(100), np.zeros(100)) == 1.0
    assert paired_p_value(np.linspace(-1, 1, 100), np.zeros(100)) == pytest.approx(1.0)


def test_a_bracketed_bias_is_tested_at_its_least_favourable_centring():
    # A's centre is .62 (plain) or .60 (tie-aware); B's is .59: different under both centrings.
    p, sign = bias_aware_p_values(
        (np.array(0.62), np.array(0.60)), (np.array(0.59), np.array(0.59)), np.array(0.005)
    )
    assert sign == 1 and p == pytest.approx(2 * norm.sf(0.01 / 0.005))
    # B's tie-aware centre .61 overlaps A's range: no difference can be claimed.
    p, sign = bias_aware_p_values(
        (np.array(0.62), np.array(0.60)), (np.array(0.59), np.array(0.61)), np.array(0.005)
    )
    assert (p, sign) == (1.0, 0)
    rng = np.random.default_rng(7)
    noise = 0.005 * standardized(rng, 500)
    assert paired_test(0.62 + noise, 0.55 + noise / 2)[1] == 1


def test_a_run_without_draws_or_score_gets_no_tier():
    draws = np.linspace(0.5, 0.6, 100)
    results = assign_tiers(
        [
            TierEntry("with", 0.55, draws, "k"),
            TierEntry("no-items", 0.9, None, None),
            TierEntry("no-score", None),
        ]
    )
    assert tiers_by_key(results) == {"with": 1, "no-items": None, "no-score": None}


def test_unpaired_draws_are_refused():
    draws = np.linspace(0.5, 0.6, 100)
    with pytest.raises(ValueError, match="paired"):
        assign_tiers([TierEntry("a", 0.5, draws, "k1"), TierEntry("b", 0.4, draws, "k2")])
