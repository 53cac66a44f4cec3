"""``python -m eval_queue`` on a fresh local store with a temp Hugging Face cache."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eval_queue.cli import main
from eval_queue.requests import EvalRequest
from tests.queue.conftest import REQUESTS_REPO, RESULTS_REPO
from tests.queue.fake_hub import FakeHub
from tests.queue.hf_cache import DEFAULT_SHA, make_cache_entry

ROOT = Path(__file__).resolve().parents[2]
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fresh store and a cache holding one model, offline, as on a GPU node."""
    make_cache_entry(tmp_path / "hf-home" / "hub", MODEL, shapes={"w": [135, 1000, 1000]})
    values = {
        "EVALITA_DATA_DIR": str(tmp_path / "data"),
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_OFFLINE": "1",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    return values


def request_files(env: dict[str, str]) -> list[Path]:
    root = Path(env["EVALITA_DATA_DIR"], "requests")
    # Hidden folders (the submitters' ledgers) are not request files.
    return sorted(
        p for p in root.rglob("*.json") if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def run(*args: str) -> tuple[int, str, str]:
    """The real entry point in a child process."""
    proc = subprocess.run(
        [sys.executable, "-m", "eval_queue", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_submit_writes_one_pending_request_then_refuses_the_duplicate(env: dict[str, str]) -> None:
    code, out, err = run("submit", MODEL, "--submitted-by", "maintainer")
    assert code == 0, err
    (path,) = request_files(env)
    request = json.loads(path.read_text())
    assert (request["status"], request["revision"], request["num_fewshot"]) == ("PENDING", DEFAULT_SHA, 0)
    assert (request["license"], request["params_b"]) == ("apache-2.0", 0.135)
    assert request["model"] in out

    code, out, err = run("submit", MODEL, "--submitted-by", "maintainer")
    assert code == 2
    assert err.startswith("error: duplicate:") and len(err.strip().splitlines()) == 1
    assert request_files(env) == [path]


def test_submitting_an_unknown_model_is_refused_and_writes_nothing(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["submit", "no-such-org/no-such-model-xyz"]) == 2
    assert "cannot verify no-such-org/no-such-model-xyz offline" in capsys.readouterr().err
    assert not Path(env["EVALITA_DATA_DIR"]).exists()


def test_bad_arguments_exit_2_with_one_line(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["submit", MODEL, "--fewshot", "five"])
    assert info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["submit", MODEL, "--precision", "int4"]) == 2
    assert "choose one of bfloat16, float16, float32" in capsys.readouterr().err
    assert main(["list", "--status", "DONE"]) == 2
    assert main(["cancel", "../../etc/passwd"]) == 2
    assert request_files(env) == []


def test_list_shows_requests_and_names_bad_files(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["submit", MODEL, "--fewshot", "0", "--fewshot", "5"]) == 0
    bad = Path(env["EVALITA_DATA_DIR"], "requests", "org", "x_eval_request_main_bfloat16_0shot.json")
    bad.parent.mkdir(parents=True)
    bad.write_text("{ truncated")
    capsys.readouterr()
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert out.count("PENDING") == 2
    assert "problems (1 file(s) skipped):" in out
    assert "org/x_eval_request_main_bfloat16_0shot.json: not valid JSON" in out
    assert main(["list", "--status", "running"]) == 0
    assert "(no RUNNING requests)" in capsys.readouterr().out


def test_cancel_and_requeue_by_id(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", MODEL]) == 0
    request_id = str(
        request_files(env)[0].relative_to(Path(env["EVALITA_DATA_DIR"], "requests"))
    ).removesuffix(".json")
    assert main(["cancel", request_id]) == 0
    assert f"{request_id}: CANCELLED" in capsys.readouterr().out
    assert main(["cancel", request_id]) == 2
    assert "already CANCELLED" in capsys.readouterr().err
    assert main(["requeue", request_id + ".json"]) == 0
    assert f"{request_id}: PENDING" in capsys.readouterr().out
    assert main(["requeue", "org/none_eval_request_main_bfloat16_0shot"]) == 2
    assert "no such request" in capsys.readouterr().err


def test_hub_errors_reach_the_user_without_the_token(
    fake_hub: FakeHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "hf_WRONGtokenForTests99"
    for name, value in {
        "EVALITA_REQUESTS_REPO": REQUESTS_REPO,
        "EVALITA_RESULTS_REPO": RESULTS_REPO,
        "HF_ENDPOINT": fake_hub.url,
        "HF_TOKEN": wrong,
    }.items():
        monkeypatch.setenv(name, value)
    assert main(["-v", "cancel", "org/m_eval_request_main_bfloat16_0shot"]) == 2  # reading needs no token
    request = EvalRequest(model="org/m", revision="main", submitted_time="2026-01-01T00:00:00Z")
    fake_hub.repos[("datasets", REQUESTS_REPO)].commit({request.path: request.to_json()})
    assert main(["-v", "list"]) == 0
    assert main(["-v", "cancel", request.request_id]) == 1  # writing does
    assert "not authorized (HTTP 401)" in capsys.readouterr().err
    monkeypatch.setenv("EVALITA_REQUESTS_REPO", "evalita/missing")
    assert main(["-v", "list"]) == 1
    captured = capsys.readouterr()
    assert "does not exist or the token cannot see it" in captured.err
    assert wrong not in captured.out + captured.err + caplog.text


# --------------------------------------------------------------------------- tracks and subsets


def _only_request(env: dict[str, str]) -> tuple[Path, dict[str, object]]:
    (path,) = request_files(env)
    return path, json.loads(path.read_text())


def test_submit_with_tasks_queues_a_subset_request_named_after_its_tasks(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["submit", MODEL, "--tasks", "sa,WIC"]) == 0
    path, request = _only_request(env)
    assert path.name.endswith("_bfloat16_0shot-wic-sa.json")
    assert (request["track"], request["tasks"]) == ("evalita", ["wic", "sa"])  # paper order
    # The full run of the same model is another request: a subset never takes its place.
    assert main(["submit", MODEL]) == 0
    assert len(request_files(env)) == 2


def test_submit_refuses_an_unknown_task_id_and_writes_nothing(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["submit", MODEL, "--tasks", "wic,sx"]) == 2
    err = capsys.readouterr().err
    assert "tasks" in err and "'sa'" in err and len(err.strip().splitlines()) == 1
    assert request_files(env) == []


def test_submit_to_another_track_writes_its_fields_and_its_file_name(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["submit", MODEL, "--track", "long-context", "--context", "50k,10k"]) == 0
    path, request = _only_request(env)
    assert path.name.endswith("_bfloat16_long-context-10k-50k.json")
    assert (request["track"], request["context_settings"], request["num_fewshot"]) == (
        "long-context",
        ["10k", "50k"],
        0,
    )
    target = _publish_run(env, "org/m/results_x_float32_0shot.json")
    assert main(["submit", MODEL, "--track", "judge", "--judge-target", target]) == 0
    judge = next(p for p in request_files(env) if "_judge-gen-" in p.name)
    assert json.loads(judge.read_text())["judge_mode"] == "generations"


def _publish_run(
    env: dict[str, str], path: str, *, details: bool = True, tasks: tuple[str, ...] = ("sum",)
) -> str:
    """An Evalita results file in the store's results folder (what a judge of generations targets)."""
    run = {"num_fewshot": 0, "data": "sample", "details_path": "org/m/x_float32_0shot" if details else None}
    body = {
        "schema": "evalita-llm-results/2",
        "track": "evalita",
        "model": {"id": "org/m"},
        "run": run,
        "tasks": {t: {"metric": "rouge1", "prompts": {}} for t in tasks},
    }
    file = Path(env["EVALITA_DATA_DIR"], "results", path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(body))
    return path


@pytest.mark.parametrize(
    "publish, says",
    [
        (None, "There is no results file"),
        ({"details": False}, "published no per-sample details"),
        ({"tasks": ("wic",)}, "is not an Evalita run with SUM outputs"),
    ],
)
def test_a_judge_of_a_run_that_cannot_be_judged_is_refused_at_submission(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], publish: dict[str, object] | None, says: str
) -> None:
    target = "org/m/results_y_float32_0shot.json"
    if publish is not None:
        _publish_run(env, target, **publish)  # type: ignore[arg-type]

    assert main(["submit", MODEL, "--track", "judge", "--judge-target", target]) == 2

    assert says in capsys.readouterr().err
    assert request_files(env) == []


@pytest.mark.parametrize(
    "args, says",
    [
        (["--track", "judge", "--fewshot", "5"], "no few-shot setting"),
        (["--track", "judge", "--tasks", "wic"], "tasks belongs to the evalita track"),
        (["--context", "10k"], "context_settings belongs to the long-context track"),
        (["--track", "marathon"], "unknown track 'marathon'"),
    ],
)
def test_submit_refuses_track_fields_that_do_not_fit(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    assert main(["submit", MODEL, *args]) == 2
    assert says in capsys.readouterr().err
    assert request_files(env) == []
