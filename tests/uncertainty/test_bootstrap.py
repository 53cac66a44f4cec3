"""The paired item-level bootstrap: point estimates, draws, pairing, strata, coverage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from leaderboard.core.items import RunItems, TaskItems
from leaderboard.core.uncertainty import (
    DEFAULT_CONFIG,
    BootstrapConfig,
    DrawCache,
    bootstrap_task,
    make_draws,
)
from leaderboard.tracks.evalita import metrics as scoring
from leaderboard.tracks.evalita.cps_intervals import (
    RunUncertainty,
    cps_run,
    cps_task,
    cps_task_group,
    reflected_cps_draws,
    uncertainties,
)
from leaderboard.tracks.evalita.definition import SUITE, TASK_IDS
from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS
from tests.support.synthetic.items import SMALL_SIZES, SyntheticSuite, pair_stats


def accuracy_items(correct: np.ndarray, task: str = "te", doc_ids: np.ndarray | None = None) -> TaskItems:
    """A mean-kind task from ``correct`` ``(n, P)`` 0/1."""
    n, n_prompts = correct.shape
    return TaskItems(
        task=task,
        metric="mean",
        labels=(),
        prompts=tuple(f"p{i + 1}" for i in range(n_prompts)),
        parts=("",),
        part_index=np.zeros(n, np.int16),
        doc_ids=np.arange(n, dtype=np.int64) if doc_ids is None else doc_ids,
        stats=correct.astype(np.float64)[:, :, None],
    )


@pytest.fixture(scope="module")
def suite() -> SyntheticSuite:
    return SyntheticSuite(SMALL_SIZES, seed=7)


def test_point_estimates_are_the_published_scores(suite):
    run = suite.run(1, 0.6)
    boot = cps_run(run, EVALITA_KINDS)
    task_cps = {}
    for task in SUITE:
        tb = boot.tasks[task.id]
        published = scoring.score_task(task, dict(zip(tb.prompts, tb.prompt_scores.tolist(), strict=True)))
        assert tb.cps == published.cps
        task_cps[task.id] = tb.cps
    mean = boot.mean_cps(TASK_IDS)
    assert mean.point == scoring.overall_score(task_cps).avg_cps
    assert mean.reflected.shape == mean.tie_aware.shape == (DEFAULT_CONFIG.n_resamples,)


def test_resampled_cps_is_recomputed_from_the_resampled_prompt_scores_and_reflected(suite):
    tb = cps_run(suite.run(2, 0.5), EVALITA_KINDS).tasks["sa"]
    plain = scoring.cps_formula(tb.prompt_draws.max(axis=0), tb.prompt_draws.mean(axis=0))
    np.testing.assert_allclose(tb.reflected, 2 * tb.cps - plain, rtol=0, atol=1e-12)


def test_the_tie_aware_draws_equal_the_reflected_ones_when_the_prompts_are_far_apart():
    # Gaps of 10 points against a spread of about 1: nothing to shrink, the same draws.
    rng = np.random.default_rng(3)
    points = np.array([0.4, 0.5, 0.6, 0.7])
    draws = points + 0.01 * rng.standard_normal((1000, 4))
    _, reflected, tie_aware = reflected_cps_draws(points, draws)
    np.testing.assert_allclose(tie_aware, reflected, atol=1e-12)


def test_the_tie_aware_draws_sit_lower_when_the_prompts_tie():
    # Six prompts within noise of each other: the tie-aware centring removes a tie's bias.
    rng = np.random.default_rng(4)
    points = 0.6 + 0.005 * rng.standard_normal(6)
    draws = points + 0.02 * rng.standard_normal((1000, 6))
    _, reflected, tie_aware = reflected_cps_draws(points, draws)
    assert tie_aware.mean() < reflected.mean() - 0.001


def test_runs_on_the_same_items_get_the_same_draws_and_other_items_other_draws():
    cache = DrawCache()
    rng = np.random.default_rng(0)
    a = accuracy_items(rng.integers(0, 2, (50, 2)))
    b = accuracy_items(rng.integers(0, 2, (50, 2)))
    other_items = accuracy_items(rng.integers(0, 2, (50, 2)), doc_ids=np.arange(1, 51))
    other_task = accuracy_items(rng.integers(0, 2, (50, 2)), task="faq")
    draws_a, draws_b = cache.get(DEFAULT_CONFIG, a), DrawCache().get(DEFAULT_CONFIG, b)
    assert draws_a.key == draws_b.key
    np.testing.assert_array_equal(draws_a.indices, draws_b.indices)
    assert cache.get(DEFAULT_CONFIG, other_items).key != draws_a.key
    assert cache.get(DEFAULT_CONFIG, other_task).key != draws_a.key
    assert DrawCache().get(BootstrapConfig(seed=1), a).key != draws_a.key


def test_the_items_order_in_the_input_does_not_change_the_draws():
    stats = {f"p{p}": {(("", i)): [float((i * p) % 2)] for i in range(30)} for p in (1, 2)}
    shuffled = {p: dict(reversed(list(items.items()))) for p, items in stats.items()}
    from leaderboard.core.items import ItemId

    def build(source):
        return TaskItems.build(
            "te", "mean", {p: {ItemId(*k): v for k, v in d.items()} for p, d in source.items()}
        )

    first, second = (
        bootstrap_task(build(stats), EVALITA_KINDS),
        bootstrap_task(build(shuffled), EVALITA_KINDS),
    )
    np.testing.assert_array_equal(first.prompt_draws, second.prompt_draws)


def test_identical_answers_give_identical_resampled_scores(suite):
    run = suite.run(3, 0.55)
    twin = RunItems("evalita", dict(run.tasks))
    a, b = uncertainties([run, twin], EVALITA_KINDS, TASK_IDS)
    assert a.mean_key == b.mean_key and a.mean_cps == b.mean_cps
    # Bit-identical for counts; real-valued statistics (ROUGE, LS) summed by BLAS may differ
    # in the last bit with their column's place in the batched product.
    np.testing.assert_allclose(a.mean_cps_draws, b.mean_cps_draws, rtol=1e-14, atol=0)
    boot = cps_run(run, EVALITA_KINDS)
    np.testing.assert_array_equal(
        boot.tasks["sa"].reflected, cps_run(twin, EVALITA_KINDS).tasks["sa"].reflected
    )


def test_prompts_stay_paired_on_each_resample():
    # Every prompt answers alike: on every resample all prompts score alike, so Sat = 1 and the
    # CPS interval is the prompt score's.  Resampling each prompt on its own draws (what an
    # unpaired bootstrap would do) makes MaxP − AvgP > 0 on almost every resample instead.
    rng = np.random.default_rng(1)
    correct = rng.random((300, 1)) < 0.6
    same = cps_task(accuracy_items(np.repeat(correct, 6, axis=1)), EVALITA_KINDS)
    assert (same.prompt_draws == same.prompt_draws[0]).all()
    # AvgP of equal scores: the CPS's draws are the prompt's, reflected.
    np.testing.assert_allclose(same.reflected, 2 * same.cps - same.prompt_draws[0], atol=1e-12)
    alone = [
        bootstrap_task(accuracy_items(correct.astype(float), task=f"prompt{p}"), EVALITA_KINDS)
        for p in range(6)
    ]
    unpaired = np.stack([b.prompt_draws[0] for b in alone], axis=1)
    spread = unpaired.max(axis=1) - unpaired.mean(axis=1)
    assert (spread > 0).mean() > 0.95


def test_parts_are_resampled_within_themselves(suite):
    ner = suite.run(4, 0.5).tasks["ner"]
    draws = DrawCache().get(DEFAULT_CONFIG, ner)
    for part in ner.part_slices:
        inside = draws.indices[:, part]
        assert ((inside >= part.start) & (inside < part.stop)).all()
    np.testing.assert_array_equal(
        draws.weights[:, ner.part_slices[1]].sum(axis=1),
        np.full(DEFAULT_CONFIG.n_resamples, ner.part_slices[1].stop - ner.part_slices[1].start),
    )


def test_a_run_without_per_item_data_has_no_interval(suite):
    full = suite.run(5, 0.6)
    partial = RunItems("evalita", {k: v for k, v in full.tasks.items() if k != "sum"})
    none, with_all, without_sum = uncertainties([None, full, partial], EVALITA_KINDS, TASK_IDS)
    assert none is None
    assert with_all.mean_cps_interval is not None
    assert without_sum.mean_cps is None and without_sum.mean_cps_interval is None
    assert without_sum.mean_cps_draws is None and without_sum.mean_cps_tie_draws is None
    assert "sum" not in without_sum.cps_intervals and "sa" in without_sum.cps_intervals
    assert uncertainties([RunItems("evalita", {})], EVALITA_KINDS, TASK_IDS) == [None]


def test_run_uncertainty_survives_bytes(suite):
    (kept,) = uncertainties([suite.run(6, 0.4)], EVALITA_KINDS, TASK_IDS)
    back = RunUncertainty.from_bytes(kept.to_bytes())
    assert back.cps_intervals == kept.cps_intervals
    assert back.prompt_intervals == kept.prompt_intervals
    assert (back.mean_cps, back.mean_cps_interval, back.mean_key) == (
        kept.mean_cps,
        kept.mean_cps_interval,
        kept.mean_key,
    )
    np.testing.assert_array_equal(back.mean_cps_draws, kept.mean_cps_draws)
    np.testing.assert_array_equal(back.mean_cps_tie_draws, kept.mean_cps_tie_draws)


def test_clusters_are_drawn_whole_and_within_their_part():
    labels = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 3])
    draws = make_draws(DEFAULT_CONFIG, "clustered", [10], [labels])
    weights = draws.weights
    for cluster in range(4):
        members = np.flatnonzero(labels == cluster)
        # Every item of a cluster is drawn as often as the others of its cluster.
        assert (weights[:, members] == weights[:, members[:1]]).all()
    # Four clusters drawn per resample, so the items drawn vary with the clusters' sizes.
    assert len(set(weights.sum(axis=1).tolist())) > 1
    assert ((draws.indices >= 0) & (draws.indices <= 10)).all()


def test_a_clustered_interval_is_wider_when_clusters_move_together():
    # 40 clusters of 10 items whose accuracy moves with the cluster: resampling items alone
    # treats 400 items as independent and gives an interval far too narrow.
    rng = np.random.default_rng(21)
    cluster_effect = np.repeat(rng.standard_normal(40), 10)
    correct = (cluster_effect[:, None] + 0.5 * rng.standard_normal((400, 1))) > 0
    from leaderboard.core.items import ItemId

    per_item = {ItemId("", i): [float(correct[i, 0])] for i in range(400)}
    plain = TaskItems.build("te", "mean", {"p1": per_item})
    clustered = TaskItems.build(
        "te", "mean", {"p1": per_item}, clusters={ItemId("", i): f"c{i // 10}" for i in range(400)}
    )
    assert plain.fingerprint != clustered.fingerprint
    narrow = bootstrap_task(plain, EVALITA_KINDS).prompt_interval("p1")
    wide = bootstrap_task(clustered, EVALITA_KINDS).prompt_interval("p1")
    assert (wide.high - wide.low) > 2 * (narrow.high - narrow.low)


# --------------------------------------------------------------------------- coverage


def coverage(datasets: list[TaskItems], truth_prompt: float, truth_cps: float) -> tuple[float, float]:
    """Share of the simulated datasets whose 95 % intervals contain the truth (first prompt, CPS)."""
    draws = DrawCache().get(DEFAULT_CONFIG, datasets[0])  # same item ids: the same draws
    results = []
    for start in range(0, len(datasets), 250):
        results += cps_task_group(datasets[start : start + 250], draws, EVALITA_KINDS)
    prompt = np.mean([(lambda i: i.low <= truth_prompt <= i.high)(r.prompt_interval("p1")) for r in results])
    cps = np.mean([(lambda i: i.low <= truth_cps <= i.high)(r.cps_interval()) for r in results])
    return float(prompt), float(cps)


def true_cps(scores: np.ndarray) -> float:
    return float(scoring.cps_formula(np.max(scores), np.mean(scores)))


def test_accuracy_and_cps_intervals_cover_the_truth_at_their_nominal_rate():
    # 1,000 datasets of 400 items; six prompts of known accuracies whose errors are correlated
    # across prompts (a Gaussian copula, ρ = 0.5), as prompts on the same items are.
    rng = np.random.default_rng(11)
    accuracies = np.array([0.55, 0.6, 0.62, 0.65, 0.7, 0.72])
    threshold = norm.ppf(accuracies)

    def dataset() -> TaskItems:
        latent = np.sqrt(0.5) * rng.standard_normal((400, 1)) + np.sqrt(0.5) * rng.standard_normal((400, 6))
        return accuracy_items(latent < threshold)

    prompt, cps = coverage([dataset() for _ in range(1000)], accuracies[0], true_cps(accuracies))
    assert 0.93 <= prompt <= 0.97
    assert 0.93 <= cps <= 0.97


def test_f1_intervals_cover_the_population_f1_at_their_nominal_rate():
    rng = np.random.default_rng(12)
    positive, recall, false_alarm = 0.4, 0.7, 0.2
    truth = (
        2
        * positive
        * recall
        / (2 * positive * recall + (1 - positive) * false_alarm + positive * (1 - recall))
    )

    def dataset() -> TaskItems:
        gold = (rng.random(500) < positive).astype(np.int64)
        pred = np.where(gold == 1, rng.random(500) < recall, rng.random(500) < false_alarm).astype(np.int64)
        return TaskItems(
            "wic", "f1_binary", ("0", "1"), ("p1",), ("",), np.zeros(500, np.int16), np.arange(500),
            pair_stats(gold, pred, 2)[:, None, :],
        )  # fmt: skip

    prompt, _ = coverage([dataset() for _ in range(1000)], truth, truth)
    assert 0.93 <= prompt <= 0.97
