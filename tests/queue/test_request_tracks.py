"""The track envelope of request files (docs/TRACKS.md): old files stay valid, both name forms round-trip."""

from __future__ import annotations

import json

import pytest

from eval_queue.errors import MalformedFileError
from eval_queue.requests import EvalRequest, Precision, parse_request_path, request_path
from leaderboard.tracks.evalita.definition import EvalitaTask
from leaderboard.tracks.judge.definition import JudgeMode
from leaderboard.tracks.long_context.definition import ContextSetting

NOW = "2026-01-01T00:00:00Z"


def _request(**fields: object) -> EvalRequest:
    return EvalRequest.model_validate(
        {"model": "org/m", "revision": "a" * 40, "submitted_time": NOW, **fields}
    )


def test_a_request_file_written_before_tracks_is_an_evalita_request() -> None:
    old = {"model": "org/m", "revision": "main", "num_fewshot": 5, "submitted_time": NOW, "status": "PENDING"}
    path = "org/m_eval_request_main_bfloat16_5shot.json"
    request = EvalRequest.from_json(json.dumps(old).encode(), path)
    assert (request.track, request.options.tasks, request.variant, request.path) == (
        "evalita",
        None,
        None,
        path,
    )


@pytest.mark.parametrize(
    "fields, name",
    [
        ({}, "m_eval_request_aaaaaaaaaaaa_bfloat16_0shot.json"),
        (
            {"num_fewshot": 5, "tasks": ["sa", "wic"]},
            "m_eval_request_aaaaaaaaaaaa_bfloat16_5shot-wic-sa.json",
        ),
        ({"track": "long-context"}, "m_eval_request_aaaaaaaaaaaa_bfloat16_long-context.json"),
        (
            {"track": "long-context", "context_settings": ["full", "10k"]},
            "m_eval_request_aaaaaaaaaaaa_bfloat16_long-context-10k-full.json",
        ),
        ({"track": "judge"}, "m_eval_request_aaaaaaaaaaaa_bfloat16_judge.json"),
    ],
)
def test_both_file_name_forms_round_trip(fields: dict[str, object], name: str) -> None:
    request = _request(**fields)
    assert request.path == f"org/{name}"
    parts = parse_request_path(request.path)
    assert (parts.org, parts.name, parts.precision, parts.track) == (
        "org",
        "m",
        Precision.BFLOAT16,
        request.track,
    )
    assert (parts.num_fewshot, parts.variant) == (request.num_fewshot, request.variant)
    assert EvalRequest.from_json(request.to_json(), request.path) == request


def test_a_judge_target_alone_means_judging_that_runs_generations() -> None:
    request = _request(track="judge", judge_target="org/a/results_1_float32_0shot.json")
    assert request.options.judge_mode is JudgeMode.GENERATIONS and request.variant.startswith("gen-")


def test_a_judge_of_generations_is_named_after_a_hash_of_its_target() -> None:
    one = _request(track="judge", judge_mode="generations", judge_target="org/a/results_1_float32_0shot.json")
    two = _request(track="judge", judge_mode="generations", judge_target="org/b/results_1_float32_0shot.json")
    assert one.path != two.path
    assert parse_request_path(one.path).variant == one.variant
    assert one.variant is not None and one.variant.startswith("gen-") and len(one.variant) == 16


def test_all_tasks_or_all_settings_is_the_whole_track_not_a_subset() -> None:
    assert _request(tasks=[t.value for t in EvalitaTask]).options.tasks is None
    assert (
        _request(track="long-context", context_settings=list(ContextSetting)).options.context_settings is None
    )


@pytest.mark.parametrize(
    "fields, says",
    [
        ({"track": "judge", "num_fewshot": 5}, "no few-shot setting"),
        ({"track": "judge", "tasks": ["wic"]}, "tasks belongs to the evalita track"),
        ({"context_settings": ["10k"]}, "context_settings belongs to the long-context track"),
        ({"track": "judge", "judge_mode": JudgeMode.GENERATIONS}, "needs judge_target"),
        (
            {"track": "judge", "judge_mode": "meta", "judge_target": "org/a/results_1.json"},
            "only used with judge_mode",
        ),
        ({"tasks": []}, "tasks is empty"),
        ({"tasks": ["wic", "nope"]}, "Input should be"),
        ({"track": "marathon"}, "Unknown track 'marathon'. Valid: evalita"),
    ],
)
def test_track_fields_that_do_not_fit_are_refused(fields: dict[str, object], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        _request(**fields)


def test_a_file_named_for_another_setting_than_its_fields_is_malformed() -> None:
    request = _request(tasks=["wic"])
    with pytest.raises(MalformedFileError, match="wrong place"):
        EvalRequest.from_json(request.to_json(), request_path("org/m", "a" * 40, "bfloat16", 0))


@pytest.mark.parametrize(
    "path",
    [
        "org/m_eval_request_main_bfloat16_long-context_5shot.json",
        "org/m_eval_request_main_bfloat16_marathon.json",
        "org/m_eval_request_main_bfloat16_0shot-WIC.json",
    ],
)
def test_names_of_neither_form_are_not_request_files(path: str) -> None:
    with pytest.raises(MalformedFileError, match="not named like a request file"):
        parse_request_path(path)
