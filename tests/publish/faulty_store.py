"""Faults and kills at the storage interface: a :class:`~eval_queue.storage.base.Storage` wrapper.

:class:`FaultyStorage` passes every call through to the wrapped store, except the one
(or, with a rate, the random ones) its shared :class:`StoreFault` picks.  The local kinds
mirror what a real store does to a caller:

* ``UNAVAILABLE`` — ``TransientStorageError`` before the call (nothing done: a 503);
* ``APPLIED_ERROR`` — the call is done, then ``TransientStorageError`` (the answer lost);
* ``CONFLICT`` — ``ConflictError`` before the call (a lock held past its timeout, a
  conflict storm that spent the retry budget).

``KillSwitch`` instead SIGKILLs the process before its n-th storage call (for the forked
workers of the kill tests).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from eval_queue.errors import ConflictError, TransientStorageError
from eval_queue.storage.base import Storage, Stores, Transform

CALLS = ("list", "versions", "read", "write", "create", "update", "delete")


class StoreFaultKind(StrEnum):
    UNAVAILABLE = "unavailable before the call"
    APPLIED_ERROR = "applied, then the answer lost"
    CONFLICT = "conflict (retry budget spent)"


@dataclass
class StoreFault:
    """The fault plan shared by the wrapped stores of one deployment.

    ``at`` indexes the calls counted while ``armed`` (only those made from a thread whose
    name starts with ``thread`` when it is set).  With ``rate`` each call is faulted at
    random instead, with a kind drawn from ``kinds``.
    """

    kind: StoreFaultKind | None = None
    at: int = -1
    thread: str | None = None
    rate: float = 0.0
    rng: Any = None
    kinds: tuple[StoreFaultKind, ...] = tuple(StoreFaultKind)
    #: With ``rate``: at most this many faults (None: no end), e.g. an outage of n calls.
    limit: int | None = None
    armed: bool = False
    seen: int = 0
    fired: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def decide(self, call: str) -> StoreFaultKind | None:
        with self.lock:
            if not self.armed:
                return None
            if self.thread is not None and not threading.current_thread().name.startswith(self.thread):
                return None
            if self.rate:
                if self.limit is not None and len(self.fired) >= self.limit:
                    return None
                if self.rng.random() >= self.rate:
                    return None
                kind = self.rng.choice(self.kinds)
            else:
                index, self.seen = self.seen, self.seen + 1
                if index != self.at or self.kind is None:
                    return None
                kind = self.kind
            self.fired.append(f"{kind.value} at {call}")
            return kind


class FaultyStorage:
    """A :class:`Storage` that asks ``fault`` before every call (see the module docstring)."""

    def __init__(self, inner: Storage, fault: StoreFault, name: str) -> None:
        self.inner = inner
        self.fault = fault
        self.name = name

    def __repr__(self) -> str:
        return f"FaultyStorage({self.inner!r})"

    def _call(self, call: str, run: Callable[[], Any]) -> Any:
        kind = self.fault.decide(f"{self.name}.{call}")
        if kind is StoreFaultKind.UNAVAILABLE:
            raise TransientStorageError(f"injected: {self.name}.{call} unavailable")
        if kind is StoreFaultKind.CONFLICT:
            raise ConflictError(f"injected: {self.name}.{call} kept losing races")
        result = run()
        if kind is StoreFaultKind.APPLIED_ERROR:
            raise TransientStorageError(f"injected: {self.name}.{call} done, answer lost")
        return result

    def list(self, prefix: str = "") -> list[str]:
        return self._call("list", lambda: self.inner.list(prefix))

    def versions(self, prefix: str = "") -> dict[str, str]:
        return self._call("versions", lambda: self.inner.versions(prefix))

    def read(self, path: str, *, max_bytes: int | None = None) -> bytes:
        return self._call("read", lambda: self.inner.read(path, max_bytes=max_bytes))

    def write(self, path: str, data: bytes, *, message: str = "") -> None:
        self._call("write", lambda: self.inner.write(path, data, message=message))

    def create(self, path: str, data: bytes, *, message: str = "") -> None:
        self._call("create", lambda: self.inner.create(path, data, message=message))

    def update(self, path: str, transform: Transform, *, message: str = "") -> bytes:
        return self._call("update", lambda: self.inner.update(path, transform, message=message))

    def delete(self, path: str, *, message: str = "") -> None:
        self._call("delete", lambda: self.inner.delete(path, message=message))


def faulty(stores: Stores, fault: StoreFault) -> Stores:
    return Stores(
        requests=FaultyStorage(stores.requests, fault, "requests"),
        results=FaultyStorage(stores.results, fault, "results"),
        details=FaultyStorage(stores.details, fault, "details"),
    )


@dataclass
class KillSwitch:
    """SIGKILLs this process at its ``at``-th counted event (a storage call, a synced temp file)."""

    at: int
    seen: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def tick(self) -> None:
        with self.lock:
            index, self.seen = self.seen, self.seen + 1
        if index == self.at:
            os.kill(os.getpid(), signal.SIGKILL)


class KillingStorage(FaultyStorage):
    """Counts calls on a :class:`KillSwitch` and dies before the chosen one."""

    def __init__(self, inner: Storage, switch: KillSwitch, name: str) -> None:
        super().__init__(inner, StoreFault(), name)
        self.switch = switch

    def _call(self, call: str, run: Callable[[], Any]) -> Any:
        self.switch.tick()
        return run()


def killing(stores: Stores, switch: KillSwitch) -> Stores:
    return Stores(
        requests=KillingStorage(stores.requests, switch, "requests"),
        results=KillingStorage(stores.results, switch, "results"),
        details=KillingStorage(stores.details, switch, "details"),
    )
