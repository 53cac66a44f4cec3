"""The hub test double with faults: :class:`FaultyHub` answers like :class:`FakeHub` except
for the one request (or burst) its :class:`HubFault` picks.

The fake hub's handler is wrapped, not changed: a fault decides before the request is
routed what happens to it.  Kinds (:class:`FaultKind`):

* ``UNAVAILABLE`` — answer ``503`` without doing anything;
* ``DROP`` — close the connection without answering (nothing done);
* ``APPLIED_500`` — a commit is applied, then answered ``500`` (the ambiguous answer);
* ``BURST`` — the commit and the next eleven each lose to a commit of somebody else just
  before them (``412`` twelve times: a storm that spends the client's whole CAS budget);
* ``HOLD`` — the request is done, but its answer held back for ``hold_s`` (longer than the
  client's read timeout): the client gives up while the server may have applied it.

Only requests made while the fault is ``armed`` are counted, so a test's own setup and
checks never meet a fault.  ``at`` is the index of the faulted request among the
requests the kind applies to (every request; commits only for APPLIED_500 and BURST).
"""

from __future__ import annotations

import io
import threading
import time
import uuid
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from tests.queue.fake_hub import FakeHub, _Handler

BURST_LENGTH = 12
NOISE_PATH = ".noise/burst"  # hidden: never part of a listing


class FaultKind(StrEnum):
    UNAVAILABLE = "503"
    DROP = "dropped connection"
    APPLIED_500 = "applied then 500"
    BURST = "12-commit conflict burst"
    HOLD = "held answer"

    @property
    def commits_only(self) -> bool:
        return self in (FaultKind.APPLIED_500, FaultKind.BURST)


@dataclass
class HubFault:
    """Which request to fault; ``fired`` says whether it happened (an index past the end never fires)."""

    kind: FaultKind | None = None
    at: int = -1
    hold_s: float = 1.0
    #: Random faults instead of one: each request fails with this probability, with a kind
    #: drawn from ``kinds`` (those that apply to it).
    rate: float = 0.0
    rng: Any = None
    kinds: tuple[FaultKind, ...] = tuple(FaultKind)
    #: Random faults on commits only.
    commits_only: bool = False
    armed: bool = False
    seen: int = 0
    fired: int = 0
    burst_left: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def decide(self, is_commit: bool) -> FaultKind | None:
        with self.lock:
            if not self.armed:
                return None
            if is_commit and self.burst_left > 0:
                self.burst_left -= 1
                return FaultKind.BURST
            if self.rate:
                kinds = [k for k in self.kinds if is_commit or not (k.commits_only or self.commits_only)]
                if not kinds or self.rng.random() >= self.rate:
                    return None
                kind = self.rng.choice(kinds)
            else:
                if self.kind is None or (self.kind.commits_only and not is_commit):
                    return None
                index, self.seen = self.seen, self.seen + 1
                if index != self.at:
                    return None
                kind = self.kind
            self.fired += 1
            if kind is FaultKind.BURST:
                self.burst_left = BURST_LENGTH - 1
            return kind


class FaultyHub(FakeHub):
    """``with FaultyHub(token=…) as hub: hub.fault = HubFault(FaultKind.DROP, at=3, armed=True)``."""

    def __init__(self, *, token: str | None = None) -> None:
        super().__init__(token=token)
        self.fault = HubFault()
        self.faults_fired: list[tuple[FaultKind, str]] = []
        self.server.RequestHandlerClass = _faulty_handler_for(self)


def _faulty_handler_for(hub: FaultyHub) -> type[_Handler]:
    class Handler(_FaultyHandler):
        pass

    Handler.hub = hub
    return Handler


class _FaultyHandler(_Handler):
    hub: FaultyHub

    def _route(self, method: str) -> None:
        is_commit = method == "POST" and "/commit/" in self.path
        kind = self.hub.fault.decide(is_commit)
        if kind is None:
            super()._route(method)
            return
        self.hub.faults_fired.append((kind, f"{method} {self.path.split('?')[0]}"))
        match kind:
            case FaultKind.UNAVAILABLE:
                self._drain()
                self._error(503, "Service Unavailable", None)
            case FaultKind.DROP:
                self._drain()
                self.close_connection = True  # no answer at all
            case FaultKind.APPLIED_500:
                answer = self._captured(method)
                if b" 200 " in answer.split(b"\r\n", 1)[0]:
                    self._error(500, "Internal Server Error", None)
                else:  # not applied (e.g. a real 412): pass the true answer on
                    self.wfile.write(answer)
            case FaultKind.BURST:
                self._foreign_commit()
                super()._route(method)
            case FaultKind.HOLD:
                answer = self._captured(method)
                time.sleep(self.hub.fault.hold_s)
                try:
                    self.wfile.write(answer)
                except OSError:  # the client gave up and closed the connection
                    self.close_connection = True
            case _:
                raise AssertionError(kind)

    def _drain(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)

    def _captured(self, method: str) -> bytes:
        """Route the request normally but keep its answer instead of sending it."""
        real, self.wfile = self.wfile, io.BytesIO()
        try:
            super()._route(method)
            return self.wfile.getvalue()  # type: ignore[attr-defined]
        finally:
            self.wfile = real

    def _foreign_commit(self) -> None:
        """Somebody else commits to this repo now (the head moves under the request)."""
        parts = self.path.split("?")[0].strip("/").split("/")
        repo = self.hub.repos.get((parts[1], f"{parts[2]}/{parts[3]}"))
        if repo is None:
            return
        with self.hub.lock:
            files = dict(repo.files)
            files[NOISE_PATH] = uuid.uuid4().hex.encode()
            repo.commit(files)
