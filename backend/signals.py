"""Signals while a run evaluates: SIGTERM/SIGINT and other threads' interruptions become exceptions.

:func:`signal_gate` installs a :class:`SignalGate` in the main thread: while ``armed`` (the
track's runner is working), SIGTERM/SIGINT raise :class:`WorkerInterrupted`, and another
thread's :meth:`SignalGate.interrupt` (the heartbeat's lost lease, the stall watchdog)
raises its exception; disarmed (publishing, failing, releasing), a signal only records
that a stop was asked.

Processes the harness forks (lm-eval's bootstrap ``multiprocessing.Pool``) must not
inherit the gate's Python-level handler: CPython drops a Python-level signal that reaches
a child between ``fork()`` and its after-fork reinitialisation (which clears the signals
tripped so far), so ``Pool.terminate()``'s SIGTERM could be lost and the pool's ``join()``
wait forever on a child blocked on the queue lock the parent took (issue 14 §1).
:class:`_ForkSignalReset` blocks the signals across ``fork()`` and gives the child the
default dispositions before unblocking them, so a child dies of SIGTERM with no Python
code running, whenever it arrives.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)

#: The signals the gate turns into exceptions (SIGUSR1: another thread's interruption).
GATED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1)


class WorkerInterrupted(BaseException):  # like KeyboardInterrupt: not an error
    """Raised in the main thread by SIGTERM/SIGINT so that the run unwinds and releases."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class SignalGate:
    """Turns SIGTERM/SIGINT, and the heartbeat's and watchdog's interruptions, into exceptions in the main thread.

    Armed while the evaluation runs; disarmed once it is over (publishing, failing,
    releasing must not be cut short), when a signal only records that a stop was asked.
    """

    def __init__(self) -> None:
        self.armed = False
        self.pending: int | None = None
        self._owner_pid = os.getpid()
        self._interruption: BaseException | None = None
        self._lock = threading.Lock()

    def interrupt(self, exc: BaseException) -> None:
        """From another thread: raise ``exc`` in the main thread if the run is still going."""
        with self._lock:
            if self._interruption is None:
                self._interruption = exc
        os.kill(os.getpid(), signal.SIGUSR1)

    def interrupted(self, signum: int, _frame: Any) -> None:
        if os.getpid() != self._owner_pid:
            # A process forked without os.fork's hooks inherited this handler; its parent
            # stops it with SIGTERM, which must simply end it.
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if not self.armed:
            self.pending = self.pending or signum
            log.warning("%s received: finishing the current step first", signal.Signals(signum).name)
            return
        self.armed = False
        raise WorkerInterrupted(signum)

    def from_thread(self, _signum: int, _frame: Any) -> None:
        if os.getpid() != self._owner_pid:
            signal.signal(signal.SIGUSR1, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGUSR1)
            return
        with self._lock:
            exc = self._interruption
        if self.armed and exc is not None:
            self.armed = False
            raise exc


class _ForkSignalReset:
    """``os.register_at_fork`` hooks: a process forked while a gate is installed starts with the
    default dispositions of :data:`GATED_SIGNALS`, and none of them can be lost on the way.

    ``before`` blocks the signals in the forking thread; the child, whose mask is
    inherited, sets ``SIG_DFL`` and only then unblocks them, so a SIGTERM sent to it at
    any moment stays pending until it kills the process (no Python code has to run); the
    parent restores its mask, and a signal that came meanwhile is handled as usual.
    Registered once per process (hooks cannot be unregistered); inactive without a gate.
    """

    def __init__(self) -> None:
        self.active = False
        self._saved = threading.local()
        self._registered = False

    def register(self) -> None:
        if not self._registered:
            os.register_at_fork(
                before=self._before,
                after_in_parent=self._after_in_parent,
                after_in_child=self._after_in_child,
            )
            self._registered = True

    def _before(self) -> None:
        self._saved.mask = signal.pthread_sigmask(signal.SIG_BLOCK, GATED_SIGNALS) if self.active else None

    def _after_in_parent(self) -> None:
        mask = getattr(self._saved, "mask", None)
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            self._saved.mask = None

    def _after_in_child(self) -> None:
        mask = getattr(self._saved, "mask", None)
        if mask is None:
            return
        self.active = False
        for signum in GATED_SIGNALS:
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


#: Process-wide, like the signal dispositions it manages.
_FORK_RESET = _ForkSignalReset()


@contextmanager
def signal_gate() -> Iterator[SignalGate | None]:
    """Install a :class:`SignalGate` (main thread only; elsewhere signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    gate = SignalGate()
    previous = {s: signal.getsignal(s) for s in GATED_SIGNALS}
    _FORK_RESET.register()
    signal.signal(signal.SIGTERM, gate.interrupted)
    signal.signal(signal.SIGINT, gate.interrupted)
    signal.signal(signal.SIGUSR1, gate.from_thread)
    _FORK_RESET.active = True
    try:
        yield gate
    finally:
        _FORK_RESET.active = False
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def disarm(gate: SignalGate | None) -> None:
    """The run is over (or unwinding): from now on a signal only records that a stop was asked."""
    if gate is not None:
        gate.armed = False
