"""The hang of issue 14 §1: ``Pool.terminate()`` under the worker's signal gate must always return.

Root cause: the gate's SIGTERM handler is a Python-level handler, inherited by the
processes lm-eval's bootstrap pool forks.  CPython drops a Python-level signal that
reaches a child between ``fork()`` and its after-fork reinitialisation (which clears the
signals tripped so far); a child that got ``Pool.terminate()``'s SIGTERM in that window
lives on, blocked on the pool's queue lock that the parent took for good, and the
parent's ``join()`` waits forever.  The gate's fork hooks block the signals across
``fork()`` and give children the default dispositions before unblocking them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 300


def _run_pool_rounds(rounds: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "tests.backend.pool_under_gate", str(rounds)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,  # only a backstop: the script itself stops at the first hang
    )


def test_a_pool_terminated_many_times_under_the_signal_gate_never_hangs() -> None:
    done = _run_pool_rounds(ROUNDS)
    assert done.returncode == 0, f"Pool.terminate() hung:\n{done.stderr[-4000:]}"
    assert done.stdout.split() == ["ok", str(ROUNDS)]


def test_a_process_forked_under_the_gate_starts_with_default_signal_dispositions() -> None:
    import multiprocessing
    import signal

    from backend.signals import GATED_SIGNALS, signal_gate

    def report(conn: object) -> None:
        conn.send([signal.getsignal(s) == signal.SIG_DFL for s in GATED_SIGNALS])  # type: ignore[attr-defined]

    parent_end, child_end = multiprocessing.get_context("fork").Pipe()
    with signal_gate() as gate:
        assert gate is not None
        child = multiprocessing.get_context("fork").Process(target=report, args=(child_end,))
        child.start()
        dispositions = parent_end.recv()
        child.join(30)
        assert signal.getsignal(signal.SIGTERM) == gate.interrupted  # the parent keeps its handler
    assert dispositions == [True, True, True]
    assert child.exitcode == 0


def test_a_fork_outside_the_gate_keeps_the_inherited_handlers() -> None:
    import multiprocessing
    import signal

    # Whatever the parent has (Python's default handler, or SIG_IGN when started in the
    # background by a non-interactive shell): the hooks change nothing outside a gate.
    inherited = signal.getsignal(signal.SIGINT)

    def report(conn: object) -> None:
        conn.send(signal.getsignal(signal.SIGINT) == inherited)  # type: ignore[attr-defined]

    parent_end, child_end = multiprocessing.get_context("fork").Pipe()
    child = multiprocessing.get_context("fork").Process(target=report, args=(child_end,))
    child.start()
    assert parent_end.recv() is True
    child.join(30)
