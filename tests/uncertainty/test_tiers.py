"""Tiers: runs whose mean-CPS difference is not significant (paired test, Holm) share a tier."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from leaderboard.core.items import RunItems, TaskItems
from leaderboard.core.tiers import TierEntry, assign_tiers, holm, paired_p_value, paired_p_values
from leaderboard.core.uncertainty import uncertainties
from leaderboard.tracks.evalita.definition import TASK_IDS
from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS
from tests.support.synthetic.items import SMALL_SIZES, SyntheticSuite


def entries(runs: dict[str, RunItems], task_ids=TASK_IDS) -> list[TierEntry]:
    kept = uncertainties(runs.values(), EVALITA_KINDS, task_ids)
    return [
        TierEntry(key, u.mean_cps, u.mean_cps_draws, u.mean_key) for key, u in zip(runs, kept, strict=True)
    ]


def tiers_by_key(results) -> dict[str, int | None]:
    return {r.key: r.tier for r in results}


def test_two_runs_with_identical_answers_share_a_tier():
    suite = SyntheticSuite(SMALL_SIZES, seed=1)
    strong = suite.run(1, 0.8)
    runs = {"strong": strong, "twin": RunItems("evalita", dict(strong.tasks)), "weak": suite.run(2, 0.3)}
    tiers = tiers_by_key(assign_tiers(entries(runs)))
    assert tiers == {"strong": 1, "twin": 1, "weak": 2}


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


def test_holm_keeps_together_what_an_uncorrected_test_would_split():
    # The leader against two runs with unadjusted p-values 0.04 and 0.03: each alone would be
    # significant at 0.05, but Holm over the two (0.06, 0.06) is not.
    rng = np.random.default_rng(4)
    b, se = 1000, 0.01
    leader = 0.6 + se * standardized(rng, b)
    z_close, z_far = norm.isf(0.04 / 2), norm.isf(0.03 / 2)
    close = leader - z_close * se + se * standardized(rng, b)  # sd of the difference: se
    far = leader - z_far * se + se * standardized(rng, b)
    # The differences' sd is exactly se only for uncorrelated noise; use the observed one.
    close_score = 0.6 - z_close * np.std(leader - close, ddof=1)
    far_score = 0.6 - z_far * np.std(leader - far, ddof=1)
    runs = [
        TierEntry("leader", 0.6, leader, "k"),
        TierEntry("close", close_score, close, "k"),
        TierEntry("far", far_score, far, "k"),
    ]
    unadjusted = paired_p_values(
        np.array([0.6 - close_score, 0.6 - far_score]), np.stack([leader - close, leader - far])
    )
    np.testing.assert_allclose(unadjusted, [0.04, 0.03])
    results = assign_tiers(runs)
    assert tiers_by_key(results) == {"leader": 1, "close": 1, "far": 1}
    np.testing.assert_allclose([r.p_vs_leader for r in results[1:]], [0.06, 0.06])
    # Without the correction the close run would open tier 2.
    assert tiers_by_key(assign_tiers(runs, alpha=0.07)) == {"leader": 1, "close": 2, "far": 2}


def test_holm_adjusted_p_values():
    np.testing.assert_allclose(holm(np.array([0.01, 0.04, 0.03, 0.005])), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm(np.array([0.5, 0.9])), [1.0, 1.0])  # capped at 1, then monotone
    assert holm(np.array([])).size == 0


def test_a_constant_difference_is_significant_and_no_difference_is_not():
    assert paired_p_value(0.02, np.full(100, 0.02)) == 0.0
    assert paired_p_value(0.0, np.zeros(100)) == 1.0
    assert paired_p_value(0.0, np.linspace(-1, 1, 100)) == 1.0


def test_tiers_are_dense_contiguous_and_follow_the_ranking():
    rng = np.random.default_rng(5)
    scores = [0.70, 0.699, 0.60, 0.598, 0.50, 0.40]
    runs = [TierEntry(f"r{i}", s, s + 0.002 * standardized(rng, 1000), "k") for i, s in enumerate(scores)]
    results = assign_tiers(list(reversed(runs)))
    assert [r.key for r in results] == [r.key for r in reversed(runs)]  # input order kept
    assert tiers_by_key(results) == {"r0": 1, "r1": 1, "r2": 2, "r3": 2, "r4": 3, "r5": 4}
    leaders = {r.key: r.leader for r in results}
    assert leaders["r1"] == "r0" and leaders["r3"] == "r2" and leaders["r4"] == "r4"


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
