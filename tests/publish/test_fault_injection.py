"""One fault at every storage call of claim → start → publish → finish, and at the heartbeat's.

For each kind of fault, a trial per call: a fresh deployment with one request, one
worker round with the fault armed at that call, then fault-free recovery rounds (leases
expiring between them).  The trials stop at the first index where the fault no longer
fires (past the last call), so a change in the call sequence is followed, never skipped.
Every trial must end with the invariants of :func:`tests.publish.deployment.violations`,
and the faulted round itself never ends FAILED (the fake run always succeeds).

Hub faults are HTTP answers of the hub double (:mod:`tests.publish.faulty_hub`): every
request for 503, dropped connection and held answer; every commit for applied-then-500
and the 12-commit conflict burst.  Local faults are at the storage interface
(:mod:`tests.publish.faulty_store`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from backend.config import Outcome, WorkerConfig
from backend.tracks import Evaluation, RunContext
from eval_queue.hubclient import install_hub_timeouts
from eval_queue.requests import EvalRequest, Status
from eval_queue.settings import HubTimeouts
from tests.publish.deployment import (
    Deployment,
    config,
    fake_run,
    hub_deployment,
    local_deployment,
    violations,
)
from tests.publish.faulty_hub import FaultKind, FaultyHub, HubFault
from tests.publish.faulty_store import StoreFault, StoreFaultKind

log = logging.getLogger(__name__)

#: The held-answer trials' read timeout, shorter than the other hub tests' (0.5 s): each trial
#: waits it out once, and there are some thirty trials.  The fake hub answers in milliseconds.
HOLD_TIMEOUTS = HubTimeouts(connect_s=2.0, read_s=0.3)
HOLD_S = 0.5  # past HOLD_TIMEOUTS.read_s
#: Renewals the fake run waits for while the heartbeat's calls are faulted.
RENEWALS = 3


def _report(what: str, trials: int, fired: int, found: list[str]) -> None:
    # Printed for the record (pytest -s); the counts go into the note.
    print(f"\n[fault injection] {what}: {trials} trials, {fired} faults fired, {len(found)} violations")


def _check(what: str, trials: int, fired: int, found: list[str], *, at_least: int) -> None:
    _report(what, trials, fired, found)
    assert fired >= at_least, f"{what}: only {fired} faults fired; the call sequence is shorter than expected"
    assert not found, f"{what}: " + "\n".join(found)


def _faulted_round(
    deployment: Deployment,
    request_id: str,
    worker: WorkerConfig,
    trial: str,
    found: list[str],
    **kwargs: object,
) -> None:
    """One round with the fault armed; its outcome must say what happened.

    Never FAILED (the run succeeds) nor LEASE_LOST (no one else is there); FINISHED (exit
    0) exactly when the request is FINISHED, even after an answer that was lost.
    """
    outcome = deployment.run_round(worker, **kwargs)  # type: ignore[arg-type]
    status = deployment.peek(request_id).status
    if outcome not in (Outcome.FINISHED, Outcome.STORE_UNAVAILABLE):
        found.append(f"{trial}: the faulted round ended {outcome.name}")
    elif (outcome is Outcome.FINISHED) != (status is Status.FINISHED):
        found.append(f"{trial}: the round ended {outcome.name} with the request {status.value}")


@pytest.mark.parametrize("kind", list(FaultKind), ids=[k.name for k in FaultKind])
def test_one_hub_fault_at_every_call_leaves_every_request_finished_once(
    kind: FaultKind, faulty_hub: FaultyHub, tmp_path: Path
) -> None:
    if kind is FaultKind.HOLD:
        install_hub_timeouts(HOLD_TIMEOUTS)  # the hub_client fixture resets the client afterwards
    found: list[str] = []
    trials = fired = 0
    for at in range(200):
        deployment = hub_deployment(faulty_hub, tmp_path / f"{at}")
        ids = deployment.submit(1)
        faulty_hub.fault = HubFault(kind, at=at, armed=True, hold_s=HOLD_S)
        _faulted_round(deployment, ids[0], config(), f"{kind.value} at request {at}", found)
        faulty_hub.fault.armed = False
        trials += 1
        if not faulty_hub.fault.fired:
            break  # past the last request of the round
        fired += 1
        deployment.recover()
        found += [
            f"{kind.value} at request {at} ({faulty_hub.faults_fired[-1][1]}): {v}"
            for v in violations(deployment, ids)
        ]
    _check(f"hub, {kind.value}", trials, fired, found, at_least=7 if kind.commits_only else 20)


@pytest.mark.parametrize("kind", list(StoreFaultKind), ids=[k.name for k in StoreFaultKind])
def test_one_local_store_fault_at_every_call_leaves_every_request_finished_once(
    kind: StoreFaultKind, tmp_path: Path
) -> None:
    found: list[str] = []
    trials = fired = 0
    for at in range(200):
        fault = StoreFault(kind, at=at)
        deployment = local_deployment(tmp_path / f"{at}", fault)
        ids = deployment.submit(1)
        fault.armed = True
        _faulted_round(deployment, ids[0], config(), f"{kind.value} at call {at}", found)
        fault.armed = False
        trials += 1
        if not fault.fired:
            break
        fired += 1
        deployment.recover()
        found += [f"{fault.fired[0]}: {v}" for v in violations(deployment, ids)]
    _check(f"local, {kind.value}", trials, fired, found, at_least=9)


def _waiting_for_renewals(deployment: Deployment, arm: Callable[[bool], None]) -> Callable[..., Evaluation]:
    """A fake run that lasts until the heartbeat has renewed the lease ``RENEWALS`` times.

    The fault is armed only while it waits: then the heartbeat is the only caller.
    """

    def evaluate(request: EvalRequest, worker: WorkerConfig, context: RunContext) -> Evaluation:
        arm(True)
        try:
            last, renewals = deployment.peek(request.request_id).lease_expires, 0
            deadline = time.monotonic() + 30
            while renewals < RENEWALS and time.monotonic() < deadline:
                time.sleep(0.005)
                current = deployment.peek(request.request_id).lease_expires
                if current != last:
                    last, renewals = current, renewals + 1
            assert renewals == RENEWALS, "the heartbeat stopped renewing after a fault"
        finally:
            arm(False)
        context.progress.beat("fake run")
        return fake_run(request)

    return evaluate


@pytest.mark.parametrize("kind", list(FaultKind), ids=[k.name for k in FaultKind])
def test_a_hub_fault_at_each_heartbeat_call_is_ridden_out(
    kind: FaultKind, faulty_hub: FaultyHub, tmp_path: Path
) -> None:
    if kind is FaultKind.HOLD:
        install_hub_timeouts(HOLD_TIMEOUTS)  # the hub_client fixture resets the client afterwards
    found: list[str] = []
    trials = fired = 0
    for at in range(3):  # the calls of one renewal (and into the next)
        deployment = hub_deployment(faulty_hub, tmp_path / f"{at}")
        ids = deployment.submit(1)
        faulty_hub.fault = fault = HubFault(kind, at=at, hold_s=HOLD_S)

        def arm(on: bool, fault: HubFault = fault) -> None:
            fault.armed = on

        worker = config(heartbeat_s=0.02)
        _faulted_round(
            deployment,
            ids[0],
            worker,
            f"{kind.value} at heartbeat request {at}",
            found,
            evaluate=_waiting_for_renewals(deployment, arm),
        )
        trials += 1
        fired += bool(fault.fired)
        deployment.recover()
        found += [f"{kind.value} at heartbeat request {at}: {v}" for v in violations(deployment, ids)]
    _check(f"hub heartbeat, {kind.value}", trials, fired, found, at_least=1)


@pytest.mark.parametrize("kind", list(StoreFaultKind), ids=[k.name for k in StoreFaultKind])
def test_a_local_store_fault_at_a_heartbeat_renewal_is_ridden_out(
    kind: StoreFaultKind, tmp_path: Path
) -> None:
    found: list[str] = []
    trials = fired = 0
    for at in range(2):
        fault = StoreFault(kind, at=at, thread="lease-heartbeat")
        deployment = local_deployment(tmp_path / f"{at}", fault)
        ids = deployment.submit(1)

        def arm(on: bool, fault: StoreFault = fault) -> None:
            fault.armed = on

        worker = config(heartbeat_s=0.02)
        _faulted_round(
            deployment,
            ids[0],
            worker,
            f"{kind.value} at heartbeat call {at}",
            found,
            evaluate=_waiting_for_renewals(deployment, arm),
        )
        trials += 1
        fired += bool(fault.fired)
        deployment.recover()
        found += [f"{kind.value} at heartbeat call {at}: {v}" for v in violations(deployment, ids)]
    _check(f"local heartbeat, {kind.value}", trials, fired, found, at_least=2)
