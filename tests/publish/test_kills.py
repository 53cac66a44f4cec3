"""A worker SIGKILLed before every storage call, and between syncing a temporary file and renaming it.

Each trial forks a worker process (the real ``run_once`` with the fake run) that kills
itself with SIGKILL at its n-th storage call (or, on the local store, right after its
n-th temporary file is written and synced, before the rename), then recovers with
fault-free rounds in this process, leases expiring between them.  The trials go on until
the worker gets through a whole round without reaching the kill point.

Forking keeps the trials fast (no interpreter start per trial); the child is a real
process, killed by the kernel with nothing cleaned up.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import huggingface_hub
import pytest

from backend.worker import run_once
from eval_queue.storage.local import LocalStorage
from tests.publish.deployment import (
    Deployment,
    config,
    fake_evaluate,
    hub_deployment,
    local_deployment,
    violations,
)
from tests.publish.faulty_hub import FaultyHub
from tests.publish.faulty_store import KillSwitch, killing

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _killed_worker(deployment: Deployment, *, call: int | None = None, temp: int | None = None) -> bool:
    """Run one worker round in a child that dies at storage call ``call`` or synced temp file ``temp``.

    Returns whether it died of SIGKILL (False: it finished the round first).
    """
    huggingface_hub.close_session()  # the child must not share the parent's hub connections
    pid = os.fork()
    if pid == 0:  # the worker process
        code = 3
        try:
            stores = deployment.open_stores()
            if call is not None:
                stores = killing(stores, KillSwitch(call))
            if temp is not None:
                _die_between_sync_and_rename(KillSwitch(temp))
            run_once(stores, deployment.queue(stores), config("doomed"), fake_evaluate)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == 0, "the worker process raised (traceback on stderr)"
    return False


def _die_between_sync_and_rename(switch: KillSwitch) -> None:
    """In the worker process only: SIGKILL once the chosen temporary file is written and synced."""
    write_temp = LocalStorage._temp_with

    def synced_then_maybe_killed(self: LocalStorage, target: Path, data: bytes) -> Path:
        temp = write_temp(self, target, data)
        switch.tick()
        return temp

    LocalStorage._temp_with = synced_then_maybe_killed  # type: ignore[method-assign]


def _trials(make: Callable[[int], Deployment], *, what: str, point: str) -> None:
    """Kill at ``point`` (``call`` or ``temp``) number 0, 1, … until a worker outlives the kill point."""
    found: list[str] = []
    killed = trials = 0
    for at in range(100):
        deployment = make(at)
        ids = deployment.submit(1)
        trials += 1
        if not _killed_worker(deployment, **{point: at}):
            break  # the round ended before the kill point
        killed += 1
        deployment.recover()
        found += [f"killed at {point} {at}: {v}" for v in violations(deployment, ids, max_attempts=1)]
    print(f"\n[kills] {what}: {trials} trials, {killed} killed, {len(found)} violations")
    assert killed >= 6, f"{what}: only {killed} kill points"
    assert not found, "\n".join(found)


def test_a_local_worker_killed_before_any_storage_call_leaves_every_request_finished_once(
    tmp_path: Path,
) -> None:
    _trials(
        lambda at: local_deployment(tmp_path / f"{at}"), what="local, before every storage call", point="call"
    )


def test_a_local_worker_killed_between_temp_sync_and_rename_leaves_no_temp_file(tmp_path: Path) -> None:
    _trials(
        lambda at: local_deployment(tmp_path / f"{at}"), what="local, between sync and rename", point="temp"
    )


def test_a_hub_worker_killed_before_any_storage_call_leaves_every_request_finished_once(
    faulty_hub: FaultyHub, tmp_path: Path
) -> None:
    _trials(
        lambda at: hub_deployment(faulty_hub, tmp_path / f"{at}"),
        what="hub, before every storage call",
        point="call",
    )
