"""Two workers racing on one queue while the store fails at random.

Each epoch, both workers run one round at the same time (two threads, the heartbeat
renewing every few milliseconds, so their commits interleave and conflict); every store
call fails with a fixed probability, with a kind drawn at random.  Between epochs, once
both are back, the leases given so far expire (a request left RUNNING by a worker that
gave up is then reaped, or completed when its results are in).  After the epochs a
fault-free recovery settles what is left, and the invariants must hold.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from backend.config import Outcome
from eval_queue.requests import Status
from tests.publish.deployment import Deployment, config, hub_deployment, local_deployment, violations
from tests.publish.faulty_hub import FaultKind, FaultyHub, HubFault
from tests.publish.faulty_store import StoreFault

REQUESTS = 6
EPOCHS = 12
FAULT_RATE = 0.08
SEEDS = (1, 2, 3)


def _race(deployment: Deployment, arm: object) -> tuple[list[str], int]:
    """Race two workers for ``EPOCHS`` epochs with faults armed; returns (violations, rounds run)."""
    ids = deployment.submit(REQUESTS)
    outcomes: list[Outcome] = []
    for _ in range(EPOCHS):
        arm(True)  # type: ignore[operator]
        threads = [
            threading.Thread(
                target=lambda w=w: outcomes.append(deployment.run_round(config(w, heartbeat_s=0.01)))
            )
            for w in ("gpu-a", "gpu-b")
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
            assert not thread.is_alive(), "a worker is blocked"
        arm(False)  # type: ignore[operator]
        if all(deployment.peek(rid).status is Status.FINISHED for rid in ids):
            break
        deployment.expire_leases()
    deployment.recover()
    found = violations(deployment, ids)
    found += [f"a racing round ended {o.name}" for o in outcomes if o in (Outcome.FAILED, Outcome.LEASE_LOST)]
    return found, len(outcomes)


@pytest.mark.parametrize("seed", SEEDS)
def test_two_workers_racing_on_the_hub_with_random_faults_finish_every_request_once(
    seed: int, faulty_hub: FaultyHub, tmp_path: Path
) -> None:
    # Held answers are left to the one-fault-per-call tests: each costs the read timeout.
    kinds = tuple(k for k in FaultKind if k is not FaultKind.HOLD)
    fault = HubFault(rate=FAULT_RATE, rng=random.Random(seed), kinds=kinds)
    faulty_hub.fault = fault

    def arm(on: bool) -> None:
        fault.armed = on

    found, rounds = _race(hub_deployment(faulty_hub, tmp_path), arm)
    print(f"\n[race] hub, seed {seed}: {rounds} rounds, {fault.fired} faults, {len(found)} violations")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("seed", SEEDS)
def test_two_workers_racing_on_the_local_store_with_random_faults_finish_every_request_once(
    seed: int, tmp_path: Path
) -> None:
    fault = StoreFault(rate=FAULT_RATE, rng=random.Random(seed))

    def arm(on: bool) -> None:
        fault.armed = on

    found, rounds = _race(local_deployment(tmp_path, fault), arm)
    print(f"\n[race] local, seed {seed}: {rounds} rounds, {len(fault.fired)} faults, {len(found)} violations")
    assert not found, "\n".join(found)
