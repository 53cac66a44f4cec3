"""backend.tracks.evalita.convert: harness output → results file and details (pure; no torch, no lm-eval)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from backend.provenance import model_info, stamp, stamp_request
from backend.tracks import Evaluation
from backend.tracks.evalita.convert import (
    IncompleteRunError,
    detail_records,
    details_files,
    harness_score,
    task_results,
)
from eval_queue.requests import EvalRequest, ModelType, Precision
from leaderboard.core.schema import RunInfo
from leaderboard.tracks.evalita.definition import SUITE, TASKS, TaskKind, all_harness_tasks
from leaderboard.tracks.evalita.schema import DetailRecord, ResultsFile


def _request() -> EvalRequest:
    return EvalRequest(
        model="org/model",
        revision="a" * 40,
        precision=Precision.BFLOAT16,
        num_fewshot=0,
        model_type=ModelType.INSTRUCTION_TUNED,
        license="apache-2.0",
        params_b=0.135,
        submitted_time="2026-11-22T10:00:00Z",
    )


def _harness_output(score: float = 0.5) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, int]]]:
    results: dict[str, dict[str, Any]] = {}
    n_samples: dict[str, dict[str, int]] = {}
    for task in SUITE:
        for prompt in task.prompts:
            for harness in prompt.harness_tasks:
                results[harness.name] = {f"{task.metric},none": score, f"{task.metric}_stderr,none": "N/A"}
                n_samples[harness.name] = {"original": 10, "effective": 10}
    return results, n_samples


def build_results_file(request: EvalRequest, run: RunInfo, results, n_samples) -> ResultsFile:
    """The results file as the worker publishes it: the converted body, stamped with the request's model."""
    evaluation = Evaluation(run, {"tasks": task_results(results, n_samples)}, {})
    published = stamp(evaluation, track="evalita", model=model_info(request, run))
    assert isinstance(published.results, ResultsFile)
    return published.results


def _run() -> RunInfo:
    return RunInfo(num_fewshot=0, data="sample", limit=10, finished_at="2026-11-22T11:00:00Z")


def test_every_task_and_prompt_of_the_suite_is_converted() -> None:
    results, n_samples = _harness_output()
    parsed = build_results_file(_request(), _run(), results, n_samples)

    reread = ResultsFile.from_json(parsed.to_json(), "x.json")
    assert list(reread.tasks) == [task.id for task in SUITE]
    for task in SUITE:
        expected = 6 if task.kind is TaskKind.MULTIPLE_CHOICE else 2
        assert len(reread.tasks[task.id].prompts) == expected
        assert reread.tasks[task.id].metric == task.metric
    assert reread.tasks["sum"].metric == "rouge1"
    assert reread.model.model_type == "instruction-tuned"
    assert reread.tasks["te"].prompts["p1"].stderr is None  # "N/A" from the harness


def test_ner_prompt_is_the_size_weighted_f1_of_its_three_domains() -> None:
    results, n_samples = _harness_output()
    for part, (f1, n) in {"adg": (0.2, 10), "fic": (0.5, 30), "wn": (0.8, 60)}.items():
        results[f"evalita-mp_ner_{part}_p1"]["f1,none"] = f1
        n_samples[f"evalita-mp_ner_{part}_p1"] = {"original": 100, "effective": n}

    ner = build_results_file(_request(), _run(), results, n_samples).tasks["ner"].prompts["p1"]

    assert ner.score == pytest.approx((0.2 * 10 + 0.5 * 30 + 0.8 * 60) / 100)
    assert ner.n == 100
    assert ner.parts == {"adg": 0.2, "fic": 0.5, "wn": 0.8}


def test_a_missing_prompt_makes_the_run_incomplete() -> None:
    results, n_samples = _harness_output()
    del results["evalita-mp_te_prompt-4"]
    del results["evalita-mp_ner_wn_p2"]

    with pytest.raises(IncompleteRunError) as caught:
        build_results_file(_request(), _run(), results, n_samples)
    assert "te/p4" in str(caught.value) and "ner/p2" in str(caught.value)


@pytest.mark.parametrize("bad", [math.nan, None, 1.5, -0.1, "N/A"])
def test_an_unusable_score_makes_the_run_incomplete(bad: object) -> None:
    results, n_samples = _harness_output()
    results["evalita-mp_sa_prompt-2"]["f1,none"] = bad

    with pytest.raises(IncompleteRunError, match="evalita-mp_sa_prompt-2"):
        build_results_file(_request(), _run(), results, n_samples)


def test_a_task_that_evaluated_no_documents_is_incomplete() -> None:
    with pytest.raises(IncompleteRunError, match="no documents"):
        harness_score({"t": {"acc,none": 0.5}}, {"t": {"original": 0, "effective": 0}}, "t", "acc")


def test_multiple_choice_detail_names_the_picked_and_the_gold_option() -> None:
    sample = {
        "doc_id": 3,
        "target": 1,
        "arguments": [("Domanda?", " Sì"), ("Domanda?", " No")],
        "filtered_resps": [(-3.0, False), (-1.0, True)],
        "acc": 1.0,
    }
    te = TASKS["te"]
    [record] = detail_records(te, te.prompts[0].harness_tasks[0], [sample])

    assert record == DetailRecord(
        doc_id=3,
        input="Domanda?",
        answer="No",
        target="No",
        score=1.0,
        choices=["Sì", "No"],
        loglikelihoods=[-3.0, -1.0],
        gold=1,
    )


def test_generative_details_keep_the_answer_and_ner_files_merge_the_domains() -> None:
    generative = {
        "doc_id": 0,
        "target": "Roma$LOC",
        "arguments": [("Testo: Roma", {"until": ["\n"]})],
        "filtered_resps": ["Roma$LOC"],
        "f1": (["Roma$LOC"], ["Roma$LOC"]),
    }
    choice = {"doc_id": 0, "target": 0, "arguments": [("Q", " A")], "filtered_resps": [(-1.0, True)]}
    samples = {
        harness.name: [choice if task.kind is TaskKind.MULTIPLE_CHOICE else generative]
        for task in SUITE
        for prompt in task.prompts
        for harness in prompt.harness_tasks
    }
    assert len(samples) == len(all_harness_tasks())
    files = details_files(samples)
    claimed = _request().model_copy(update={"run_stamp": "2026-11-22T10:05:00Z"})
    published = stamp_request(claimed, "w1", Evaluation(_run(), {"tasks": {}}, files))
    # Named after the request's run stamp (its first claim), not the finish time: a rerun
    # of the request writes the same folder.
    folder = "org/model/2026-11-22T10-05-00Z_bfloat16_0shot"
    assert published.results.run.details_path == folder and set(published.details) == {
        f"{folder}/{n}" for n in files
    }
    assert len(files) == sum(len(task.prompts) for task in SUITE)
    ner_lines = files["ner_p1.jsonl"].decode().splitlines()
    assert [json.loads(line)["part"] for line in ner_lines] == ["adg", "fic", "wn"]
    record = DetailRecord.model_validate_json(ner_lines[0])
    assert (record.input, record.answer, record.target, record.score) == (
        "Testo: Roma",
        "Roma$LOC",
        "Roma$LOC",
        None,
    )


def test_details_for_a_prompt_without_samples_are_an_error() -> None:
    with pytest.raises(IncompleteRunError, match="wic/p1"):
        details_files({})
