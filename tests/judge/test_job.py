"""JudgeJob.from_request: a queue request's judge fields (docs/TRACKS.md) become a typed job."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from backend.options import HarnessError, ModelRef, RunOptions
from backend.tracks.judge import JudgeJob
from backend.tracks.judge.run import wants_chat_template
from eval_queue.requests import EvalRequest, ModelType, Precision
from leaderboard.tracks.judge.data import JudgeDataError
from leaderboard.tracks.judge.definition import JudgeMode, judge_variant
from tests.support.tiny_model import TinyModel


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


def test_a_generations_request_names_its_target_in_the_variant() -> None:
    target = "org/writer/results_2026-11-22T11-00-00Z_bfloat16_0shot.json"

    job = JudgeJob.from_request(_request(track="judge", judge_mode="generations", judge_target=target))

    assert job.mode is JudgeMode.GENERATIONS and job.target == target
    assert job.variant == judge_variant(JudgeMode.GENERATIONS, target)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"track": "judge", "judge_mode": "metaa"}, "Input should be 'meta' or 'generations'"),
        ({"track": "judge", "judge_mode": "generations"}, "needs judge_target"),
        ({"judge_mode": "meta"}, "judge_mode belongs to the judge track, not to evalita"),
    ],
)
def test_a_bad_judge_request_is_refused_with_a_clear_message(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _request(**extra)


def test_an_evalita_request_is_not_taken_for_a_judge_job() -> None:
    with pytest.raises(JudgeDataError, match="an evalita request, not a judge one"):
        JudgeJob.from_request(_request())


def test_a_judge_gets_the_chat_template_when_its_tokenizer_has_one(
    tiny_model: TinyModel, tmp_path: Path
) -> None:
    plain = ModelRef(str(tiny_model.folder), "main", "float32")
    chatty_folder = tmp_path / "chatty"
    shutil.copytree(tiny_model.folder, chatty_folder)
    config_path = chatty_folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config["chat_template"] = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    config_path.write_text(json.dumps(config))
    chatty = ModelRef(str(chatty_folder), "main", "float32")

    assert wants_chat_template(plain, RunOptions()) is False
    assert wants_chat_template(plain, RunOptions(apply_chat_template=True)) is True
    assert wants_chat_template(chatty, RunOptions()) is True
    with pytest.raises(HarnessError, match="could not read the tokenizer"):
        wants_chat_template(ModelRef(str(tmp_path / "missing"), "main", "float32"), RunOptions())
