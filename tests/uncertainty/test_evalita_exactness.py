"""Every Evalita metric, aggregated from stored per-item statistics, equals lm-eval's own aggregation.

The per-sample values are what lm-eval's ``process_results`` produce (for NER, REL and LS the
real ``utils`` functions run on synthetic documents and answers); the reference is the
aggregation function the task YAML names, imported from lm-eval.  Compared bit for bit, after a
round trip through the per-item Parquet file.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from leaderboard.core.items import ItemId, RunItems, TaskItems, items_from_parquet, items_to_parquet
from leaderboard.core.uncertainty import bootstrap_task
from leaderboard.tracks.evalita.definition import TASKS
from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS, EVALITA_METRICS, evalita_task_items

lm_metrics = pytest.importorskip("lm_eval.api.metrics")
evalita_metrics = pytest.importorskip("lm_eval.tasks.evalita_llm.metrics")
evalita_utils = pytest.importorskip("lm_eval.tasks.evalita_llm.utils")


def harness(values: Sequence[Any], aggregation: Callable[[list[Any]], float]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn's zero-division warnings
        return float(aggregation(list(values)))


def stored_scores(task_id: str, per_prompt: Sequence[Sequence[Any]], part_values=None) -> list[float]:
    """Each prompt's score from the per-item file (values → records → stats → Parquet → aggregate)."""
    task = TASKS[task_id]
    key = EVALITA_METRICS[task_id].sample_key
    samples: dict[str, list[dict[str, Any]]] = {}
    for prompt, values in zip(task.prompts, per_prompt, strict=False):
        for h in prompt.harness_tasks:
            chosen = values if h.part is None else part_values[prompt.id][h.part]
            samples[h.name] = [{"doc_id": i, key: v} for i, v in enumerate(chosen)]
    # Prompts beyond those given repeat the first one's values (every prompt must be present).
    for prompt in task.prompts[len(per_prompt) :]:
        for h in prompt.harness_tasks:
            first = task.prompts[0].harness_tasks[
                [x.part for x in task.prompts[0].harness_tasks].index(h.part)
            ]
            samples[h.name] = samples[first.name]
    items = evalita_task_items(task, samples)
    assert items is not None
    items = items_from_parquet(items_to_parquet(RunItems("evalita", {task_id: items}))).tasks[task_id]
    return [float(x) for x in bootstrap_task(items, EVALITA_KINDS).prompt_scores]


def one_part_score(task_id: str, values: Sequence[Any]) -> float:
    """The score of one harness task (one NER domain) from its per-item file."""
    metric = EVALITA_METRICS[task_id]
    items = TaskItems.build(
        task_id,
        metric.kind.name,
        {"p1": {ItemId("adg", i): metric.stats(v) for i, v in enumerate(values)}},
        labels=metric.labels,
    )
    items = items_from_parquet(items_to_parquet(RunItems("evalita", {task_id: items}))).tasks[task_id]
    return float(bootstrap_task(items, EVALITA_KINDS).prompt_scores[0])


def check(task_id: str, values: Sequence[Any], aggregation: Callable[[list[Any]], float]) -> None:
    ours = one_part_score(task_id, values) if task_id == "ner" else stored_scores(task_id, [values])[0]
    assert ours == harness(values, aggregation)


# --------------------------------------------------------------------------- accuracy and means


@pytest.mark.parametrize("task_id", ["te", "faq", "at"])
def test_accuracy_equals_harness_mean(task_id):
    rng = np.random.default_rng(1)
    for n in (1, 3, 17, 400):
        values = [float(x) for x in rng.integers(0, 2, n)]
        check(task_id, values, lm_metrics.mean)
    check(task_id, [0.0] * 5, lm_metrics.mean)
    check(task_id, [1.0] * 5, lm_metrics.mean)


def test_rouge_mean_equals_harness_mean_to_the_last_bit():
    rng = np.random.default_rng(2)
    for n in (1, 2, 10, 1000, 8437):
        values = [float(x) for x in rng.random(n)]
        check("sum", values, lm_metrics.mean)


# --------------------------------------------------------------------------- binary F1 (WIC, HS)


@pytest.mark.parametrize("task_id", ["wic", "hs"])
def test_binary_f1_equals_harness_f1(task_id):
    rng = np.random.default_rng(3)
    hand_made = [
        [(0, 0), (0, 0)],  # label 1 nowhere: sklearn's zero division gives 0
        [(1, 1)],
        [(1, 0), (0, 1)],
        [(1, 1), (1, 0), (0, 1), (0, 0)],
        [(0, 1), (0, 1), (0, 0)],
    ]
    for values in hand_made:
        check(task_id, values, lm_metrics.f1_score)
    for n in (1, 5, 30, 500, 1763):
        values = [(int(g), int(p)) for g, p in rng.integers(0, 2, (n, 2))]
        check(task_id, values, lm_metrics.f1_score)


# --------------------------------------------------------------------------- SA (_aggreg_sa)


def test_sentiment_f1_equals_harness_aggreg_sa():
    rng = np.random.default_rng(4)
    hand_made = [
        [(0, 0)] * 4,  # one class: both views have one label present
        [(0, 2), (2, 0), (2, 2)],  # oneg view all 0
        [(3, 3), (1, 1)],  # oneg view all 1
        [(0, 1), (1, 2), (2, 3), (3, 0)],
        [(3, 0), (3, 1), (3, 2)],
    ]
    for values in hand_made:
        check("sa", values, evalita_metrics._aggreg_sa)
    for n in (1, 2, 6, 40, 2000):
        for _ in range(3):
            values = [(int(g), int(p)) for g, p in rng.integers(0, 4, (n, 2))]
            check("sa", values, evalita_metrics._aggreg_sa)


# --------------------------------------------------------------------------- NER, REL, LS through utils


ENTITIES = [("Roma", "LOC"), ("Cavour", "PER"), ("Fiat", "ORG"), ("Napoleone III", "PER"), ("Milano", "LOC")]


def ner_case(r: random.Random) -> tuple[dict[str, Any], str]:
    gold = [{"entity_text": t, "type": k} for t, k in r.sample(ENTITIES, r.randint(0, 4))]
    choice = r.random()
    if choice < 0.1:
        return {"entities": gold}, "&&NOENT&&"
    if choice < 0.15:
        return {"entities": gold}, ""
    answer = []
    for e in gold:
        if r.random() < 0.6:
            kind = e["type"] if r.random() < 0.8 else r.choice(["PER", "LOC", "ORG", "MISC"])
            answer.append(f"{e['entity_text']}${kind}")
    for _ in range(r.randint(0, 3)):
        text, kind = r.choice(ENTITIES)
        answer.append(f"{text}${kind}" if r.random() < 0.8 else text)
    r.shuffle(answer)
    return {"entities": gold}, ", ".join(answer)


def ner_values(seed: int, n: int) -> list[Any]:
    r = random.Random(seed)
    return [
        evalita_utils.ner_process_results(doc, [answer])["f1"]
        for doc, answer in (ner_case(r) for _ in range(n))
    ]


def test_ner_f1_equals_harness_aggreg_ner():
    hand_made = [
        [([0], [0]), ([1], [1])],  # no "O": the highest present label (LOC) is the one dropped
        [([0, 0], [0, 0])],  # one label present
        [([3], [3])],  # only "O"
        [([3, 2], [0, 3])],
    ]
    for values in hand_made:
        check("ner", values, evalita_metrics._aggreg_ner)
    for seed in range(40):
        check("ner", ner_values(seed, 1 + seed * 7), evalita_metrics._aggreg_ner)


def test_ner_prompt_score_weights_domains_by_size_like_the_results_file():
    from backend.tracks.evalita import convert

    sizes = {"adg": 21, "fic": 37, "wn": 52}
    part_values = {
        p.id: {part: ner_values(100 + 10 * i + j, n) for j, (part, n) in enumerate(sizes.items())}
        for i, p in enumerate(TASKS["ner"].prompts)
    }
    ours = stored_scores("ner", [[], []], part_values)
    for prompt, score in zip(TASKS["ner"].prompts, ours, strict=True):
        results = {
            h.name: {"f1,none": harness(part_values[prompt.id][h.part], evalita_metrics._aggreg_ner)}
            for h in prompt.harness_tasks
        }
        n_samples = {h.name: {"effective": sizes[h.part]} for h in prompt.harness_tasks}
        published = convert.prompt_score(TASKS["ner"], prompt, results, n_samples).score
        upstream = lm_metrics.aggregate_subtask_metrics(
            [results[h.name]["f1,none"] for h in prompt.harness_tasks], list(sizes.values())
        )
        assert score == published == upstream


RELATIONS = [["negativi", "esami"], ["12 mg", "emoglobina"], ["positivo", "BK"], ["nella norma", "ECG"]]


def re_values(seed: int, n: int) -> list[Any]:
    r = random.Random(seed)
    values = []
    for _ in range(n):
        gold = r.sample(RELATIONS, r.randint(0, 3))
        choice = r.random()
        if choice < 0.15:
            answer = "&&NOREL&&"
        elif choice < 0.2:
            answer = ""
        else:
            found = [g for g in gold if r.random() < 0.6] + r.sample(RELATIONS, r.randint(0, 2))
            answer = "%".join(f"{a}${b}" if r.random() < 0.9 else a for a, b in found)
        values.append(evalita_utils.rel_process_results_v3({"relations": gold}, [answer])["f1"])
    return values


def test_relation_f1_equals_harness_aggreg_rel():
    for values in ([([0], [0])], [([1, 1], [1, 0])], [([0, 1], [1, 0]), ([1], [1])]):
        check("re", values, evalita_metrics._aggreg_rel)
    for seed in range(40):
        check("re", re_values(seed, 1 + seed * 5), evalita_metrics._aggreg_rel)


SYNONYMS = ["casa", "abitazione", "dimora", "alloggio", "tetto", "edificio"]


def ls_values(seed: int, n: int) -> list[Any]:
    r = random.Random(seed)
    values = []
    for _ in range(n):
        answers = [{"word": w, "count": r.randint(1, 5)} for w in r.sample(SYNONYMS, r.randint(0, 4))]
        said = r.sample(SYNONYMS, r.randint(0, 5))
        answer = ", ".join(said) + ("." if said and r.random() < 0.5 else "")
        values.append(evalita_utils.ls_process_results({"answers": answers}, [answer])["f1"])
    return values


def test_lexical_substitution_f1_equals_harness_aggreg_ls():
    hand_made = [
        [(0, 0, 0)],  # |A| = |T| = 0, precision + recall = 0
        [(0.5, 1, 0)],  # no annotation anywhere: recall divides by 1
        [(0.25, 0, 1), (0.0, 1, 1)],
    ]
    for values in hand_made:
        check("ls", values, evalita_metrics._aggreg_ls)
    for seed in range(40):
        check("ls", ls_values(seed, 1 + seed * 9), evalita_metrics._aggreg_ls)


def test_every_prompt_keeps_its_own_score():
    rng = np.random.default_rng(5)
    per_prompt = [[float(x) for x in rng.integers(0, 2, 50)] for _ in TASKS["te"].prompts]
    ours = stored_scores("te", per_prompt)
    assert ours == [harness(v, lm_metrics.mean) for v in per_prompt]
