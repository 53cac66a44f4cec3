"""Stored details hold what rescoring needs: from a details record alone, both metric sets.

The harness's own tasks (built from their YAMLs on the bundled sample) log samples the way
``lm_eval.evaluator`` does (``doc_id``, ``doc``, ``target``, ``arguments``, ``filtered_resps`` and
the metrics of ``process_results``) for made-up model responses; the worker's
``backend.convert.detail_records`` turns them into details lines, which go through JSON.  From
those lines alone, the upstream score is reproduced exactly and the as-specified one computed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from backend.tracks.evalita.convert import detail_records
from leaderboard.tracks.evalita.definition import TASKS
from leaderboard.tracks.evalita.schema import DetailRecord
from leaderboard.tracks.evalita.specified import (
    f1_macro,
    lm_eval_f1,
    lm_eval_ner_f1,
    mc_gold,
    mc_prediction,
    ner_f1_macro,
    parse_ner_target,
    sentipolc_f1,
)
from tests.metrics.upstream import SAMPLE_DIR, mc_task

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")


def _logged_samples(task: Any, respond: Callable[[dict, list], list]) -> list[dict]:
    """What ``lm_eval.evaluator`` logs per document, for the responses ``respond`` makes up."""
    samples = []
    for doc_id, doc in enumerate(task.test_docs()):
        requests = task.construct_requests(doc, f"contesto {doc_id}")
        requests = requests if isinstance(requests, list) else [requests]
        responses = respond(doc, requests)
        metrics = task.process_results(doc, responses)
        samples.append(
            {
                "doc_id": doc_id,
                "doc": doc,
                "target": task.doc_to_target(doc),
                "arguments": [request.args for request in requests],
                "filtered_resps": responses,
                **metrics,
            }
        )
    return samples


def _stored(task_id: str, prompt: int, samples: list[dict], part: int = 0) -> list[DetailRecord]:
    spec = TASKS[task_id]
    harness = spec.prompts[prompt].harness_tasks[part]
    return [
        DetailRecord.model_validate_json(r.model_dump_json(exclude_none=True))
        for r in detail_records(spec, harness, samples)
    ]


def _random_lls(rng: random.Random) -> Callable[[dict, list], list]:
    return lambda doc, requests: [(rng.choice([-1.0, -2.5, rng.uniform(-9, 0)]), False) for _ in requests]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("datasets")


@pytest.mark.parametrize(
    ("task_id", "yaml_name", "files"),
    [
        ("wic", "_evalita-mp_wic_p3.yaml", {"test": "wic/test.jsonl", "dev": "wic/dev.jsonl"}),
        ("hs", "_evalita-mp_hs_p5.yaml", {"test_all": "hs/test_all.jsonl", "dev": "hs/dev.jsonl"}),
        ("sa", "_evalita-mp_sa_p4.yaml", {"test": "sa/test.jsonl", "train": "sa/train.jsonl"}),
    ],
)
def test_multiple_choice_details_rescore_both_sets(
    task_id: str, yaml_name: str, files: dict, cache: Path
) -> None:
    task = mc_task(yaml_name, {split: SAMPLE_DIR / path for split, path in files.items()}, cache)
    prompt = int(yaml_name[-6]) - 1
    for seed in range(5):
        samples = _logged_samples(task, _random_lls(random.Random(seed)))
        harness_score = task.aggregation()["f1"]([s["f1"] for s in samples])
        records = _stored(task_id, prompt, samples)
        golds = [mc_gold(r.target, r.choices) for r in records]
        preds = [mc_prediction(r.loglikelihoods) for r in records]
        assert list(zip(golds, preds, strict=True)) == [tuple(map(int, s["f1"])) for s in samples]
        upstream = sentipolc_f1 if task_id == "sa" else lm_eval_f1
        assert upstream(golds, preds) == harness_score
        assert 0.0 <= f1_macro(golds, preds) <= 1.0


@pytest.mark.parametrize("domain", ["adg", "fic", "wn"])
def test_ner_details_rescore_both_sets(domain: str, cache: Path) -> None:
    import lm_eval.api.task as api_task

    from tests.metrics.upstream import config

    cfg = config(f"_evalita-mp_ner_{domain}_p2.yaml")
    data = SAMPLE_DIR / "ner" / domain
    cfg.update(
        dataset_path="json",
        dataset_name=None,
        dataset_kwargs={
            "data_files": {s: str(data / f"{s}.jsonl") for s in ("reduced_test", "trial")},
            "cache_dir": str(cache),
        },
    )
    task = api_task.ConfigurableTask(config=cfg)
    rng = random.Random(domain)

    def answer(doc: dict, requests: list) -> list[str]:
        named = [f"{e['entity_text']}${e['type']}" for e in doc["entities"] if rng.random() < 0.7]
        named += rng.sample(["Roma$LOC", "Mario$PER", "Camera$ORG", "Torino$PER"], rng.randint(0, 2))
        rng.shuffle(named)
        return [", ".join(named) if named else rng.choice(["&&NOENT&&", ""])]

    for _ in range(5):
        samples = _logged_samples(task, answer)
        harness_score = task.aggregation()["f1"]([s["f1"] for s in samples])
        records = _stored("ner", 1, samples, part=["adg", "fic", "wn"].index(domain))
        assert {r.part for r in records} == {domain}
        golds = [parse_ner_target(r.target) for r in records]
        assert golds == [[(e["entity_text"], e["type"]) for e in s["doc"]["entities"]] for s in samples]
        answers = [r.answer for r in records]
        assert lm_eval_ner_f1(golds, answers) == harness_score
        assert 0.0 <= ner_f1_macro(golds, answers) <= 1.0


@pytest.mark.parametrize(
    ("task_id", "yaml_name", "files"),
    [
        ("ls", "_evalita-mp_ls_p2.yaml", {"test": "ls/test.jsonl", "dev": "ls/dev.jsonl"}),
        ("re", "_evalita-mp_re_p2.yaml", {"test": "re/test.jsonl", "dev": "re/dev.jsonl"}),
    ],
)
def test_ls_and_re_details_keep_the_gold_their_scores_need(
    task_id: str, yaml_name: str, files: dict, cache: Path
) -> None:
    """LS's target drops the annotator counts and RE's is ambiguous for a "35%": the structured
    gold (``gold``, from the logged document) is what rescoring reads."""
    from leaderboard.tracks.evalita.metric_sets import METRIC_SETS, MetricSet

    task = mc_task(yaml_name, {split: SAMPLE_DIR / path for split, path in files.items()}, cache)
    docs = list(task.test_docs())
    rng = random.Random(task_id)
    if task_id == "ls":
        words = sorted({a["word"] for d in docs for a in d["answers"]})
        answer = lambda doc, requests: [", ".join(rng.sample(words, rng.randint(0, 6)))]  # noqa: E731
    else:
        pairs = [f"{r[0]}${r[1]}" for d in docs for r in d["relations"]]
        answer = lambda doc, requests: [rng.choice(["&&NOREL&&", "%".join(rng.sample(pairs, 2))])]  # noqa: E731
    for _ in range(5):
        samples = _logged_samples(task, answer)
        harness_score = task.aggregation()["f1"]([s["f1"] for s in samples])
        records = _stored(task_id, 1, samples)
        assert all(r.gold is not None for r in records)
        assert METRIC_SETS[MetricSet.LM_EVAL].metrics[task_id].score(records) == harness_score
