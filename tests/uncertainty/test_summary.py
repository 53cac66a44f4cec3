"""The ``uncertainty`` block of a results file: what the worker writes, what the app reads back."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from backend.tracks.evalita.run import per_item_outputs
from eval_queue.errors import MalformedFileError
from leaderboard.core.items import ITEMS_FILE_NAME, items_from_parquet
from leaderboard.core.schema import ModelInfo
from leaderboard.core.summary import KeptDraws, UncertaintySummary, decode_draws, encode_draws
from leaderboard.core.uncertainty import DEFAULT_CONFIG
from leaderboard.tracks.evalita.cps_intervals import (
    METHOD_VERSION,
    TASK_DRAWS_KEPT,
    RunUncertainty,
    cps_run,
    mean_draws_key,
)
from leaderboard.tracks.evalita.definition import TASK_IDS, TASKS
from leaderboard.tracks.evalita.schema import EvalitaRunInfo, PromptScore, ResultsFile, TaskResult
from leaderboard.tracks.evalita.uncertainty import (
    EVALITA_KINDS,
    MEAN_CPS_FIGURE,
    MEAN_CPS_TIE_FIGURE,
    cps_figure,
    cps_tie_figure,
    evalita_summary,
    prompt_figure,
    summary_of,
)
from tests.support.synthetic.items import SMALL_SIZES, SyntheticSuite


@pytest.fixture(scope="module")
def run():
    return SyntheticSuite(SMALL_SIZES, seed=5).run(1, 0.6)


def _results(boot, summary: UncertaintySummary | None) -> ResultsFile:
    return ResultsFile(
        model=ModelInfo(id="org/model"),
        run=EvalitaRunInfo(num_fewshot=0),
        tasks={
            t: TaskResult(
                metric=TASKS[t].metric,
                prompts={
                    p: PromptScore(score=float(s)) for p, s in zip(b.prompts, b.prompt_scores, strict=True)
                },
            )
            for t, b in boot.tasks.items()
        },
        uncertainty=summary,
    )


def test_the_block_holds_every_interval_and_the_mean_cps_draws_paired_by_key(run):
    boot = cps_run(run, EVALITA_KINDS)
    kept = RunUncertainty.of(boot, TASK_IDS)
    summary = summary_of(kept, DEFAULT_CONFIG)
    assert (summary.seed, summary.n_resamples, summary.level) == (20250621, 1000, 0.95)
    assert summary.interval(prompt_figure("ner", "p2")) == kept.prompt_intervals["ner"]["p2"]
    assert summary.interval(cps_figure("sum")) == kept.cps_intervals["sum"]
    assert summary.interval(MEAN_CPS_FIGURE) == kept.mean_cps_interval
    draws = summary.draws[MEAN_CPS_FIGURE]
    assert draws.key == kept.mean_key
    # Kept as float32: within float32's precision of the computed draws.
    np.testing.assert_allclose(draws.values(), kept.mean_cps_draws, rtol=1e-6)
    tie = summary.draws[MEAN_CPS_TIE_FIGURE]
    assert tie.key == kept.mean_key and METHOD_VERSION in summary.method
    np.testing.assert_allclose(tie.values(), kept.mean_cps_tie_draws, rtol=1e-6)
    assert len(summary.intervals) == sum(len(t.prompts) for t in TASKS.values()) + len(TASKS) + 1


def test_the_block_keeps_each_tasks_first_resamples_under_the_tasks_own_key(run):
    boot = cps_run(run, EVALITA_KINDS)
    summary = summary_of(RunUncertainty.of(boot, TASK_IDS), DEFAULT_CONFIG)
    for task_id, task in boot.tasks.items():
        reflected, tie = summary.draws[cps_figure(task_id)], summary.draws[cps_tie_figure(task_id)]
        assert reflected.key == tie.key == task.draws_key
        np.testing.assert_allclose(reflected.values(), task.reflected[:TASK_DRAWS_KEPT], rtol=1e-6)
        np.testing.assert_allclose(tie.values(), task.tie_aware[:TASK_DRAWS_KEPT], rtol=1e-6)
    # The mean CPS's key is the key of the mean over every task's draws (what a custom average
    # over all ten tasks would carry), so the two are paired.
    assert summary.draws[MEAN_CPS_FIGURE].key == mean_draws_key(boot.tasks[t].draws_key for t in TASK_IDS)


def test_a_results_file_keeps_the_block_through_its_json(run):
    boot = cps_run(run, EVALITA_KINDS)
    summary = summary_of(RunUncertainty.of(boot, TASK_IDS), DEFAULT_CONFIG)
    data = _results(boot, summary).to_json()
    back = ResultsFile.from_json(data, "x.json")
    assert back.uncertainty == summary
    # The mean CPS's two draw sets are about 5 KB of base64 each; each task's two sets of its first
    # TASK_DRAWS_KEPT resamples about 1 KB each (21 KB for the ten tasks: the custom average's).
    assert len(data) < 50_000
    # Without per-item data the file says nothing of intervals (as every older file).
    assert b"uncertainty" not in _results(boot, None).to_json()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda u: u["intervals"].update({"tasks/te/cps": [0.6, 0.5]}), "low"),
        (lambda u: u["draws"]["mean_cps"].update({"float32": "not base64!"}), "draws"),
        (lambda u: u["draws"]["mean_cps"].update({"float32": encode_draws(np.array([np.inf]))}), "finite"),
        (lambda u: u.update({"n_resamples": 1}), "n_resamples"),
    ],
)
def test_a_broken_block_makes_the_file_malformed_never_a_made_up_interval(run, change, reason):
    boot = cps_run(run, EVALITA_KINDS)
    raw = json.loads(_results(boot, summary_of(RunUncertainty.of(boot, TASK_IDS), DEFAULT_CONFIG)).to_json())
    change(raw["uncertainty"])
    with pytest.raises(MalformedFileError) as caught:
        ResultsFile.from_json(json.dumps(raw).encode(), "bad.json")
    assert caught.value.path == "bad.json" and "uncertainty" in caught.value.reason


def test_draws_survive_their_encoding_as_float32():
    values = np.linspace(0.1, 0.9, 1000)
    assert np.array_equal(decode_draws(encode_draws(values)), values.astype(np.float32).astype(np.float64))


def test_the_draws_as_stored_are_float32_and_the_same_numbers_as_their_float64_values():
    kept = KeptDraws(key="k", float32=encode_draws(np.linspace(0.1, 0.9, 1000)))
    stored = kept.float32_values()
    assert stored.dtype == np.float32
    assert np.array_equal(stored.astype(np.float64), kept.values())


def test_intervals_are_refused_when_the_items_do_not_reproduce_the_published_scores(run):
    boot = cps_run(run, EVALITA_KINDS)
    published = {
        t: dict(zip(b.prompts, map(float, b.prompt_scores), strict=True)) for t, b in boot.tasks.items()
    }
    assert evalita_summary(run, published).intervals  # the same scores: intervals
    published["wic"]["p3"] += 0.01
    with pytest.raises(ValueError, match=r"wic/p3: items give"):
        evalita_summary(run, published)


def _samples(values: dict[str, list[float]]) -> dict[str, list[dict]]:
    te = TASKS["te"]
    return {
        p.harness_task_names[0]: [{"doc_id": i, "acc": v} for i, v in enumerate(values[p.id])]
        for p in te.prompts
    }


def test_the_runner_writes_the_items_file_and_the_block_from_the_logged_samples():
    te = TASKS["te"]
    correct = {p.id: [float((i + k) % 3 != 0) for i in range(30)] for k, p in enumerate(te.prompts)}
    published = {
        "te": TaskResult(
            metric="acc", prompts={p: PromptScore(score=float(np.mean(v))) for p, v in correct.items()}
        )
    }
    items, body = per_item_outputs(_samples(correct), [te], published)
    run = items_from_parquet(items[ITEMS_FILE_NAME])
    assert run.tasks["te"].n_items == 30 and run.tasks["te"].prompts == te.prompt_ids
    summary = body["uncertainty"]
    assert summary.interval(prompt_figure("te", "p1")) is not None and summary.interval(cps_figure("te"))
    assert MEAN_CPS_FIGURE not in summary.intervals  # a one-task run has no mean over the ten


def test_the_runner_publishes_no_interval_when_the_samples_disagree_with_the_scores(caplog):
    te = TASKS["te"]
    correct = {p.id: [1.0, 0.0, 1.0, 1.0] for p in te.prompts}
    published = {"te": TaskResult(metric="acc", prompts={p: PromptScore(score=0.5) for p in correct})}
    with caplog.at_level(logging.WARNING):
        assert per_item_outputs(_samples(correct), [te], published) == ({}, {})
    assert "no intervals for this run" in caplog.text
