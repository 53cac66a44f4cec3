"""JudgeJob.from_request: a queue request's judge fields (docs/TRACKS.md) become a typed job."""

from __future__ import annotations

from typing import Any

import pytest

from backend.tracks.judge import JudgeJob
from eval_queue.requests import EvalRequest, ModelType, Precision
from leaderboard.tracks.judge.data import JudgeDataError
from leaderboard.tracks.judge.definition import JudgeMode, judge_variant


def _request(**extra: Any) -> EvalRequest:
    return EvalRequest(
        model="org/judge",
        revision="d" * 40,
        precision=Precision.BFLOAT16,
        num_fewshot=0,
        model_type=ModelType.INSTRUCTION_TUNED,
        license="apache-2.0",
        params_b=1.5,
        submitted_time="2026-11-23T10:00:00Z",
        **extra,
    )


def test_a_request_without_a_mode_judges_the_annotated_set() -> None:
    job = JudgeJob.from_request(_request(track="judge"))

    assert job.mode is JudgeMode.META and job.target is None and job.variant is None
    assert (job.judge.model_id, job.judge.revision, job.judge.precision) == (
        "org/judge",
        "d" * 40,
        "bfloat16",
    )
    assert (job.info.params_b, job.info.model_type) == (1.5, "instruction-tuned")
    assert job.request_id == _request().request_id


def test_a_generations_request_names_its_target_in_the_variant() -> None:
    target = "org/writer/results_2026-11-22T11-00-00Z_bfloat16_0shot.json"

    job = JudgeJob.from_request(_request(judge_mode="generations", judge_target=target))

    assert job.mode is JudgeMode.GENERATIONS and job.target == target
    assert job.variant == judge_variant(JudgeMode.GENERATIONS, target)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"judge_mode": "metaa"}, "unknown judge_mode 'metaa'; valid: meta, generations"),
        ({"judge_mode": "generations"}, "needs judge_target"),
    ],
)
def test_a_bad_judge_request_is_refused_with_a_clear_message(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(JudgeDataError, match=message):
        JudgeJob.from_request(_request(**extra))
