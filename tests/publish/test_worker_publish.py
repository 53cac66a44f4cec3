"""The worker's publish path: what each kind of store trouble ends with, exit codes, a hung worker."""

from __future__ import annotations

import logging
import random
import threading
import time
from pathlib import Path

import pytest

from backend.config import ExitCode, Outcome
from backend.tracks import Evaluation, RunContext
from eval_queue.errors import StorageError
from eval_queue.requests import EvalRequest, RunPhase, Status
from eval_queue.storage import Stores
from tests.publish.deployment import config, fake_run, hub_deployment, local_deployment, violations
from tests.publish.faulty_hub import FaultKind, FaultyHub, HubFault
from tests.publish.faulty_store import FaultyStorage, StoreFault, StoreFaultKind


def _down_after_the_run(fault: StoreFault):  # type: ignore[no-untyped-def]
    def evaluate(request: EvalRequest, worker: object, context: RunContext) -> Evaluation:
        fault.armed = True  # the store goes down while the model runs
        return fake_run(request)

    return evaluate


def test_a_store_down_while_publishing_then_back_gets_the_request_handed_back_uncounted(
    tmp_path: Path,
) -> None:
    # Down for the publish's four tries, back in time for the hand-back's.
    fault = StoreFault(rate=1.0, rng=random.Random(0), kinds=(StoreFaultKind.UNAVAILABLE,), limit=6)
    deployment = local_deployment(tmp_path, fault)
    (rid,) = deployment.submit(1)
    outcome = deployment.run_round(config(), _down_after_the_run(fault))
    assert outcome is Outcome.STORE_UNAVAILABLE and outcome.exit_code is ExitCode.STORE_UNAVAILABLE
    back = deployment.peek(rid)
    assert back.status is Status.PENDING and back.attempts == 0
    deployment.recover()
    assert violations(deployment, [rid]) == []


def test_a_store_down_for_good_ends_the_round_and_never_fails_the_request(tmp_path: Path) -> None:
    fault = StoreFault(rate=1.0, rng=random.Random(0), kinds=(StoreFaultKind.UNAVAILABLE,))
    deployment = local_deployment(tmp_path, fault)
    (rid,) = deployment.submit(1)
    assert deployment.run_round(config(), _down_after_the_run(fault)) is Outcome.STORE_UNAVAILABLE
    fault.armed = False
    left = deployment.peek(rid)
    assert left.status is Status.RUNNING and left.phase is RunPhase.RUNNING
    deployment.recover()
    # Its lease expired mid-run as far as anyone can tell: counted once, and said so.
    assert violations(deployment, [rid], max_attempts=1) == []
    assert any("cut off from the store" in entry["note"] for entry in deployment.peek(rid).history)


def test_results_written_but_finish_unreachable_is_completed_by_the_next_claim(tmp_path: Path) -> None:
    fault = StoreFault()
    deployment = local_deployment(tmp_path, fault)
    (rid,) = deployment.submit(1)

    class FinishDown(FaultyStorage):
        def update(self, path, transform, *, message=""):  # type: ignore[no-untyped-def]
            if message.startswith("Finish"):
                raise StorageError("injected: 403, the token lost its write access")
            return super().update(path, transform, message=message)

    stores = deployment.open_stores()
    stores = Stores(
        requests=FinishDown(stores.requests, fault, "requests"),
        results=stores.results,
        details=stores.details,
    )
    assert deployment.run_round(config(), stores=stores) is Outcome.STORE_UNAVAILABLE
    assert deployment.peek(rid).phase is RunPhase.PUBLISHING  # never FAILED: the results are in
    deployment.recover()
    done = deployment.peek(rid)
    assert done.status is Status.FINISHED and done.attempts == 0 and done.history[-1]["by"] == "queue"
    # Completed by the rescuer's claim, not run again.
    assert [outcome for _, outcome, _ in deployment.rounds] == [Outcome.STORE_UNAVAILABLE, Outcome.NOTHING]
    assert violations(deployment, [rid]) == []


def test_a_store_that_refuses_the_results_for_good_fails_the_request_with_that_reason(tmp_path: Path) -> None:
    fault = StoreFault()
    deployment = local_deployment(tmp_path, fault)
    (rid,) = deployment.submit(1)

    class ResultsRefused(FaultyStorage):
        def write(self, path, data, *, message=""):  # type: ignore[no-untyped-def]
            raise StorageError("cannot commit to hub repo org/results: HTTP 413 (file too large)")

    stores = deployment.open_stores()
    stores = Stores(
        requests=stores.requests,
        results=ResultsRefused(stores.results, fault, "results"),
        details=stores.details,
    )
    assert deployment.run_round(config(), stores=stores) is Outcome.FAILED
    failed = deployment.peek(rid)
    assert failed.status is Status.FAILED
    assert (failed.error or "").startswith("publishing the results failed: StorageError: cannot commit")


def test_a_hub_that_never_answers_commits_does_not_block_the_worker(
    faulty_hub: FaultyHub, tmp_path: Path
) -> None:
    deployment = hub_deployment(faulty_hub, tmp_path)
    (rid,) = deployment.submit(1)
    # Every commit is applied but its answer held for a minute: the client gives up after
    # its read timeout, and the worker reads the state back.
    fault = HubFault(rate=1.0, rng=random.Random(0), kinds=(FaultKind.HOLD,), commits_only=True, hold_s=60)
    faulty_hub.fault = fault

    def held_from_now(request: EvalRequest, worker: object, context: RunContext) -> Evaluation:
        fault.armed = True
        return fake_run(request)

    started = time.monotonic()
    outcome = deployment.run_round(config(), held_from_now)
    took = time.monotonic() - started
    fault.armed = False
    assert took < 60, f"the worker waited {took:.0f} s for an answer"
    # Every commit was applied, so the run went through: FINISHED, read back, exit 0.
    assert outcome is Outcome.FINISHED and outcome.exit_code is ExitCode.OK
    assert violations(deployment, [rid]) == []


def test_a_worker_hung_while_publishing_stops_renewing_and_another_takes_over(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="backend.worker")
    fault = StoreFault()
    deployment = local_deployment(tmp_path, fault)
    (rid,) = deployment.submit(1)
    unblock = threading.Event()
    blocked = threading.Event()

    class HungDetails(FaultyStorage):
        def write(self, path, data, *, message=""):  # type: ignore[no-untyped-def]
            blocked.set()
            unblock.wait(60)  # a write no timeout reaches (a stuck file system)
            return super().write(path, data, message=message)

    stores = deployment.open_stores()
    stores = Stores(
        requests=stores.requests,
        results=stores.results,
        details=HungDetails(stores.details, fault, "details"),
    )
    hung_outcome: list[Outcome] = []
    hung = threading.Thread(
        target=lambda: hung_outcome.append(
            deployment.run_round(config("hung", heartbeat_s=0.02, blocked_s=0.2), stores=stores)
        )
    )
    hung.start()
    assert blocked.wait(30)
    # The heartbeat notices and stops renewing (no timing assumed: it says so in the log).
    deadline = time.monotonic() + 30
    while not any("no longer renewing its lease" in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, "the heartbeat kept renewing a hung worker's lease"
        time.sleep(0.02)
    stopped_at = deployment.peek(rid).lease_expires
    time.sleep(0.1)
    assert deployment.peek(rid).lease_expires == stopped_at
    deployment.expire_leases()
    assert deployment.run_round(config("rescuer")) is Outcome.FINISHED  # reaped (not counted), run again
    unblock.set()
    hung.join(30)
    assert not hung.is_alive()
    # The hung worker wrote the same paths when it woke up, and found the request FINISHED.
    assert hung_outcome == [Outcome.FINISHED]
    assert violations(deployment, [rid]) == []
    assert deployment.peek(rid).attempts == 0
