"""backend.worker.run_once with a stand-in evaluator: claim, heartbeat, publish, fail, release.

No harness here (fast): the evaluator is a function the test controls; the real one
is exercised end to end in ``test_worker_e2e.py``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from backend.__main__ import main as backend_main
from backend.config import ExitCode, Outcome, WorkerConfig
from backend.tracks import Evaluation, IncompleteRunError, RunContext, StageError
from backend.worker import run_once
from eval_queue.errors import MalformedFileError, StorageError
from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, Status, isoformat, utc_now
from eval_queue.retry import StoreRetry
from eval_queue.settings import Settings
from eval_queue.storage import Stores, open_stores
from eval_queue.tracks import TRACKS, TrackRegistry, track_registry, track_spec
from leaderboard.core.schema import RunInfo
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.schema import PromptScore, ResultsFile, TaskResult

LOG = logging.getLogger("tests.worker")


@pytest.fixture
def stores(tmp_path: Path) -> Stores:
    return open_stores(Settings(data_dir=tmp_path / "eval-data"))


@pytest.fixture
def queue(stores: Stores) -> RequestQueue:
    return RequestQueue(stores.requests)


@pytest.fixture
def request_(queue: RequestQueue) -> EvalRequest:
    return queue.add(EvalRequest(model="org/model", revision="b" * 40, submitted_time=isoformat(utc_now())))


def _config(lease_s: float = 60.0) -> WorkerConfig:
    return WorkerConfig(worker_id="w1", lease_s=lease_s)


def _evaluation(request: EvalRequest) -> Evaluation:
    return Evaluation(
        RunInfo(num_fewshot=request.num_fewshot, data="sample", finished_at="2026-11-22T12:00:00Z"),
        {"tasks": {"te": TaskResult(metric="acc", prompts={"p1": PromptScore(score=0.5, n=4)})}},
        {"te_p1.jsonl": b"{}\n"},
    )


def _wait_for_renewals(queue: RequestQueue, request_id: str, renewals: int = 3) -> None:
    """Return once the heartbeat has pushed the lease further ``renewals`` times.

    No wall-clock threshold: on a loaded machine it takes longer, never fails for that.
    """
    seen = [queue.get(request_id).lease_expires]
    while len(seen) <= renewals:
        current = queue.get(request_id)
        assert current.status is Status.RUNNING and current.claimed_by == "w1"
        if current.lease_expires != seen[-1]:
            seen.append(current.lease_expires)
        time.sleep(0.05)
    assert seen == sorted(seen)  # always later


def test_nothing_to_do_claims_nothing(stores: Stores, queue: RequestQueue) -> None:
    def never(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        raise AssertionError("nothing should run")

    assert run_once(stores, queue, _config(), never) is Outcome.NOTHING
    assert Outcome.NOTHING.exit_code is ExitCode.OK


def test_a_successful_run_publishes_results_and_details_then_finishes(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    outcome = run_once(stores, queue, _config(), lambda r, c, x: _evaluation(r))

    assert outcome is Outcome.FINISHED
    done = queue.get(request_.request_id)
    assert done.status is Status.FINISHED
    named = (done.run_stamp or "").replace(":", "-")  # the first claim's time: a rerun writes the same paths
    assert done.results_path == f"org/model/results_{named}_bfloat16_0shot.json"
    results = ResultsFile.from_json(stores.results.read(done.results_path), done.results_path)
    assert results.tasks["te"] and results.model.id == "org/model"
    # The worker stamps the provenance: the runner returned none of it.
    assert (results.run.request_id, results.run.worker_id) == (request_.request_id, "w1")
    assert results.run.details_path == f"org/model/{named}_bfloat16_0shot"
    assert stores.details.read(f"{results.run.details_path}/te_p1.jsonl") == b"{}\n"


def test_an_evaluation_error_fails_the_request_with_stage_cause_and_log_tail(
    stores: Stores, queue: RequestQueue, request_: EvalRequest, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)

    def broken(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        LOG.info("loading the model for %s", request.model)
        try:
            raise OSError("model.safetensors is truncated")
        except OSError as exc:
            raise StageError("running the harness", exc) from exc

    outcome = run_once(stores, queue, _config(), broken)

    assert outcome is Outcome.FAILED and outcome.exit_code is ExitCode.FAILED
    failed = queue.get(request_.request_id)
    assert failed.status is Status.FAILED
    assert failed.error is not None
    first_line = failed.error.splitlines()[0]
    assert first_line.startswith("running the harness failed: OSError: model.safetensors is truncated")
    assert "--- log tail ---" in failed.error and "loading the model for org/model" in failed.error
    assert stores.results.list() == []


def test_an_incomplete_run_is_failed_and_nothing_is_published(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    def partial(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        raise IncompleteRunError("the run did not produce every task and prompt: te/p4: missing")

    assert run_once(stores, queue, _config(), partial) is Outcome.FAILED
    assert "te/p4" in (queue.get(request_.request_id).error or "")
    assert stores.results.list() == [] and stores.details.list() == []


def test_the_heartbeat_keeps_the_lease_alive_during_a_long_run(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    def slow(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        _wait_for_renewals(queue, request.request_id)
        return _evaluation(request)

    assert run_once(stores, queue, _config(lease_s=1.0), slow) is Outcome.FINISHED


def test_a_lost_lease_stops_the_run_and_publishes_nothing(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    def cancelled_meanwhile(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        queue.cancel(request.request_id)
        time.sleep(60)  # the heartbeat (every 0.5 s) interrupts this
        raise AssertionError("the heartbeat should have stopped the run")

    outcome = run_once(stores, queue, _config(lease_s=1.5), cancelled_meanwhile)

    assert outcome is Outcome.LEASE_LOST  # the evaluator was interrupted before its assertion
    assert queue.get(request_.request_id).status is Status.CANCELLED
    assert stores.results.list() == []


def test_a_lease_lost_just_before_publishing_publishes_nothing(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    def cancelled_at_the_end(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        queue.cancel(request.request_id)
        return _evaluation(request)

    assert run_once(stores, queue, _config(), cancelled_at_the_end) is Outcome.LEASE_LOST
    assert stores.results.list() == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_sigint_hands_the_request_back(
    stores: Stores, queue: RequestQueue, request_: EvalRequest, signum: int
) -> None:
    def stopped(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        os.kill(os.getpid(), signum)
        time.sleep(5)
        raise AssertionError("the signal should have interrupted the run")

    outcome = run_once(stores, queue, _config(), stopped)

    assert outcome is Outcome.RELEASED and outcome.exit_code is ExitCode.INTERRUPTED
    back = queue.get(request_.request_id)
    assert (back.status, back.claimed_by, back.attempts) == (Status.PENDING, None, 0)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored


def test_cli_rejects_an_unknown_data_source_with_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path))
    assert backend_main(["--once", "--data", "nowhere"]) == ExitCode.USAGE
    assert backend_main(["--once", "--data", f"local:{tmp_path / 'missing'}"]) == ExitCode.USAGE
    assert backend_main(["--once", "--max-gen-toks", "8"]) == ExitCode.USAGE  # only with --limit


def test_cli_once_with_an_empty_queue_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path))
    assert backend_main(["--once"]) == ExitCode.OK


def test_a_stop_asked_while_publishing_lets_the_request_finish(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    class SignalOnPublish(dict[str, bytes]):
        def items(self):  # type: ignore[override]
            os.kill(os.getpid(), signal.SIGTERM)
            return super().items()

    def evaluation(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        done = _evaluation(request)
        done = dataclasses.replace(done, details=SignalOnPublish(done.details))
        return done

    assert run_once(stores, queue, _config(), evaluation) is Outcome.FINISHED
    assert queue.get(request_.request_id).status is Status.FINISHED


def test_several_workers_never_run_the_same_request(stores: Stores) -> None:
    import threading
    from collections import Counter

    for name in ("a", "b", "c", "d"):
        RequestQueue(stores.requests).add(
            EvalRequest(model=f"org/{name}", revision="e" * 40, submitted_time=isoformat(utc_now()))
        )
    runs: Counter[str] = Counter()
    lock = threading.Lock()

    def evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        with lock:
            runs[request.request_id] += 1
        time.sleep(0.05)
        return _evaluation(request)

    def work(worker_id: str) -> None:
        queue = RequestQueue(stores.requests)  # each worker its own queue object, like separate processes
        config = WorkerConfig(worker_id=worker_id, lease_s=60)
        while run_once(stores, queue, config, evaluate) is not Outcome.NOTHING:
            pass

    workers = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(3)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(timeout=60)

    assert sorted(runs.values()) == [1, 1, 1, 1]
    assert all(r.status is Status.FINISHED for r in RequestQueue(stores.requests).listing().requests)


def test_prefetch_offline_says_it_needs_a_connected_machine(capsys: pytest.CaptureFixture[str]) -> None:
    from backend.prefetch import main as prefetch_main

    assert prefetch_main(["org/some-model", "--no-datasets"]) == 1
    err = capsys.readouterr().err
    assert "model org/some-model" in err and "HF_HUB_OFFLINE" in err and "connected machine" in err


# --------------------------------------------------------------------------- store unavailable


def test_a_store_outage_while_claiming_is_store_unavailable_not_usage(
    stores: Stores, queue: RequestQueue, request_: EvalRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    def outage(*args: object, **kwargs: object) -> None:
        raise StorageError("hub: HTTP 503")

    monkeypatch.setattr(RequestQueue, "claim_next", outage)

    outcome = run_once(stores, queue, _config(), lambda r, c, x: _evaluation(r))

    assert outcome is Outcome.STORE_UNAVAILABLE and outcome.exit_code is ExitCode.STORE_UNAVAILABLE
    assert ExitCode.STORE_UNAVAILABLE == 4


def test_cli_once_exits_4_when_the_store_is_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path))

    def outage(*args: object, **kwargs: object) -> None:
        raise StorageError("lock timeout")

    monkeypatch.setattr(RequestQueue, "claim_next", outage)
    assert backend_main(["--once"]) == ExitCode.STORE_UNAVAILABLE


def test_a_store_outage_while_failing_leaves_the_request_to_its_lease(
    stores: Stores, queue: RequestQueue, request_: EvalRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    def outage(*args: object, **kwargs: object) -> None:
        raise StorageError("hub: HTTP 502")

    monkeypatch.setattr(RequestQueue, "fail", outage)

    def broken(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        raise RuntimeError("boom")

    assert run_once(stores, queue, _config(), broken) is Outcome.STORE_UNAVAILABLE
    assert queue.get(request_.request_id).status is Status.RUNNING  # reaped when the lease expires


def test_a_store_outage_while_releasing_is_store_unavailable(
    stores: Stores, queue: RequestQueue, request_: EvalRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    def outage(*args: object, **kwargs: object) -> None:
        raise StorageError("hub: HTTP 502")

    monkeypatch.setattr(RequestQueue, "release", outage)

    def stopped(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        raise AssertionError("the signal should have interrupted the run")

    assert run_once(stores, queue, _config(), stopped) is Outcome.STORE_UNAVAILABLE


def test_serve_keeps_polling_after_the_store_was_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    from backend import serve

    codes = iter([ExitCode.STORE_UNAVAILABLE, ExitCode.STORE_UNAVAILABLE, ExitCode.OK])
    started: list[int] = []

    class FakeChild:
        def __init__(self, cmd: list[str]) -> None:
            self.code = next(codes, ExitCode.OK)
            started.append(self.code)
            if len(started) == 3:  # stop serving once it has polled past two outages
                os.kill(os.getpid(), signal.SIGTERM)

        def wait(self) -> int:
            return int(self.code)

        def poll(self) -> int:
            return int(self.code)

        def send_signal(self, signum: int) -> None:
            pass

    monkeypatch.setattr(serve.subprocess, "Popen", FakeChild)
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        code = serve.serve(WorkerConfig(worker_id="w1", poll_s=0.2), [])
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    assert code is ExitCode.OK
    assert len(started) == 3


# --------------------------------------------------------------------------- heartbeat while publishing


def test_the_heartbeat_keeps_the_lease_alive_during_a_slow_publish(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    class SlowUpload(dict[str, bytes]):
        def items(self):  # type: ignore[override]
            _wait_for_renewals(queue, request_.request_id)
            return super().items()

    def evaluation(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        done = _evaluation(request)
        done = dataclasses.replace(done, details=SlowUpload(done.details))
        return done

    assert run_once(stores, queue, _config(lease_s=1.0), evaluation) is Outcome.FINISHED
    assert queue.get(request_.request_id).status is Status.FINISHED


@pytest.mark.parametrize("error", [MalformedFileError("x.json", "garbled"), RuntimeError("a bug")])
def test_the_heartbeat_survives_a_failed_renewal_and_logs_unexpected_ones_with_traceback(
    stores: Stores,
    queue: RequestQueue,
    request_: EvalRequest,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error: Exception,
) -> None:
    real_renew = RequestQueue.renew
    calls: list[int] = []

    def flaky_renew(self: RequestQueue, *args: Any, **kwargs: Any) -> EvalRequest:
        calls.append(1)
        if len(calls) == 1:
            raise error
        return real_renew(self, *args, **kwargs)

    monkeypatch.setattr(RequestQueue, "renew", flaky_renew)

    def slow(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        _wait_for_renewals(queue, request.request_id)
        return _evaluation(request)

    assert run_once(stores, queue, _config(lease_s=1.5), slow) is Outcome.FINISHED
    if isinstance(error, RuntimeError):
        assert any(r.exc_info and "unexpected error renewing" in r.getMessage() for r in caplog.records)


def test_cli_once_masks_the_configured_token_in_the_failure_it_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from backend.tracks.evalita import run as evalita

    secret = "hf_" + "WorkerTok3n99"  # shorter than a real token on purpose
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HF_TOKEN", secret)
    stores = open_stores(Settings(data_dir=tmp_path))
    added = RequestQueue(stores.requests).add(
        EvalRequest(model="org/model", revision="c" * 40, submitted_time=isoformat(utc_now()))
    )

    def leaky(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        raise RuntimeError(f"401 Unauthorized for token {secret}")

    monkeypatch.setattr(evalita, "evaluate", leaky)
    assert backend_main(["--once"]) == ExitCode.FAILED

    raw = stores.requests.read(added.path).decode()
    assert secret not in raw and "401 Unauthorized for token ***" in raw


def test_a_process_forked_during_the_run_dies_quietly_on_sigterm() -> None:
    # lm-eval's bootstrap pool forks workers that inherit the worker's SIGTERM handler and
    # stops them with SIGTERM. Raising WorkerInterrupted in such a child (instead of dying
    # of the signal) could leave a pool lock held and hang the whole run.
    import multiprocessing

    from backend.signals import signal_gate

    with signal_gate() as gate:
        assert gate is not None
        gate.armed = True
        child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(30,))
        child.start()
        time.sleep(0.2)
        child.terminate()
        child.join(10)
        assert child.exitcode == -signal.SIGTERM  # killed by the signal, no exception raised
        assert gate.armed  # the parent was not interrupted by its child's signal


# --------------------------------------------------------------------------- track runners


def _judge_runner(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
    return _evaluation(request)


JUDGE_STUB = replace(track_spec("judge"), runner="tests.backend.test_worker:_judge_runner")
JUDGE_WITHOUT_RUNNER = replace(track_spec("judge"), runner=None)


def test_each_track_has_its_runner_and_evalita_is_the_first() -> None:
    from backend.tracks import runner_for
    from backend.tracks.evalita.run import evaluate

    assert runner_for("evalita") is evaluate
    assert track_registry().names[0] == "evalita"
    stubbed = TrackRegistry([("judge", "tests.backend.test_worker:JUDGE_STUB")])
    assert runner_for("judge", stubbed) is _judge_runner


def test_a_request_of_a_track_this_worker_cannot_run_fails_saying_so(
    stores: Stores, queue: RequestQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    import backend.tracks

    without = TrackRegistry(
        [("evalita", TRACKS["evalita"]), ("judge", "tests.backend.test_worker:JUDGE_WITHOUT_RUNNER")]
    )
    monkeypatch.setattr(backend.tracks, "track_registry", lambda: without)
    judge = queue.add(
        EvalRequest(model="org/judge", revision="d" * 40, submitted_time=isoformat(utc_now()), track="judge")
    )
    assert run_once(stores, queue, _config()) is Outcome.FAILED
    error = queue.get(judge.request_id).error or ""
    assert "no runner for the judge track (installed: evalita)" in error.splitlines()[0]


def test_the_runner_gets_a_fresh_workdir_and_the_stores(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    seen: list[RunContext] = []

    def look(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        assert context.workdir.is_dir() and not any(context.workdir.iterdir())
        assert context.stores is stores
        seen.append(context)
        return _evaluation(request)

    assert run_once(stores, queue, _config(), look) is Outcome.FINISHED
    assert not seen[0].workdir.exists()  # removed after the run


# --------------------------------------------------------------------------- stalls and data checks


def test_a_run_whose_harness_stops_making_progress_is_stopped_and_handed_back(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    def hangs(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        context.progress.beat("generate_until 3/48 (evalita-mp_ls_prompt-1)")
        time.sleep(60)  # like a Pool.terminate() that never returns; the watchdog interrupts it
        raise AssertionError("the stall watchdog should have stopped the run")

    config = WorkerConfig(worker_id="w1", lease_s=60, stall_s=0.5)
    outcome = run_once(stores, queue, config, hangs)

    assert outcome is Outcome.FAILED and outcome.exit_code is ExitCode.FAILED
    back = queue.get(request_.request_id)
    assert (back.status, back.claimed_by, back.attempts) == (Status.PENDING, None, 1)
    note = back.history[-1]["note"]
    assert note.startswith("stalled: the harness made no progress for")
    assert "--stall-s 0.5" in note and "generate_until 3/48 (evalita-mp_ls_prompt-1)" in note
    assert stores.results.list() == []


def test_a_request_that_stalls_every_time_ends_failed_after_its_attempts(
    stores: Stores, request_: EvalRequest
) -> None:
    queue = RequestQueue(stores.requests, max_attempts=2)

    def hangs(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        time.sleep(60)
        raise AssertionError("the stall watchdog should have stopped the run")

    config = WorkerConfig(worker_id="w1", lease_s=60, stall_s=0.3)
    assert run_once(stores, queue, config, hangs) is Outcome.FAILED
    assert run_once(stores, queue, config, hangs) is Outcome.FAILED
    failed = queue.get(request_.request_id)
    assert (failed.status, failed.attempts) == (Status.FAILED, 2)
    assert (failed.error or "").startswith("gave up after 2 attempts; last: stalled:")


def test_a_run_that_keeps_reporting_progress_is_never_stopped(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    def steady(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        for step in range(20):  # 2 s in all, four times the stall limit, never idle for long
            context.progress.beat(f"step {step}")
            time.sleep(0.1)
        return _evaluation(request)

    config = WorkerConfig(worker_id="w1", lease_s=60, stall_s=0.5)
    assert run_once(stores, queue, config, steady) is Outcome.FINISHED


def test_cli_once_with_incomplete_data_claims_nothing_names_every_missing_file_and_exits_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import shutil

    from backend.tracks.evalita.data import SAMPLE_DATA_DIR

    data = tmp_path / "wic-sa"
    for task in ("wic", "sa"):
        shutil.copytree(SAMPLE_DATA_DIR / task, data / task)
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path / "store"))
    stores = open_stores(Settings(data_dir=tmp_path / "store"))
    added = RequestQueue(stores.requests).add(
        EvalRequest(model="org/model", revision="c" * 40, submitted_time=isoformat(utc_now()))
    )
    before = stores.requests.read(added.path)

    assert backend_main(["--once", "--data", f"local:{data}"]) == ExitCode.DATA_UNAVAILABLE == 5
    assert stores.requests.read(added.path) == before  # still PENDING, not even claimed
    for missing in ("te/test.jsonl", "hs/dev.jsonl", "ner/wn/reduced_test.jsonl", "sum/test.jsonl"):
        assert missing in caplog.text
    # The worker's own subset is all this data holds: it would claim now (nothing to check).
    from backend.cli import build_parser, config_from_args
    from backend.tracks.evalita.run import check_data

    args = build_parser().parse_args(["--once", "--data", f"local:{data}", "--tasks", "sa,wic"])
    config = config_from_args(args, Settings(data_dir=tmp_path / "store"))
    assert config.track_options["tasks"] == ("wic", "sa")
    check_data(config)


def test_cli_refuses_an_unknown_task_id_listing_the_valid_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as info:
        backend_main(["--once", "--tasks", "wic,wiz"])
    assert info.value.code == ExitCode.USAGE
    assert "unknown task id(s) wiz: choose among wic, te, sa" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("request_tasks", "worker_tasks", "expected"),
    [
        (None, None, [t.id for t in SUITE]),
        (["sa", "wic"], None, ["wic", "sa"]),
        (None, ("wic", "sa"), ["wic", "sa"]),
        (["wic", "te"], ("wic", "sa"), ["wic"]),
    ],
)
def test_a_run_evaluates_the_requests_tasks_within_the_workers(
    request_tasks: list[str] | None, worker_tasks: tuple[str, ...] | None, expected: list[str]
) -> None:
    from backend.tracks.evalita.run import selected_tasks

    assert [t.id for t in selected_tasks(request_tasks, worker_tasks)] == expected


def test_a_request_for_tasks_this_worker_does_not_run_is_refused() -> None:
    from backend.tracks.evalita.run import TaskSelectionError, selected_tasks

    with pytest.raises(TaskSelectionError, match="this worker runs only wic, sa; the request asks for te"):
        selected_tasks(["te"], ("wic", "sa"))


def test_a_store_that_refuses_the_start_hands_the_request_back_and_logs_it_as_such(
    stores: Stores, queue: RequestQueue, request_: EvalRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    def outage(*args: object, **kwargs: object) -> None:
        raise StorageError("hub: HTTP 502")

    monkeypatch.setattr(RequestQueue, "start", outage)
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logging.getLogger("backend.worker").addHandler(handler)
    config = replace(_config(), store_retry=StoreRetry(attempts=2, sleep=lambda s: None))
    try:
        outcome = run_once(stores, queue, config, lambda r, c, x: _evaluation(r))
    finally:
        logging.getLogger("backend.worker").removeHandler(handler)

    assert outcome is Outcome.STORE_UNAVAILABLE
    assert queue.get(request_.request_id).status is Status.PENDING
    messages = [r.getMessage() for r in records]
    assert f"{request_.request_id}: handed back to PENDING, not counted as an attempt" in messages


def test_an_untagged_runner_error_fails_at_the_harness_stage(
    stores: Stores, queue: RequestQueue, request_: EvalRequest
) -> None:
    def broken(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        raise RuntimeError("CUDA out of memory")

    assert run_once(stores, queue, _config(), broken) is Outcome.FAILED
    error = queue.get(request_.request_id).error or ""
    assert error.splitlines()[0].startswith("running the harness failed: RuntimeError: CUDA out of memory")


@pytest.mark.parametrize("secret", ["hf_" + "LibraryTok3n1234", "plain-Secret-Value-77"])
def test_a_library_caller_with_its_own_log_handler_never_sees_the_environments_token(
    stores: Stores, queue: RequestQueue, request_: EvalRequest, monkeypatch: pytest.MonkeyPatch, secret: str
) -> None:
    # A program of its own: no entry point ran, so nothing installed the entry points' redaction.
    monkeypatch.setenv("HF_TOKEN", secret)
    captured: list[str] = []
    handler = logging.Handler(level=logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    handler.emit = lambda record: captured.append(handler.format(record))  # type: ignore[method-assign]
    root = logging.getLogger()
    root.addHandler(handler)
    factory = logging.getLogRecordFactory()

    def leaky(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        LOG.warning("calling the hub with token %s", secret)
        raise RuntimeError(f"401 Unauthorized for token {secret}")

    try:
        outcome = run_once(stores, queue, _config(), leaky)
    finally:
        root.removeHandler(handler)

    assert outcome is Outcome.FAILED
    text = "\n".join(captured)
    assert "failed" in text and "401 Unauthorized for token ***" in text  # the failure was logged, masked
    assert "Traceback" in text  # with its traceback, masked too
    assert secret not in text
    assert secret not in (queue.get(request_.request_id).error or "")  # a queue given no secrets
    assert logging.getLogRecordFactory() is factory  # the caller's logging is as it was


def test_both_command_lines_refuse_a_generation_cap_without_a_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from backend.tracks.judge.__main__ import main as judge_main

    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path))
    assert backend_main(["--once", "--max-gen-toks", "4"]) == ExitCode.USAGE
    assert judge_main(["some/judge", "--max-gen-toks", "4"]) == 2
    assert "--max-gen-toks is for smoke tests: use it together with --limit" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # refused before any store was opened
