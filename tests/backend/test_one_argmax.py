"""One argmax for the published answer, its per-sample score and ``rescore`` (issue 29).

lm-eval 0.4.13 picks a multiple-choice option with ``np.argmax(lls)`` (``api/task.py``): the
first NaN if any (an fp16 overflow), else the first of the highest.  The converter used Python's
``max``, which skips past a NaN: a published answer could disagree with ``acc``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from backend.tracks.evalita.convert import detail_records, details_files
from leaderboard.tracks.evalita.definition import SUITE, TASKS, TaskKind
from leaderboard.tracks.evalita.metric_sets import METRIC_SETS, MetricSet
from leaderboard.tracks.evalita.schema import parse_details
from leaderboard.tracks.evalita.specified import mc_prediction

NAN, INF = float("nan"), float("inf")

CASES = [
    ([-1.0, NAN, -2.0], 1),  # Python's max said 0
    ([-3.0, -1.0, -1.0], 1),  # an exact tie: the first
    ([-1.0, -1.0], 0),
    ([NAN, NAN], 0),
    ([-INF, -INF, -2.0], 2),
    ([-1.0, -INF, NAN], 2),
    ([-2.0, NAN, -1.0, NAN], 1),
]


def _sample(lls: list[float], gold: int) -> dict:
    return {
        "doc_id": 0,
        "arguments": [("Domanda?", f" {chr(65 + i)}") for i in range(len(lls))],
        "filtered_resps": [(ll, False) for ll in lls],
        "target": gold,
    }


@pytest.mark.parametrize(("lls", "expected"), CASES, ids=[repr(c[0]) for c in CASES])
def test_the_converter_picks_numpys_argmax(lls: list[float], expected: int) -> None:
    at = TASKS["at"]
    assert int(np.argmax(lls)) == expected  # the harness's pick
    assert mc_prediction(lls) == expected
    for gold in range(len(lls)):
        [record] = detail_records(at, at.prompts[0].harness_tasks[0], [_sample(lls, gold)])
        assert record.answer == record.choices[expected]
        assert record.score == (1.0 if gold == expected else 0.0)  # what the harness's acc says


def test_a_nan_answer_survives_the_details_file_and_rescoring_agrees() -> None:
    lls = [-1.0, NAN, -2.0]
    samples = {
        harness.name: [_sample(lls, 1)]
        if task.kind is TaskKind.MULTIPLE_CHOICE
        else [{"doc_id": 0, "target": "x", "arguments": [("t", {})], "filtered_resps": ["x"]}]
        for task in SUITE
        for prompt in task.prompts
        for harness in prompt.harness_tasks
    }
    files = details_files(samples)

    line = files["at_p1.jsonl"].decode()
    assert '"NaN"' in line  # valid JSON: the store's safe reader refuses a bare NaN
    [record] = parse_details(files["at_p1.jsonl"], "at_p1.jsonl")
    assert math.isnan(record.loglikelihoods[1]) and record.answer == "B" and record.score == 1.0
    accuracy = METRIC_SETS[MetricSet.LM_EVAL].metrics["at"].score([record])
    assert accuracy == 1.0  # rescore picks the same option the answer shows
