"""The track registry: every spec well formed, every reference importable, the worker's stamp the same for all."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from backend.provenance import stamp_request
from backend.tracks import Evaluation
from eval_queue.errors import ConfigurationError
from eval_queue.requests import EvalRequest
from eval_queue.tracks import TRACKS, TrackRegistry, TrackSpec, UnknownTrackError, track_registry
from leaderboard.core.schema import ResultsEnvelope, RunInfo

REFERENCES = (
    "results_type",
    "runner",
    "check_data",
    "check_submission",
    "parse_results",
    "export",
    "snapshot",
    "about",
)


def test_every_track_name_is_registered_once_and_an_unknown_one_gets_a_suggestion() -> None:
    registry = track_registry()
    assert len(set(registry.names)) == len(registry.names) and set(TRACKS) <= set(registry.names)
    with pytest.raises(ConfigurationError, match="registered twice"):
        TrackRegistry([("judge", TRACKS["judge"]), ("judge", TRACKS["judge"])])
    with pytest.raises(UnknownTrackError, match="Did you mean judge"):
        registry.spec("jduge")


@pytest.mark.parametrize("name", list(TRACKS))
def test_every_reference_of_a_spec_imports(name: str) -> None:
    spec = track_registry().spec(name)
    assert isinstance(spec, TrackSpec) and spec.name == name and spec.label and spec.summary
    for field in REFERENCES:
        if getattr(spec, field) is not None:
            assert spec.load(field) is not None, f"{name}.{field}"
    for reference in spec.tabs:
        assert isinstance(track_registry().spec(name).tabs, tuple) and reference.count(":") == 1
    assert issubclass(spec.load("results_type"), ResultsEnvelope)
    assert name == spec.load("results_type").TRACK


#: The file each role has in every track's package (docs/ARCHITECTURE.md, "Tracks"): a newcomer
#: who knows where one track keeps its About text or its parser knows it for every track.
ROLE_FILES = {
    "about": "{package}.app.about:about_markdown",
    "parse_results": "{package}.app.results:parse_results_file",
    "export": "{package}.app.export:export_results",
    "results_type": "{package}.schema:",
    "contents": "{package}.contents:CONTENTS",
    "runner": "backend.tracks.{short}.run:evaluate",
}


@pytest.mark.parametrize("name", list(TRACKS))
def test_every_track_keeps_each_role_in_the_same_file(name: str) -> None:
    spec = track_registry().spec(name)
    package = TRACKS[name].rsplit(".spec:", 1)[0]
    for field, pattern in ROLE_FILES.items():
        reference = getattr(spec, field)
        expected = pattern.format(package=package, short=package.rsplit(".", 1)[1])
        if reference is not None:
            assert reference.startswith(expected), f"{name}.{field}: {reference}"


def test_request_fields_and_worker_flags_belong_to_one_track_each() -> None:
    specs = track_registry().specs()  # raises on a field or a flag claimed twice
    fields = [f.name for s in specs for f in s.option_fields]
    flags = [o.flag for s in specs for o in (*s.worker_options, *s.prefetch_options)]
    assert len(fields) == len(set(fields)) and len(flags) == len(set(flags))


def _evalita_body() -> dict:
    from leaderboard.tracks.evalita.schema import PromptScore, TaskResult

    return {"tasks": {"te": TaskResult(metric="acc", prompts={"p1": PromptScore(score=0.5, n=4)})}}


def _long_context_body() -> dict:
    from tests.long_context.test_schema_tables import PAPER_10K, _document

    return {"settings": _document("m", PAPER_10K["ANITA-8B"])["settings"]}


def _judge_body() -> dict:
    from tests.judge.test_results_tables import _meta_file

    return {"judge": _meta_file("org/j", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}).results.judge}


def _long_context_run() -> dict:
    from tests.long_context.test_schema_tables import PAPER_10K, _document

    return _document("m", PAPER_10K["ANITA-8B"])["run"]


def _contamination_body() -> dict:
    from tests.contamination.records import set_result

    return {"sets": {"te": set_result(0.3)}}


#: A body and the track's own run fields for each registered track: a new track adds its line here.
BODIES: dict[str, tuple[Callable[[], dict], Callable[[], dict]]] = {
    "evalita": (_evalita_body, dict),
    "long-context": (_long_context_body, _long_context_run),
    "judge": (_judge_body, dict),
    "contamination": (_contamination_body, lambda: {"sets": ["te"]}),
}


def test_every_registered_track_has_a_provenance_case() -> None:
    assert set(BODIES) == set(TRACKS)


@pytest.mark.parametrize("name", list(TRACKS))
def test_every_tracks_published_results_carry_the_workers_provenance(name: str) -> None:
    body, run_fields = BODIES[name]
    run = track_registry().spec(name).load("results_type").model_fields["run"].annotation
    run_block = run.model_validate(
        {**run_fields(), "num_fewshot": 0, "data": "sample", "finished_at": "2026-11-25T10:00:00Z"}
    )
    request = EvalRequest(
        model="org/m",
        revision="a" * 40,
        track=name,
        submitted_time="2026-11-25T09:00:00Z",
        run_stamp="2026-11-25T09:30:00Z",
        params_b=1.5,
        license="apache-2.0",
    )
    published = stamp_request(request, "w-7", Evaluation(run_block, body(), {"answers.jsonl": b"{}\n"}))
    results = published.results
    assert results.track == name and isinstance(results.run, RunInfo)
    assert (results.run.request_id, results.run.worker_id) == (request.request_id, "w-7")
    assert (results.model.id, results.model.revision, results.model.params_b) == ("org/m", "a" * 40, 1.5)
    folder = results.run.details_path
    assert (
        folder
        and folder.startswith("org/m/2026-11-25T09-30-00Z_")
        and list(published.details) == [f"{folder}/answers.jsonl"]
    )
    reread = json.loads(results.to_json())
    assert reread["run"]["worker_id"] == "w-7" and reread["track"] == name
