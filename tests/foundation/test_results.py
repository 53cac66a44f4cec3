"""Loading a results store: validation, newest run wins, comparability, cached refresh."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from eval_queue.errors import ConfigurationError, MalformedFileError
from eval_queue.storage.local import LocalStorage
from eval_queue.tracks import TRACKS, TrackRegistry, track_registry, track_spec
from leaderboard.core.schema import RESULTS_SCHEMA, results_file_path
from leaderboard.store import ResultsCache, read_results_store
from leaderboard.tracks.evalita.app.records import (
    RUN_COLUMNS,
    SCORE_COLUMNS,
    evalita_results,
    load_results,
)
from leaderboard.tracks.evalita.schema import ResultsFile
from tests.paper_tables import paper_results


def _write(store: LocalStorage, results: ResultsFile, finished_at: str) -> str:
    results = results.model_copy(update={"run": results.run.model_copy(update={"finished_at": finished_at})})
    path = results_file_path(results, finished_at)
    store.write(path, results.to_json())
    return path


def test_paper_store_loads_one_row_per_run_and_per_prompt(paper_store: LocalStorage) -> None:
    loaded = load_results(paper_store)
    assert loaded.problems == []
    assert list(loaded.runs.columns) == list(RUN_COLUMNS)
    assert list(loaded.scores.columns) == list(SCORE_COLUMNS)
    assert len(loaded.runs) == 12
    assert len(loaded.scores) == 12 * (6 * 6 + 4 * 2)
    assert loaded.runs["comparable"].all()
    te = loaded.scores.query(
        "model == 'paper-dev/LLM-5' and num_fewshot == 0 and task == 'te' and prompt == 'p2'"
    )
    assert te["score"].tolist() == [pytest.approx(0.7875)]


def test_paper_na_scores_load_as_missing_not_zero(paper_store: LocalStorage) -> None:
    scores = load_results(paper_store).scores
    na = scores.query("model == 'paper-dev/LLM-1' and num_fewshot == 5 and task == 'sum'")
    assert len(na) == 2
    assert na["score"].isna().all()


def test_malformed_file_is_named_in_a_warning_and_the_rest_load(
    paper_store: LocalStorage, caplog: pytest.LogCaptureFixture
) -> None:
    paper_store.write(
        "broken/model/results_2025-02-01T00-00-00Z.json", b'{"schema": "evalita-llm-results/1", '
    )
    paper_store.write(
        "future/model/results_2025-02-01T00-00-00Z.json", b'{"schema": "evalita-llm-results/9"}'
    )
    bad_score = paper_results("LLM-3", 0).to_json().replace(b'"score": 0.5955', b'"score": 59.55')
    paper_store.write("percent/model/results_2025-02-01T00-00-00Z.json", bad_score)
    with caplog.at_level(logging.WARNING, logger="leaderboard.tracks.evalita.app.records"):
        loaded = load_results(paper_store)
    bad = sorted(problem.path for problem in loaded.problems)
    assert bad == [
        "broken/model/results_2025-02-01T00-00-00Z.json",
        "future/model/results_2025-02-01T00-00-00Z.json",
        "percent/model/results_2025-02-01T00-00-00Z.json",
    ]
    for path in bad:
        assert path in caplog.text
    assert "unknown schema 'evalita-llm-results/9'" in caplog.text
    assert "outside [0, 1]" in caplog.text
    assert len(loaded.runs) == 12


def test_newest_file_wins_per_model_revision_precision_and_fewshot(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path)
    old = _write(store, paper_results("LLM-2", 0), "2025-01-01T00:00:00Z")
    new = _write(store, paper_results("LLM-4", 0).model_copy(update={"model": paper_results("LLM-2", 0).model}),
                 "2025-03-01T00:00:00Z")  # fmt: skip
    other_precision = paper_results("LLM-2", 0)
    other_precision.model.precision = "float16"
    kept = _write(store, other_precision, "2025-01-01T00:00:01Z")
    loaded = load_results(store)
    assert sorted(loaded.runs["results_path"]) == sorted([new, kept])
    assert loaded.superseded == (old,)
    te_p1 = loaded.scores.query("precision == 'bfloat16' and task == 'te' and prompt == 'p1'")["score"]
    assert te_p1.tolist() == [pytest.approx(0.6450)]  # LLM-4's score, from the newer file


def test_a_later_limited_or_sample_run_does_not_hide_the_official_full_run(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path)
    official = _write(store, paper_results("LLM-2", 0), "2025-01-01T00:00:00Z")
    limited = paper_results("LLM-2", 0)
    limited.run.limit = 10
    smoke = _write(store, limited, "2025-02-01T00:00:00Z")
    sample = paper_results("LLM-2", 0)
    sample.run.data = "sample"
    sample_path = _write(store, sample, "2025-03-01T00:00:00Z")
    loaded = load_results(store)
    assert loaded.runs["results_path"].tolist() == [official]
    assert loaded.runs["comparable"].tolist() == [True]
    assert loaded.superseded == tuple(sorted([smoke, sample_path]))


def test_a_run_without_a_comparable_file_keeps_its_newest_file(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path)
    first = paper_results("LLM-2", 0)
    first.run.limit = 10
    older = _write(store, first, "2025-01-01T00:00:00Z")
    second = paper_results("LLM-2", 0)
    second.run.data = "sample"
    newer = _write(store, second, "2025-02-01T00:00:00Z")
    loaded = load_results(store)
    assert loaded.runs["results_path"].tolist() == [newer]
    assert loaded.superseded == (older,)


def test_limited_or_sample_runs_are_flagged_not_comparable(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path)
    limited = paper_results("LLM-1", 0)
    limited.run.limit = 10
    sample = paper_results("LLM-2", 0)
    sample.run.data = "sample"
    _write(store, limited, "2025-01-01T00:00:00Z")
    _write(store, sample, "2025-01-01T00:00:00Z")
    _write(store, paper_results("LLM-3", 0), "2025-01-01T00:00:00Z")
    runs = load_results(store).runs.set_index("model")
    assert runs["comparable"].to_dict() == {
        "paper-dev/LLM-1": False,
        "paper-dev/LLM-2": False,
        "paper-dev/LLM-3": True,
    }


def test_refresh_reparses_only_changed_files(paper_store: LocalStorage) -> None:
    cache = ResultsCache()
    load_results(paper_store, cache)
    assert cache.parsed_count == 12
    load_results(paper_store, cache)
    assert cache.parsed_count == 12
    changed = paper_results("LLM-6", 5)
    changed.tasks["te"].prompts["p1"].score = 0.99
    rewritten = results_file_path(changed, "2025-01-11T12:00:00Z")
    paper_store.write(rewritten, changed.to_json())
    loaded = load_results(paper_store, cache)
    assert cache.parsed_count == 13
    score = loaded.scores.query(
        "model == 'paper-dev/LLM-6' and num_fewshot == 5 and task == 'te' and prompt == 'p1'"
    )
    assert score["score"].tolist() == [0.99]
    paper_store.delete(rewritten)
    assert len(load_results(paper_store, cache).runs) == 11


def test_unknown_tasks_prompts_and_foreign_metrics_are_reported_and_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = LocalStorage(tmp_path)
    results = paper_results("LLM-1", 0)
    results.tasks["xx"] = results.tasks["te"].model_copy()
    results.tasks["te"].prompts["p7"] = results.tasks["te"].prompts["p1"]
    results.tasks["at"].metric = "acc_norm"
    _write(store, results, "2025-01-01T00:00:00Z")
    with caplog.at_level(logging.WARNING, logger="leaderboard.tracks.evalita.app.records"):
        scores = load_results(store).scores
    assert set(scores["task"]) == {"wic", "te", "sa", "hs", "faq", "ls", "ner", "re", "sum"}
    assert len(scores.query("task == 'te'")) == 6
    assert "unknown task 'xx'" in caplog.text
    assert "unknown prompt 'p7'" in caplog.text
    assert "'acc_norm'" in caplog.text


def test_files_other_than_results_files_are_ignored(paper_store: LocalStorage) -> None:
    paper_store.write("details/paper-dev/LLM-1/run/te_p1.jsonl", b"not json\n")
    paper_store.write("README.md", b"# results\n")
    loaded = load_results(paper_store)
    assert loaded.problems == []
    assert len(loaded.runs) == 12


def test_an_empty_store_gives_empty_tables(tmp_path: Path) -> None:
    loaded = load_results(LocalStorage(tmp_path / "nothing"))
    assert loaded.runs.empty and loaded.scores.empty
    assert list(loaded.runs.columns) == list(RUN_COLUMNS)


def test_a_refresh_keeps_reporting_a_bad_file_but_warns_only_once(
    paper_store: LocalStorage, caplog: pytest.LogCaptureFixture
) -> None:
    paper_store.write("broken/model/results_2025-02-01T00-00-00Z.json", b"[]")
    cache = ResultsCache()
    with caplog.at_level(logging.WARNING, logger="leaderboard.tracks.evalita.app.records"):
        first = load_results(paper_store, cache)
        second = load_results(paper_store, cache)
    assert (
        [p.path for p in first.problems]
        == [p.path for p in second.problems]
        == ["broken/model/results_2025-02-01T00-00-00Z.json"]
    )
    assert caplog.text.count("broken/model/results_2025-02-01T00-00-00Z.json") == 1


def test_prompt_scores_hold_exactly_the_scores_rows(paper_store: LocalStorage) -> None:
    loaded = load_results(paper_store)
    from_mapping = {
        (*key, task, prompt): score
        for key, tasks in loaded.prompt_scores.items()
        for task, prompts in tasks.items()
        for prompt, score in prompts.items()
    }
    from_frame = {
        (row.model, row.revision, row.precision, int(row.num_fewshot), row.task, row.prompt): (
            None if pd.isna(row.score) else row.score
        )
        for row in loaded.scores.itertuples(index=False)
    }
    assert len(from_frame) == len(loaded.scores) > 0
    assert from_mapping == from_frame
    llm1_5shot = next(key for key in loaded.prompt_scores if key[0] == "paper-dev/LLM-1" and key[3] == 5)
    assert loaded.prompt_scores[llm1_5shot]["sum"] == {"p1": None, "p2": None}  # the paper's N/A


def test_prompt_scores_cannot_be_changed_by_a_caller(paper_store: LocalStorage) -> None:
    loaded = load_results(paper_store)
    key = next(iter(loaded.prompt_scores))
    with pytest.raises(TypeError):
        loaded.prompt_scores[key] = {}  # type: ignore[index]
    with pytest.raises(TypeError):
        loaded.prompt_scores[key]["te"] = {}  # type: ignore[index]
    with pytest.raises(TypeError):
        loaded.prompt_scores[key]["te"]["p1"] = 1.0  # type: ignore[index]


def test_runs_carry_the_run_block_of_their_results_file(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path)
    results = paper_results("LLM-1", 0)
    results.run = results.run.model_copy(
        update={
            "harness": "lm-eval 0.4.13",
            "backend": "hf",
            "hardware": "1× H100",
            "model_args": "pretrained=x,dtype=bfloat16",
            "batch_size": "auto",
            "chat_template": True,
            "started_at": "2025-01-01T00:00:00Z",
            "duration_s": 3600.5,
            "request_id": "paper-dev/LLM-1_eval_request_main_bfloat16_0shot",
            "limit": 10,
            "data": "sample",
        }
    )
    _write(store, results, "2025-01-01T01:00:00Z")
    run = load_results(store).runs.iloc[0]
    assert run["harness"] == "lm-eval 0.4.13"
    assert run["backend"] == "hf"
    assert run["hardware"] == "1× H100"
    assert run["model_args"] == "pretrained=x,dtype=bfloat16"
    assert run["batch_size"] == "auto"
    assert bool(run["chat_template"]) is True
    assert run["started_at"] == "2025-01-01T00:00:00Z"
    assert run["finished_at"] == "2025-01-01T01:00:00Z"
    assert run["duration_s"] == pytest.approx(3600.5)
    assert run["request_id"] == "paper-dev/LLM-1_eval_request_main_bfloat16_0shot"
    assert run["limit"] == 10 and run["data"] == "sample"


def test_a_file_without_a_schema_is_rejected_even_with_a_lookalike_key(tmp_path: Path) -> None:
    raw = paper_results("LLM-1", 0).model_dump(mode="json", by_alias=True)
    del raw["schema"]
    for payload in (raw, {**raw, "schema_": RESULTS_SCHEMA}):
        with pytest.raises(MalformedFileError, match="unknown schema None"):
            ResultsFile.from_json(json.dumps(payload).encode(), "org/model/results_x.json")


# --------------------------------------------------------------------------- the track envelope


def _judge_file(track: object = "judge", schema: str = RESULTS_SCHEMA) -> bytes:
    return json.dumps(
        {
            "schema": schema,
            "track": track,
            "model": {"id": "org/judge"},
            "run": {"num_fewshot": 0},
            "judge": {},
        }
    ).encode()


def test_files_are_written_in_schema_2_with_their_track(tmp_path: Path) -> None:
    written = json.loads(paper_results("LLM-1", 0).to_json())
    assert (written["schema"], written["track"]) == ("evalita-llm-results/2", "evalita")


def test_a_schema_1_file_loads_exactly_like_its_schema_2_twin(tmp_path: Path) -> None:
    v1, v2 = LocalStorage(tmp_path / "v1"), LocalStorage(tmp_path / "v2")
    path = _write(v2, paper_results("LLM-1", 0), "2025-01-01T00:00:00Z")
    raw = json.loads(v2.read(path))
    raw["schema"] = "evalita-llm-results/1"
    del raw["track"]
    v1.write(path, json.dumps(raw).encode())
    one, two = load_results(v1), load_results(v2)
    assert one.problems == two.problems == []
    pd.testing.assert_frame_equal(one.runs, two.runs)
    pd.testing.assert_frame_equal(one.scores, two.scores)


def test_a_file_of_another_track_is_not_an_evalita_problem(paper_store: LocalStorage) -> None:
    paper_store.write("org/judge/results_2025-02-01T00-00-00Z_float32_judge.json", _judge_file())
    loaded = load_results(paper_store)
    assert loaded.problems == [] and len(loaded.runs) == 12
    path = "org/judge/results_2025-02-01T00-00-00Z_float32_judge.json"
    # Its track's parser refuses it (an empty body): a judge problem, never an Evalita one.
    store = read_results_store(paper_store)
    assert [p.path for p in store.problems_of("judge")] == [path] and not store.envelope_problems
    # A reader without the judge track's parser lists it as unsupported.
    without_parser = TrackRegistry(
        [("evalita", TRACKS["evalita"]), ("judge", "tests.foundation.test_results:JUDGE_WITHOUT_PARSER")]
    )
    assert read_results_store(paper_store, registry=without_parser).unsupported == {path: "judge"}


@pytest.mark.parametrize(
    "data, says",
    [
        (_judge_file(track="marathon"), "unknown track 'marathon'"),
        (_judge_file(track=None), "must name its track"),
        (_judge_file(track="judge", schema="evalita-llm-results/1"), "are evalita files"),
        (b"[1, 2]", "not a JSON object"),
    ],
)
def test_a_file_whose_track_cannot_be_known_is_malformed_never_guessed(
    paper_store: LocalStorage, data: bytes, says: str
) -> None:
    paper_store.write("org/x/results_2025-02-01T00-00-00Z_float32_x.json", data)
    [problem] = load_results(paper_store).problems
    assert problem.path == "org/x/results_2025-02-01T00-00-00Z_float32_x.json" and says in problem.reason


def test_an_evalita_parser_refuses_a_file_of_another_track() -> None:
    with pytest.raises(MalformedFileError, match="a 'judge' results file, not a 'evalita' one"):
        ResultsFile.from_json(_judge_file(), "org/judge/results_x.json")


def parse_judge_model(data: bytes, path: str) -> str:
    """A stand-in results parser: a judge file's model id (``MalformedFileError`` without a judge body)."""
    raw = json.loads(data)
    if "judge" not in raw:
        raise MalformedFileError(path, "no judge body")
    return raw["model"]["id"]


JUDGE_WITHOUT_PARSER = replace(track_spec("judge"), parse_results=None)
JUDGE_MODEL_PARSER = replace(
    track_spec("judge"), parse_results="tests.foundation.test_results:parse_judge_model"
)


def test_a_track_registers_its_own_parser_and_the_reader_dispatches_to_it(paper_store: LocalStorage) -> None:
    registry = TrackRegistry(
        [("evalita", TRACKS["evalita"]), ("judge", "tests.foundation.test_results:JUDGE_MODEL_PARSER")]
    )
    good = "org/judge/results_2025-02-01T00-00-00Z_float32_judge.json"
    bad = "org/judge/results_2025-02-02T00-00-00Z_float32_judge.json"
    paper_store.write(good, _judge_file())
    paper_store.write(bad, _judge_file().replace(b'"judge": {}', b'"other": {}'))

    store = read_results_store(paper_store, registry=registry)
    assert dict(store.records["judge"]) == {good: "org/judge"}
    assert [p.path for p in store.problems_of("judge")] == [bad]
    assert len(store.records["evalita"]) == 12 and store.problems_of("evalita") == ()
    assert evalita_results(store).problems == []  # the judge's bad file is the judge's problem


def test_the_store_is_listed_once_for_every_track(paper_store: LocalStorage) -> None:
    calls: list[str] = []
    real_versions = paper_store.versions

    def counted_versions(prefix: str = "") -> dict[str, str]:
        calls.append(prefix)
        return real_versions(prefix)

    paper_store.versions = counted_versions  # type: ignore[method-assign]
    store = read_results_store(paper_store)
    assert len(evalita_results(store).runs) == 12
    assert calls == [""]


def test_registering_a_track_twice_is_an_error() -> None:
    with pytest.raises(ConfigurationError, match="registered twice"):
        TrackRegistry([("evalita", TRACKS["evalita"]), ("evalita", TRACKS["evalita"])])


def test_every_registered_track_has_a_results_parser_that_loads() -> None:
    registry = track_registry()
    assert set(TRACKS) <= set(registry.names) and "evalita" in registry
    for spec in registry:
        assert callable(spec.load("parse_results"))


def test_runs_show_what_ran_precision_asked_bootstrap_draws_and_subset(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path)
    results = paper_results("LLM-1", 0)
    results.model.precision = "float32"
    results.run = results.run.model_copy(
        update={
            "dtype": "float32",
            "requested_precision": "bfloat16",
            "bootstrap_iters": 1000,
            "max_gen_toks": 64,
            "device": "cpu",
            "tasks": ["wic", "sa"],
        }
    )
    _write(store, results, "2025-01-01T01:00:00Z")
    run = load_results(store).runs.iloc[0]
    assert (run["precision"], run["dtype"], run["requested_precision"]) == ("float32", "float32", "bfloat16")
    assert (run["bootstrap_iters"], run["max_gen_toks"], run["device"]) == (1000, 64, "cpu")
    assert run["tasks"] == ["wic", "sa"] and not run["comparable"]
