"""The metric sets as data: what each scores, how a file's scores are read under each.

The metrics themselves are pinned in ``tests/metrics`` (F1-macro and the constant predictor:
``test_classification_f1.py``; NER's over-count: ``test_ner.py``; ROUGE on Italian tokens:
``test_rouge.py``; LS and RE: ``test_ls_re.py``); a real run end to end in
``test_rescore_real_run.py``.
"""

from __future__ import annotations

import pytest

from eval_queue.errors import EvalitaError, NotFoundError
from leaderboard.core.schema import ModelInfo
from leaderboard.tracks.evalita.definition import SUITE, TASKS
from leaderboard.tracks.evalita.metric_sets import (
    METRIC_SETS,
    MetricSet,
    MetricSetSpec,
    differing_tasks,
    expected_metric,
    has_current_block,
    metric_set,
    score_run,
    set_tasks,
)
from leaderboard.tracks.evalita.schema import (
    DetailRecord,
    EvalitaRunInfo,
    MetricSetBlock,
    PromptScore,
    ResultsFile,
    TaskResult,
)

AS_SPECIFIED = METRIC_SETS[MetricSet.AS_SPECIFIED]


def _file(score: float = 0.5, blocks: list[MetricSetBlock] | None = None) -> ResultsFile:
    tasks = {
        t.id: TaskResult(metric=t.metric, prompts={p: PromptScore(score=score) for p in t.prompt_ids})
        for t in SUITE
    }
    return ResultsFile(
        model=ModelInfo(id="org/m"), run=EvalitaRunInfo(num_fewshot=0), tasks=tasks, metric_sets=blocks or []
    )


def _block(
    version: int, score: float, tasks: tuple[str, ...] = ("wic", "hs", "ls", "ner", "re", "sum")
) -> MetricSetBlock:
    return MetricSetBlock(
        name="as-specified",
        version=version,
        computed_by="rescore",
        computed_at="2026-01-01T00:00:00Z",
        tasks={
            t: TaskResult(
                metric=AS_SPECIFIED.metrics[t].name,
                prompts={p: PromptScore(score=score) for p in TASKS[t].prompt_ids},
            )
            for t in tasks
        },
    )


def test_lm_eval_scores_every_task_under_the_harness_metric_names() -> None:
    lm_eval = METRIC_SETS[MetricSet.LM_EVAL]
    assert lm_eval.harness_native and lm_eval.version == 1
    assert {t: m.name for t, m in lm_eval.metrics.items()} == {t.id: t.metric for t in SUITE}


def test_as_specified_changes_wic_hs_ls_ner_re_and_sum_and_takes_the_rest_from_lm_eval() -> None:
    assert [t.id for t in differing_tasks()] == ["wic", "hs", "ls", "ner", "re", "sum"]
    assert AS_SPECIFIED.base is MetricSet.LM_EVAL and not AS_SPECIFIED.harness_native
    assert {t.id: expected_metric(t, "as-specified") for t in SUITE} == {
        "wic": "f1_macro",
        "te": "acc",
        "sa": "f1",
        "hs": "f1_macro",
        "faq": "acc",
        "at": "acc",
        "ls": "f1_oot_distinct",
        "ner": "f1_entity_macro",
        "re": "f1_relations",
        "sum": "rouge1_italian",
    }


def test_an_unknown_metric_set_lists_the_valid_ones() -> None:
    with pytest.raises(EvalitaError, match="choose among lm-eval, as-specified"):
        metric_set("as-published")


def test_lm_eval_scores_are_the_harness_numbers_whatever_blocks_the_file_has() -> None:
    results = _file(0.5, [_block(1, 0.9)])
    assert set_tasks(results, MetricSet.LM_EVAL) == results.tasks


def test_as_specified_merges_its_current_block_over_the_harness_numbers() -> None:
    tasks = set_tasks(_file(0.5, [_block(1, 0.1), _block(AS_SPECIFIED.version, 0.9)]), "as-specified")

    assert list(tasks) == [t.id for t in SUITE]
    assert {t: r.prompts["p1"].score for t, r in tasks.items()} == {
        t.id: 0.9 if t.id in ("wic", "hs", "ls", "ner", "re", "sum") else 0.5 for t in SUITE
    }


def test_without_a_block_of_the_current_version_the_changed_tasks_are_missing_never_borrowed() -> None:
    # A version-1 block (issue 20's metrics) is kept in the file but is not the current set's.
    for results in (_file(), _file(blocks=[_block(0, 0.9)]), _file(blocks=[_block(1, 0.9)])):
        assert not has_current_block(results, "as-specified")
        assert set(set_tasks(results, "as-specified")) == {"te", "sa", "faq", "at"}
    current = _block(AS_SPECIFIED.version, 0.9, ("wic",))
    assert set(set_tasks(_file(blocks=[current]), "as-specified")) == {"wic", "te", "sa", "faq", "at"}


def test_the_newest_block_of_a_version_is_the_one_read() -> None:
    results = _file(0.5, [_block(1, 0.1), _block(2, 0.2), _block(1, 0.3)])
    assert results.metric_set_block("as-specified", 1).tasks["wic"].prompts["p1"].score == 0.3


def _mc(doc_id: int, gold: int, picked: int) -> DetailRecord:
    lls = [-1.0 if i == picked else -2.0 for i in range(2)]
    return DetailRecord(
        doc_id=doc_id,
        input="",
        answer="",
        target=["No", "Sì"][gold],
        choices=["No", "Sì"],
        loglikelihoods=lls,
    )


def test_score_run_skips_a_task_whole_when_one_prompt_lacks_its_details() -> None:
    records = [_mc(0, 1, 1), _mc(1, 0, 1)]

    def read(task_id: str, prompt_id: str) -> list[DetailRecord]:
        if (task_id, prompt_id) == ("hs", "p4"):
            raise NotFoundError("hs_p4.jsonl")
        return records

    scores = score_run(AS_SPECIFIED, {"wic": ["p1", "p2"], "hs": ["p1", "p4"], "te": ["p1"]}, read)

    assert list(scores.tasks) == ["wic"]  # te is lm-eval's, hs lacks a file
    assert scores.tasks["wic"].prompts["p1"].score == pytest.approx((0.0 + 2 / 3) / 2)
    assert scores.skipped == {"hs": "no details file for prompt p4"}


def test_gold_index_in_the_details_wins_over_the_option_text() -> None:
    same_text = DetailRecord(
        doc_id=0, input="", answer="", target="A", choices=["A", "A"], loglikelihoods=[-1.0, -2.0], gold=1
    )
    spec = METRIC_SETS[MetricSet.LM_EVAL]
    scores = score_run(spec, {"te": ["p1"]}, lambda t, p: [same_text], only=["te"])
    assert scores.tasks["te"].prompts["p1"].score == 0.0
    without = same_text.model_copy(update={"gold": None})
    skipped = score_run(spec, {"te": ["p1"]}, lambda t, p: [without], only=["te"])
    assert "is not exactly one of the options" in skipped.skipped["te"]


def test_every_set_is_a_spec_of_its_own_id() -> None:
    assert all(isinstance(spec, MetricSetSpec) and spec.id is name for name, spec in METRIC_SETS.items())


def test_a_score_outside_the_unit_interval_is_skipped_with_its_value() -> None:
    # Upstream's LS credits a substitute named twice twice: 2.0 here.
    record = DetailRecord(
        doc_id=0, input="", answer="genuino, genuino", target="genuino", gold=[["genuino", 2]]
    )
    scores = score_run(METRIC_SETS[MetricSet.LM_EVAL], {"ls": ["p1"]}, lambda t, p: [record], only=["ls"])
    assert scores.tasks == {} and "outside [0, 1]" in scores.skipped["ls"] and "2.0" in scores.skipped["ls"]
