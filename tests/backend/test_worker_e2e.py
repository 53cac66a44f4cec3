"""End to end: submit → ``python -m backend --once`` (a subprocess, the real harness) → store.

The tiny random model sits in a temp hub cache and is submitted by id and sha like any
hub model; data are the project's bundled sample.  ``--limit 2 --max-gen-toks 8`` keep
the run to seconds while every task and prompt still runs.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from backend.config import ExitCode
from backend.tracks.evalita.data import SAMPLE_DATA_DIR
from eval_queue.queue import RequestQueue
from eval_queue.requests import Status, utc_now
from leaderboard.core.items import ITEMS_FILE_NAME, items_from_parquet
from leaderboard.tracks.evalita.cps_intervals import cps_run
from leaderboard.tracks.evalita.definition import SUITE, TaskKind
from leaderboard.tracks.evalita.schema import DetailRecord, ResultsFile
from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS, cps_figure, prompt_figure
from tests.backend.conftest import (
    SUITE_RUN_OPTIONS,
    Deployment,
    SuiteRun,
    read_lines_until,
    run_started,
    wait_for,
)
from tests.support.tiny_model import TinyModel

pytestmark = pytest.mark.slow

FAST = SUITE_RUN_OPTIONS


def test_once_runs_every_task_and_prompt_and_publishes_results_and_details(
    suite_run: SuiteRun, tiny_model: TinyModel
) -> None:
    # The run made once for this test and the rescore tests (tests/backend/conftest.py): submitted
    # with the command line, then ``python -m backend --once`` with the options of FAST.
    assert suite_run.worker.args[-len(FAST) - 1 :] == ["--once", *FAST]
    deployment, done = suite_run.deployment, suite_run.worker
    assert suite_run.submitted.returncode == 0, suite_run.submitted.stderr
    [request] = deployment.queue.listing().requests
    assert request.revision == tiny_model.revision

    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    finished = deployment.status(request)
    assert finished.status is Status.FINISHED and finished.results_path
    results = ResultsFile.from_json(
        deployment.stores.results.read(finished.results_path), finished.results_path
    )
    assert list(results.tasks) == [task.id for task in SUITE]
    checked = 0
    for task in SUITE:
        prompts = results.tasks[task.id].prompts
        assert list(prompts) == (
            ["p1", "p2", "p3", "p4", "p5", "p6"] if task.kind is TaskKind.MULTIPLE_CHOICE else ["p1", "p2"]
        )
        for score in prompts.values():
            assert score.score is not None and 0.0 <= score.score <= 1.0
            assert score.n is not None and score.n >= 1
            checked += 1
    assert checked == 36 + 8
    assert set(results.tasks["ner"].prompts["p1"].parts or {}) == {"adg", "fic", "wn"}
    assert results.tasks["sum"].metric == "rouge1"

    run = results.run
    assert (run.data, run.limit, run.num_fewshot, run.backend) == ("sample", 2, 0, "hf")
    assert not results.comparable
    assert run.harness == "lm-eval 0.4.13" and run.hardware and run.duration_s and run.duration_s > 0
    assert (
        run.model_args
        and f"revision={tiny_model.revision}" in run.model_args
        and "token" not in run.model_args
    )
    assert results.model.architecture == "LlamaForCausalLM"
    # What ran is what is shown: a bfloat16 request runs in float32 on CPU.
    assert (results.model.precision, run.dtype, run.requested_precision) == ("float32", "float32", "bfloat16")
    assert "_float32_0shot.json" in finished.results_path
    assert run.bootstrap_iters == 0 and run.worker_id and run.device == "cpu"
    assert run.tasks is None and not run.model_extra  # every field typed, none left as an extra

    assert run.details_path
    details = [p for p in deployment.stores.details.list(run.details_path) if p.endswith(".jsonl")]
    assert len(details) == 44
    for path in details:
        lines = deployment.stores.details.read(path).decode().splitlines()
        assert lines, path
        records = [DetailRecord.model_validate_json(line) for line in lines]
        assert all(r.input for r in records)
    mc = [
        json.loads(line)
        for line in deployment.stores.details.read(f"{run.details_path}/te_p1.jsonl").splitlines()
    ]
    assert mc[0]["answer"] in mc[0]["choices"] and mc[0]["target"] in mc[0]["choices"]

    # The per-item file beside the details, and every interval computed from it in the results.
    items = items_from_parquet(deployment.stores.details.read(f"{run.details_path}/{ITEMS_FILE_NAME}"))
    assert list(items.tasks) == sorted(task.id for task in SUITE)
    assert items.tasks["ner"].parts == ("adg", "fic", "wn") and items.tasks["te"].n_items == 2
    # WiC's pairs of one lemma and LS's contexts of one target word are drawn together.
    assert items.tasks["wic"].clusters is not None and items.tasks["ls"].clusters is not None
    assert items.tasks["te"].clusters is None
    uncertainty = results.uncertainty
    assert uncertainty is not None and (uncertainty.seed, uncertainty.n_resamples) == (20250621, 1000)
    boot = cps_run(items, EVALITA_KINDS)
    for task in SUITE:
        assert uncertainty.interval(cps_figure(task.id)) is not None
        points = dict(zip(boot.tasks[task.id].prompts, boot.tasks[task.id].prompt_scores, strict=True))
        for prompt_id, score in results.tasks[task.id].prompts.items():
            interval = uncertainty.interval(prompt_figure(task.id, prompt_id))
            assert interval is not None and 0.0 <= interval.low <= interval.high <= 1.0
            # The items reproduce the published score (the bootstrap's point is the harness's).
            assert points[prompt_id] == pytest.approx(score.score, abs=1e-12)
    assert uncertainty.interval("mean_cps") is not None and "mean_cps" in uncertainty.draws


def test_once_with_nothing_to_do_exits_0(deployment: Deployment) -> None:
    done = deployment.worker("--once")

    assert done.returncode == ExitCode.OK
    assert "nothing to do" in done.stderr


def test_a_model_that_cannot_load_is_failed_with_a_reason(deployment: Deployment) -> None:
    request = deployment.submit("evalita-tests/not-in-the-cache", "c" * 40)

    done = deployment.worker("--once", *FAST)

    assert done.returncode == ExitCode.FAILED
    failed = deployment.status(request)
    assert failed.status is Status.FAILED and failed.error
    first = failed.error.splitlines()[0]
    assert first.startswith("running the harness failed: HarnessError: could not load the model")
    assert "evalita-tests/not-in-the-cache" in first


def test_a_task_that_raises_is_failed_naming_the_task(
    deployment: Deployment, tiny_model: TinyModel, tmp_path: Path
) -> None:
    data = tmp_path / "broken-data"
    shutil.copytree(SAMPLE_DATA_DIR, data)
    rows = [
        json.loads(line) for line in (data / "wic" / "test.jsonl").read_text().splitlines() if line.strip()
    ]
    for row in rows:  # well-formed, but the prompt template slices sentence1[start1:end1]
        row["start1"] = "x"
    (data / "wic" / "test.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    request = deployment.submit(tiny_model.model_id, tiny_model.revision)

    done = deployment.worker("--once", "--data", f"local:{data}", *FAST)

    assert done.returncode == ExitCode.FAILED
    failed = deployment.status(request)
    assert failed.status is Status.FAILED and failed.error
    first = failed.error.splitlines()[0]
    assert first.startswith(
        "running the harness failed: HarnessError: could not load task evalita-mp_wic_prompt-1"
    )
    assert "TypeError: slice indices must be integers" in first
    assert deployment.stores.results.list() == []


def test_sigterm_hands_the_running_request_back_to_pending(
    deployment: Deployment, tiny_model: TinyModel, cleanup_processes: list[subprocess.Popen[str]]
) -> None:
    request = deployment.submit(tiny_model.model_id, tiny_model.revision)
    worker = deployment.start_worker("--once", *FAST)
    cleanup_processes.append(worker)

    read_lines_until(worker, "backend.runner: loading", timeout=120)
    worker.send_signal(signal.SIGTERM)

    assert worker.wait(timeout=120) == ExitCode.INTERRUPTED
    back = deployment.status(request)
    assert (back.status, back.claimed_by, back.attempts) == (Status.PENDING, None, 0)
    assert "SIGTERM" in back.history[-1]["note"]


def test_a_killed_worker_leaves_the_request_claimable_after_its_lease(
    deployment: Deployment, tiny_model: TinyModel, cleanup_processes: list[subprocess.Popen[str]]
) -> None:
    request = deployment.submit(tiny_model.model_id, tiny_model.revision)
    worker = deployment.start_worker("--once", "--lease-s", "600", *FAST)
    cleanup_processes.append(worker)
    # Killed once the run has started (phase ``running``), not merely claimed: a lease lost before
    # ``queue.start`` is handed back uncounted (attempts stays 0, see eval_queue.queue), and a kill
    # right after the claim (status RUNNING, phase ``claimed``) made this test fail under load.
    wait_for(run_started(deployment, request), timeout=60, what="the start of the run")

    worker.kill()  # SIGKILL: no chance to release
    worker.wait(timeout=30)

    assert deployment.queue.claim_next("second-worker", 60) is None  # lease still valid
    # Ten minutes later (the queue's clock, not a sleep: load-proof), the lease has expired.
    later = RequestQueue(deployment.stores.requests, clock=lambda: utc_now() + timedelta(seconds=601))
    again = later.claim_next("second-worker", 60)
    assert again is not None and again.request_id == request.request_id
    assert (again.claimed_by, again.attempts) == ("second-worker", 1)


def test_serve_polls_until_stopped(
    deployment: Deployment, cleanup_processes: list[subprocess.Popen[str]]
) -> None:
    server = deployment.start_worker("--poll-s", "1")
    cleanup_processes.append(server)

    read_lines_until(server, "nothing to do", timeout=60)
    read_lines_until(server, "nothing to do", timeout=60)  # polled again on its interval
    server.send_signal(signal.SIGTERM)

    assert server.wait(timeout=60) == ExitCode.OK


def test_a_wic_and_sa_folder_runs_as_a_labelled_subset(
    deployment: Deployment, tiny_model: TinyModel, tmp_path: Path
) -> None:
    data = tmp_path / "wic-sa"
    for task in ("wic", "sa"):
        shutil.copytree(SAMPLE_DATA_DIR / task, data / task)
    request = deployment.submit(tiny_model.model_id, tiny_model.revision)

    log_file = tmp_path / "worker.log"
    done = deployment.worker(
        "--once", "--data", f"local:{data}", "--tasks", "wic,sa", "--log-file", str(log_file), *FAST
    )

    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    # The terminal shows the worker's own lines only; harness output and warnings are in the file.
    shown = [line for line in done.stderr.splitlines() if line.strip()]
    assert shown and all(
        re.match(r"^\S+ [A-Z]+ (backend|eval_queue|leaderboard)[.:]", line) for line in shown
    )
    assert "evaluating 2 of the 10 Evalita tasks (WIC, SA: 12 prompts" in done.stderr
    assert "lm_eval" in log_file.read_text() or "py.warnings" in log_file.read_text()
    finished = deployment.status(request)
    assert finished.status is Status.FINISHED and finished.results_path
    assert finished.results_path.endswith("_float32_0shot-wic-sa.json")
    results = ResultsFile.from_json(
        deployment.stores.results.read(finished.results_path), finished.results_path
    )
    assert list(results.tasks) == ["wic", "sa"]
    assert (results.run.tasks, results.run.data, results.comparable) == (
        ["wic", "sa"],
        "local:wic-sa",
        False,
    )
    assert results.run.details_path and results.run.details_path.endswith("_float32_0shot-wic-sa")
    published = deployment.stores.details.list(results.run.details_path)
    # One answers file per prompt (12) and the run's per-item file.
    assert sum(p.endswith(".jsonl") for p in published) == 12
    assert sum(p.endswith("/items.parquet") for p in published) == 1
