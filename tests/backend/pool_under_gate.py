"""Run a real ``multiprocessing.Pool`` under the worker's signal gate, terminated many times.

``python -m tests.backend.pool_under_gate ROUNDS [HANG_S]`` prints ``ok ROUNDS`` and
exits 0, or, if a round makes no progress for ``HANG_S`` seconds (default 60: a hang,
not a slow machine), dumps every thread's stack, kills the pool's children (they would
keep the caller's pipes open) and exits 1.  Run as its own process by
``test_pool_termination.py`` so that a hang is a failure, not a stuck test session.

Each round is one of the three ways lm-eval's bootstrap pool (``with mp.Pool(n) as
pool: pool.imap(...)``) can be torn down: right after it started (children maybe not yet
past ``fork()``), after its only task (one child idle on the queue lock, one blocked in
``recv``), or while its children are busy.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import signal
import sys
import threading
import time

from backend.signals import signal_gate

HANG_S = 60.0


def _square(x: int) -> int:
    return x * x


def _fresh() -> None:
    with multiprocessing.Pool(2):
        pass


def _idle_after_one_task() -> None:
    with multiprocessing.Pool(2) as pool:
        assert list(pool.imap(_square, [3])) == [9]


def _busy() -> None:
    with multiprocessing.Pool(2) as pool:
        pending = [pool.apply_async(time.sleep, (30,)) for _ in range(2)]
        time.sleep(0.01)
        assert not any(p.ready() for p in pending)


ROUNDS = (_fresh, _idle_after_one_task, _busy)


class _HangGuard:
    """Ends the process (exit 1) if :meth:`progress` is not called for ``hang_s`` seconds."""

    def __init__(self, hang_s: float) -> None:
        self._hang_s = hang_s
        self._beat = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    def progress(self) -> None:
        self._beat.set()

    def _watch(self) -> None:
        while self._beat.wait(self._hang_s):
            self._beat.clear()
        sys.stderr.write(f"no progress for {self._hang_s:g} s: Pool.terminate() hangs\n")
        faulthandler.dump_traceback(all_threads=True)
        for child in multiprocessing.active_children():
            os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
        os._exit(1)


def main(rounds: int, hang_s: float = HANG_S) -> int:
    multiprocessing.set_start_method("fork")  # what lm-eval gets on Linux
    guard = _HangGuard(hang_s)
    with signal_gate() as gate:
        assert gate is not None
        gate.armed = True
        for number in range(rounds):
            ROUNDS[number % len(ROUNDS)]()
            guard.progress()
        assert gate.armed, "a child's SIGTERM interrupted the parent"
    left = multiprocessing.active_children()
    assert not left, f"children left: {left}"
    print(f"ok {rounds}")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), *(float(a) for a in sys.argv[2:3])))
