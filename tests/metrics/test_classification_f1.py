"""WiC, HS and SA: what lm-eval 0.4.13 computes, and F1-macro as the paper specifies it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from lm_eval.api import metrics as lm_metrics
from sklearn.metrics import f1_score

from leaderboard.tracks.evalita.specified import (
    f1_macro,
    f1_per_label,
    lm_eval_f1,
    mc_prediction,
    sentipolc_f1,
)
from tests.metrics.upstream import (
    HS_PROMPTS,
    SA_PROMPTS,
    SAMPLE_DIR,
    WIC_PROMPTS,
    loglikelihoods_picking,
    mc_task,
    only_metric,
)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")

HAND_MADE = [
    # (gold, predicted)
    ([0, 1, 1, 0, 1], [0, 1, 0, 0, 1]),
    ([1, 1, 1, 1], [1, 1, 1, 1]),
    ([0, 0, 1, 1], [1, 1, 1, 1]),
    ([0, 0, 1, 1], [0, 0, 0, 0]),
    ([0, 1, 0, 1, 0, 1], [1, 0, 1, 0, 1, 0]),
    ([0, 0, 0, 1], [0, 0, 0, 0]),
    ([2, 0, 3, 1, 1, 2], [2, 1, 3, 1, 0, 0]),
    ([3, 3, 3], [0, 1, 2]),
]


#: Random cases per check: sizes 1 to 40, so about one in eight has five items or fewer (labels
#: missing from gold or predictions: F1's zero divisions); each case costs scikit-learn a millisecond or two.
RANDOM_CASES = 150


def _random_cases(n_labels: int, count: int, seed: int) -> list[tuple[list[int], list[int]]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        size = rng.randint(1, 40)
        golds = [rng.randrange(n_labels) for _ in range(size)]
        # Some predictors biased towards one label, some uniform.
        bias = rng.random()
        preds = [rng.randrange(n_labels) if rng.random() > bias else 0 for _ in range(size)]
        cases.append((golds, preds))
    return cases


@pytest.mark.parametrize(("golds", "preds"), HAND_MADE)
def test_f1_macro_equals_scikit_learn_macro_on_hand_made_predictions(
    golds: list[int], preds: list[int]
) -> None:
    assert f1_macro(golds, preds) == f1_score(golds, preds, average="macro")


def test_f1_macro_equals_scikit_learn_macro_on_random_predictions() -> None:
    checked = 0
    for n_labels, seed in ((2, 1), (4, 2)):
        for golds, preds in _random_cases(n_labels, RANDOM_CASES, seed):
            assert f1_macro(golds, preds) == f1_score(golds, preds, average="macro"), (golds, preds)
            assert f1_per_label(golds, preds, [0, 1]) == list(
                f1_score(golds, preds, average=None, labels=[0, 1])
            )
            checked += 1
    assert checked == 2 * RANDOM_CASES


def test_f1_macro_with_fixed_labels_counts_a_class_never_seen_as_zero() -> None:
    # Both classes fixed: "0" never occurs, so its F1 is 0 (scikit-learn's zero_division default).
    assert (
        f1_macro([1, 1], [1, 1], labels=[0, 1])
        == f1_score([1, 1], [1, 1], average="macro", labels=[0, 1])
        == 0.5
    )
    assert f1_macro([1, 1], [1, 1]) == 1.0


def test_lm_eval_f1_equals_the_harness_f1_aggregation() -> None:
    checked = 0
    for golds, preds in HAND_MADE[:6] + _random_cases(2, RANDOM_CASES, 3):
        items = list(zip(golds, preds, strict=True))
        assert lm_eval_f1(golds, preds) == lm_metrics.f1_score(items), (golds, preds)
        checked += 1
    assert checked == len(HAND_MADE[:6]) + RANDOM_CASES


def test_mc_prediction_is_numpy_argmax() -> None:
    import numpy as np

    rng = random.Random(4)
    for _ in range(200):
        lls = [rng.choice([-1.0, -2.0, -3.5, rng.uniform(-9, 0)]) for _ in range(rng.randint(1, 6))]
        assert mc_prediction(lls) == int(np.argmax(lls))
    assert mc_prediction([-1.0, float("nan"), 0.0]) == int(np.argmax([-1.0, float("nan"), 0.0])) == 1


# --------------------------------------------------------------------------- the harness's WiC and HS


def _labels(path: Path, field: str) -> list[int]:
    return [json.loads(line)[field] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def mc_tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The twelve WiC and HS prompts, built by lm-eval from their YAMLs on the bundled sample."""
    cache = tmp_path_factory.mktemp("datasets")
    wic = {"test": SAMPLE_DIR / "wic/test.jsonl", "dev": SAMPLE_DIR / "wic/dev.jsonl"}
    hs = {"test_all": SAMPLE_DIR / "hs/test_all.jsonl", "dev": SAMPLE_DIR / "hs/dev.jsonl"}
    tasks = {name: mc_task(name, wic, cache) for name in WIC_PROMPTS}
    tasks.update({name: mc_task(name, hs, cache) for name in HS_PROMPTS})
    return tasks


def _harness_score(task: object, picks: list[int]) -> tuple[float, list[tuple[int, int]]]:
    """Run the harness's per-sample hook and its aggregation on the given picks."""
    docs = list(task.test_docs())
    assert len(docs) == len(picks)
    items = []
    for doc, pick in zip(docs, picks, strict=True):
        result = task.process_results(doc, loglikelihoods_picking(pick, len(task.doc_to_choice(doc))))
        items.append(result["f1"])
    return task.aggregation()["f1"](items), [(int(g), int(p)) for g, p in items]


@pytest.mark.parametrize("name", WIC_PROMPTS + HS_PROMPTS)
def test_wic_and_hs_prompts_aggregate_with_binary_f1_even_where_the_yaml_asks_for_macro(
    mc_tasks: dict[str, object], name: str
) -> None:
    task = mc_tasks[name]
    # Every prompt's f1 goes to lm-eval's registered aggregation "f1": scikit-learn's binary F1.
    assert task.aggregation()["f1"] is lm_metrics.f1_score
    if name in HS_PROMPTS:
        # HS YAMLs say ``average: macro``; it lands in the metric's kwargs, which the
        # multiple-choice scoring never passes on: the aggregation stays binary.
        assert only_metric(name)["average"] == "macro"
        assert task._metric_fn_kwargs["f1"] == {"average": "macro"}
    picks = [(i * 7) % 3 % 2 for i in range(24)]  # a fixed, mixed sequence of picks
    score, items = _harness_score(task, picks)
    golds = [g for g, _ in items]
    assert [p for _, p in items] == picks  # per sample: (gold label, picked option), option 1 = positive
    assert score == f1_score(golds, picks) == lm_eval_f1(golds, picks)
    assert score != f1_score(golds, picks, average="macro")
    assert f1_macro(golds, picks) == f1_score(golds, picks, average="macro")


@pytest.mark.parametrize("name", WIC_PROMPTS + HS_PROMPTS)
def test_a_constant_predictor_scores_the_same_on_every_prompt_as_specified(
    mc_tasks: dict[str, object], name: str
) -> None:
    """Sample gold is balanced (12 of 24 positive), like a prompt-biased model's real test set.

    A model that always picks one option scores 0 upstream if that option is the negative one
    ("No", "B", "non hanno lo stesso significato"…) and 2·12/(24+12) = 66.67 if it is the
    positive one, so which option a prompt's wording attracts decides the score.  F1-macro
    gives both 1/3.
    """
    upstream, specified = {}, {}
    for option in (0, 1):
        score, items = _harness_score(mc_tasks[name], [option] * 24)
        upstream[option] = score
        specified[option] = f1_macro([g for g, _ in items], [p for _, p in items])
    assert upstream == {0: 0.0, 1: pytest.approx(2 / 3, abs=1e-15)}
    assert specified[0] == specified[1] == pytest.approx(1 / 3, abs=1e-15)


def test_sample_wic_and_hs_gold_are_balanced() -> None:
    for path, field in ((SAMPLE_DIR / "wic/test.jsonl", "label"), (SAMPLE_DIR / "hs/test_all.jsonl", "hs")):
        labels = _labels(path, field)
        assert labels.count(1) == labels.count(0) == 12


def test_constant_predictors_on_unbalanced_gold_differ_less_as_specified() -> None:
    # 3 positives in 8 (the 54.55 is 2·p/(1+p) at p = 3/8).
    golds = [1, 1, 1, 0, 0, 0, 0, 0]
    always_yes, always_no = [1] * 8, [0] * 8
    assert lm_eval_f1(golds, always_yes) == pytest.approx(6 / 11)  # 54.55
    assert lm_eval_f1(golds, always_no) == 0.0
    # F1-macro: p/(1+p) and (1-p)/(2-p); equal only when p = 1/2.
    assert f1_macro(golds, always_yes) == pytest.approx(3 / 11)  # 27.27
    assert f1_macro(golds, always_no) == pytest.approx(5 / 13)  # 38.46


# --------------------------------------------------------------------------- SA


def test_every_sa_prompt_aggregates_with_aggreg_sa() -> None:
    names = {only_metric(name)["aggregation"].__name__ for name in SA_PROMPTS}
    assert names == {"_aggreg_sa"}


def test_sentipolc_f1_equals_the_harness_sa_aggregation() -> None:
    # The harness passes (gold, picked) per sample; ``_aggreg_sa`` names them the other way
    # round, which F1 does not notice (it is symmetric in gold and predictions).
    aggregate = only_metric(SA_PROMPTS[0])["aggregation"]
    checked = 0
    for golds, preds in HAND_MADE[6:] + _random_cases(4, RANDOM_CASES, 5):
        assert sentipolc_f1(golds, preds) == aggregate(list(zip(golds, preds, strict=True))), (golds, preds)
        checked += 1
    assert checked == len(HAND_MADE[6:]) + RANDOM_CASES


def test_sa_upstream_is_the_paper_metric_mean_of_both_polarities_two_class_f1() -> None:
    # Options: 0 positive, 1 negative, 2 neutral, 3 mixed → (opos, oneg).
    golds = [0, 0, 1, 1, 2, 2, 3, 3]
    preds = [0, 3, 1, 2, 2, 0, 3, 1]
    opos_gold, opos_pred = [1, 1, 0, 0, 0, 0, 1, 1], [1, 1, 0, 0, 0, 1, 1, 0]
    oneg_gold, oneg_pred = [0, 0, 1, 1, 0, 0, 1, 1], [0, 1, 1, 0, 0, 0, 1, 1]
    f_pos = f1_score(opos_gold, opos_pred, average="macro")
    f_neg = f1_score(oneg_gold, oneg_pred, average="macro")
    aggregate = only_metric(SA_PROMPTS[0])["aggregation"]
    assert aggregate(list(zip(golds, preds, strict=True))) == pytest.approx((f_pos + f_neg) / 2, abs=1e-15)
    assert sentipolc_f1(golds, preds) == pytest.approx((f_pos + f_neg) / 2, abs=1e-15)
