"""Queue operations: add, list, claim with a lease, heartbeat, finish, fail, cancel, requeue.

Every status change is one :meth:`Storage.update` (compare-and-swap) whose transform
re-checks the precondition on the bytes it is handed, so two workers can never both
claim a request, and a worker whose lease was taken over can no longer finish it.

Life cycle::

    PENDING ──claim──> RUNNING ──finish──> FINISHED
       ^                 │ ├────fail────> FAILED    (always with ``error``)
       │   release /     │ └─lease expired max_attempts times──> FAILED
       └── lease expired ┘
    PENDING | RUNNING ──cancel──> CANCELLED
    FINISHED | FAILED | CANCELLED ──requeue──> PENDING (attempts reset)

``attempts`` counts runs lost to an expired lease (the worker died, was killed or
hung without renewing) *while the run was in progress*.  It is incremented when such a
lease is reaped; when it reaches ``max_attempts`` the request becomes FAILED with a
readable reason instead of going back to PENDING.  A clean ``release`` (the worker is
stopping) and an explicit ``fail`` do not count.

A RUNNING request's ``phase`` (:class:`~eval_queue.requests.RunPhase`) says what its
worker was doing, so an expired lease is read truthfully:

* ``claimed`` — the run never started (the worker died right after claiming, or never
  learnt that its claim was made because the answer was lost): back to PENDING, not counted;
* ``running`` (or no phase: older files) — the run may have crashed the worker: counted;
* ``publishing`` — the run succeeded and its results were being written to
  ``results_path``: if that file is in the results store the request is completed to
  FINISHED (whoever sees it first: the next claim, :meth:`RequestQueue.reap_expired`);
  if not, back to PENDING, not counted (the rerun writes the same paths, see
  :mod:`eval_queue.publication`).

Worker-side changes accept their own earlier result (``start``, ``begin_publishing``,
``finish``, ``fail``, ``release``, ``retry_later``): after an answer that was lost (a
timeout, a 500 after the commit was applied) the worker can simply try again.

Fair order (:func:`fair_order`): a request's rank is the number of requests of the
same submitter that are RUNNING or older and still PENDING; the lowest rank goes
first, then the oldest ``submitted_time``, then the request id.  That is round-robin
over submitters by their oldest pending request, so someone who queued fifty models
cannot starve someone who queued one.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from eval_queue import ledger
from eval_queue.errors import (
    AlreadyExistsError,
    ConflictError,
    InvalidTransitionError,
    LeaseLostError,
    MalformedFileError,
    NotFoundError,
    StorageError,
    TransientStorageError,
)
from eval_queue.publication import results_published
from eval_queue.redact import redact
from eval_queue.requests import (
    EvalRequest,
    RunPhase,
    Status,
    isoformat,
    isoformat_ms,
    parse_request_path,
    utc_now,
)
from eval_queue.safe_json import REQUEST_LIMITS
from eval_queue.storage.base import Storage

logger = logging.getLogger(__name__)

# Keeps a request that is requeued again and again from growing without bound.
HISTORY_LIMIT = 50
# A FAILED request's error keeps its first line and the end of the log tail within this.
ERROR_LIMIT = 8000
# Passes over the queue a claim makes while the store is too busy to accept it.
CLAIM_PASSES = 3
# Files a hub dataset repo commonly carries beside the requests; not problems.
IGNORED_FILES = frozenset({"README.md"})

Change = Callable[[EvalRequest], EvalRequest]
# Statuses a resubmission may replace (the others make it a duplicate).
REPLACEABLE_STATUSES = frozenset({Status.FAILED, Status.CANCELLED})


class QueueState(StrEnum):
    """What a request is doing, as a listing sees it: its status, except that a RUNNING
    request whose lease has expired (its worker stopped renewing it: crashed, killed,
    hung) is EXPIRED until the next claim reaps it back to PENDING."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    EXPIRED = "EXPIRED"
    FINISHED = "FINISHED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


def queue_state(request: EvalRequest, now: datetime) -> QueueState:
    """The derived state of ``request`` at ``now`` (see :class:`QueueState`)."""
    if request.status is Status.RUNNING:
        expires = request.lease_expires_at
        if expires is None or expires <= now:
            return QueueState.EXPIRED
    return QueueState(request.status.value)


@dataclass(frozen=True)
class QueueListing:
    """Every readable request, plus one error per file that could not be read as one.

    ``read_at`` is the queue's clock when the listing was read: what :meth:`state` compares
    leases by.
    """

    requests: list[EvalRequest] = field(default_factory=list)
    problems: list[MalformedFileError] = field(default_factory=list)
    read_at: datetime = field(default_factory=utc_now)

    def with_status(self, *statuses: Status) -> list[EvalRequest]:
        return [r for r in self.requests if r.status in statuses]

    def state(self, request: EvalRequest) -> QueueState:
        """``request``'s derived state when the listing was read (EXPIRED: a lapsed lease)."""
        return queue_state(request, self.read_at)


def fair_order(requests: Iterable[EvalRequest]) -> list[EvalRequest]:
    """The PENDING requests in the order workers take them (rule in the module docstring)."""
    requests = list(requests)
    busy = Counter(submitter_key(r.submitted_by) for r in requests if r.status is Status.RUNNING)
    pending = sorted(
        (r for r in requests if r.status is Status.PENDING), key=lambda r: (r.submitted_at, r.request_id)
    )
    ranked: list[tuple[int, datetime, str, EvalRequest]] = []
    for request in pending:
        who = submitter_key(request.submitted_by)
        ranked.append((busy[who], request.submitted_at, request.request_id, request))
        busy[who] += 1
    ranked.sort(key=lambda item: item[:3])
    return [item[3] for item in ranked]


def submitter_key(submitted_by: str) -> str:
    """The form of a submitter's name under which their requests count together
    (fair order, rate limit): surrounding space dropped, case folded."""
    return submitted_by.strip().casefold()


def path_of(request_id: str) -> str:
    """The store path of a request id (the id is the path without ``.json``)."""
    return request_id if request_id.endswith(".json") else f"{request_id}.json"


class RequestQueue:
    """The evaluation queue over a requests store.  Safe to use from many processes."""

    def __init__(
        self,
        storage: Storage,
        *,
        max_attempts: int = 3,
        clock: Callable[[], datetime] = utc_now,
        secrets: Iterable[str | None] = (),
        results: Storage | None = None,
    ) -> None:
        """``secrets`` (e.g. the configured HF token) are masked in the errors ``fail`` records,
        as is anything shaped like an HF token: request files are public.

        ``results`` is the results store, where the reaper looks for the results of a run
        whose worker stopped while publishing; without it such a run is repeated (into the
        same paths) instead of being completed.
        """
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.storage = storage
        self.results = results
        self._secrets = tuple(s for s in secrets if s)
        self.max_attempts = max_attempts
        self._clock = clock
        # path -> (version, parsed request or its problem): re-parse only what changed.
        # UI handlers list from several threads: the lock guards the cache's mutations
        # (reads and parses run outside it; a lost race only costs a re-parse).
        self._parsed: dict[str, tuple[str, EvalRequest | MalformedFileError]] = {}
        self._parsed_lock = threading.Lock()

    # -- reading -----------------------------------------------------------------

    def listing(self) -> QueueListing:
        """All requests, sorted by id; unreadable files are reported in ``problems`` and skipped."""
        read_at = self._clock()
        versions = self.storage.versions()
        with self._parsed_lock:
            for gone in self._parsed.keys() - versions.keys():
                self._parsed.pop(gone, None)
        requests: list[EvalRequest] = []
        problems: list[MalformedFileError] = []
        for path, version in sorted(versions.items()):
            if path in IGNORED_FILES:
                continue
            outcome = self._parsed_at(path, version)
            if isinstance(outcome, EvalRequest):
                requests.append(outcome)
            elif outcome is not None:
                problems.append(outcome)
        return QueueListing(requests, problems, read_at)

    def get(self, request_id: str) -> EvalRequest:
        """The request with this id; ``NotFoundError`` or ``MalformedFileError`` otherwise."""
        path = path_of(request_id)
        return EvalRequest.from_json(self._read(path), path)

    # -- submitting --------------------------------------------------------------

    def add(self, request: EvalRequest) -> EvalRequest:
        """Store a new request; ``AlreadyExistsError`` if its file exists."""
        self.storage.create(request.path, request.to_json(), message=f"Add {request.request_id}")
        logger.info("queued %s", request.request_id)
        return request

    def resubmit(self, request: EvalRequest) -> EvalRequest:
        """Replace a FAILED or CANCELLED request with ``request``, keeping its history.

        ``AlreadyExistsError`` if it became active (or finished) meanwhile: someone else
        resubmitted it first.
        """

        def change(old: EvalRequest) -> EvalRequest:
            if old.status not in REPLACEABLE_STATUSES:
                raise AlreadyExistsError(f"{request.request_id} is {old.status.value} again")
            history = [*old.history, *request.history][-HISTORY_LIMIT:]
            return request.model_copy(update={"history": history})

        replaced = self._change(request.request_id, change, f"Resubmit {request.request_id}")
        logger.info("resubmitted %s", request.request_id)
        return replaced

    def withdraw(self, request: EvalRequest) -> None:
        """Remove a request this process has just added (rolling back a submission).

        Only while it is still PENDING and unclaimed; otherwise it is left alone.
        """
        try:
            current = self.get(request.request_id)
            if current.status is Status.PENDING and current.claimed_by is None:
                self.storage.delete(request.path, message=f"Roll back {request.request_id}")
        except (NotFoundError, MalformedFileError) as exc:
            logger.info("not rolling back %s: %s", request.request_id, exc)

    def reserve(
        self,
        submitter: str,
        request_ids: Sequence[str],
        *,
        limit: int,
        period_s: float,
        now: datetime,
        listing: QueueListing,
    ) -> str:
        """Charge ``request_ids`` to ``submitter``'s ledger in one compare-and-swap, or refuse.

        Returns the reservation's token (for :meth:`release_reservation`).  Raises
        ``SubmissionRejected`` when the submitter's requests in the last ``period_s`` plus
        these would exceed ``limit`` (see :mod:`eval_queue.ledger`).  A submitter's first
        ledger is seeded from ``listing`` (the queue read once by the submission).
        ``MalformedFileError`` if the ledger file is unreadable.
        """
        key = submitter_key(submitter)
        # A submitter's first ledger: what the queue already holds of theirs counts too.
        seed = [
            ledger.LedgerEntry(time=r.submitted_time, request=r.request_id)
            for r in listing.requests
            if submitter_key(r.submitted_by) == key
        ]
        return ledger.reserve(
            self.storage,
            key,
            request_ids,
            limit=limit,
            period_s=period_s,
            now=now,
            label=submitter,
            seed=seed,
        )

    def release_reservation(self, submitter: str, request_ids: Sequence[str], token: str) -> None:
        """Undo the reservation ``token`` of :meth:`reserve` for requests that were not written."""
        ledger.unreserve(self.storage, submitter_key(submitter), request_ids, token)

    # -- worker side -------------------------------------------------------------

    def claim_next(self, worker_id: str, lease_s: float) -> EvalRequest | None:
        """Claim the first PENDING request in fair order, or ``None`` if there is none.

        Expired leases are reaped first, so a request orphaned by a dead worker is
        claimable again.  Losing a candidate to another claim moves on to the next.  A
        pass cut short by a busy store (``ConflictError``: the retry budget was spent)
        means the queue is busy, not empty: the listing is read again, up to
        ``CLAIM_PASSES`` times, which also bounds how long a claim can take.
        """
        for _ in range(CLAIM_PASSES):
            claimed, busy = self._claim_pass(worker_id, lease_s)
            if claimed is not None or not busy:
                return claimed
        return None

    def _claim_pass(self, worker_id: str, lease_s: float) -> tuple[EvalRequest | None, bool]:
        """One pass over the candidates: (the claimed request, whether any attempt hit a conflict)."""
        listing = self.listing()
        reaped = {r.request_id: r for r in self._reap(listing.requests)}
        current = [reaped.get(r.request_id, r) for r in listing.requests]
        busy = False
        for candidate in fair_order(current):
            try:
                claimed = self._change(
                    candidate.request_id, self._claim_change(worker_id, lease_s), f"Claim by {worker_id}"
                )
            except TransientStorageError as exc:
                # No answer: the claim may have been made all the same.  Read it back, so
                # that a claim of ours is run now rather than waiting out its lease.
                claimed = self._claim_read_back(candidate.request_id, worker_id, exc)
                return claimed, busy
            except ConflictError as exc:
                # The store's retry budget is spent: the next candidate would fare no
                # better, so start a new pass from a fresh listing instead.
                logger.info("store busy while claiming %s: %s", candidate.request_id, exc)
                busy = True
                break
            except (InvalidTransitionError, NotFoundError, MalformedFileError) as exc:
                logger.debug("could not claim %s: %s", candidate.request_id, exc)
                continue
            logger.info("%s claimed %s", worker_id, claimed.request_id)
            return claimed, busy
        return None, busy

    def _claim_read_back(self, request_id: str, worker_id: str, lost: TransientStorageError) -> EvalRequest:
        """After a claim whose answer was lost: the request if the claim was made, else ``lost`` again."""
        try:
            current = self.get(request_id)
        except (StorageError, MalformedFileError) as exc:
            raise lost from exc
        # It was PENDING in the listing a moment ago: claimed by us now means by this claim.
        mine = current.status is Status.RUNNING and current.claimed_by == worker_id
        if mine and current.phase is RunPhase.CLAIMED:
            logger.warning("claiming %s: %s; read back: the claim was made", request_id, lost)
            return current
        raise lost

    def renew(self, request_id: str, worker_id: str, lease_s: float) -> EvalRequest:
        """Heartbeat: extend the lease; ``LeaseLostError`` if the request is no longer ours."""

        def change(request: EvalRequest) -> EvalRequest:
            _check_holder(request, worker_id)
            # No history entry: a heartbeat every few seconds would bury the trail.
            return request.model_copy(update={"lease_expires": self._lease_until(lease_s)})

        return self._change(request_id, change, f"Renew lease of {worker_id}")

    def start(self, request_id: str, worker_id: str, lease_s: float) -> EvalRequest:
        """The worker starts the run: phase ``running`` (from now on a lost lease counts), lease renewed.

        ``LeaseLostError`` if the request is no longer ours.  Trying again after a lost
        answer is harmless.
        """

        def change(request: EvalRequest) -> EvalRequest:
            _check_holder(request, worker_id)
            if request.phase is RunPhase.RUNNING:
                return request  # our earlier try was made: nothing to write (the heartbeat renews)
            lease = self._lease_until(lease_s)
            return request.model_copy(update={"phase": RunPhase.RUNNING, "lease_expires": lease})

        return self._change(request_id, change, f"Start {request_id}")

    def begin_publishing(
        self, request_id: str, worker_id: str, lease_s: float, results_path: str
    ) -> EvalRequest:
        """The run succeeded: phase ``publishing`` with the ``results_path`` about to be written.

        Recorded before anything is uploaded, so that whoever finds the lease expired
        knows where to look (module docstring).  Renews the lease; ``LeaseLostError`` if
        the request is no longer ours.  Trying again after a lost answer is harmless.
        """

        def change(request: EvalRequest) -> EvalRequest:
            _check_holder(request, worker_id)
            if request.phase is RunPhase.PUBLISHING and request.results_path == results_path:
                return request  # our earlier try was made: nothing to write (the heartbeat renews)
            update = {
                "phase": RunPhase.PUBLISHING,
                "results_path": results_path,
                "lease_expires": self._lease_until(lease_s),
            }
            return request.model_copy(update=update)

        return self._change(request_id, change, f"Publish {request_id}")

    def finish(self, request_id: str, worker_id: str, results_path: str) -> EvalRequest:
        """RUNNING (ours) → FINISHED with ``results_path``.

        Already FINISHED with this ``results_path`` (our own earlier try whose answer was
        lost, or the reaper that found our results) counts as done: the request is returned
        unchanged.  Otherwise ``LeaseLostError`` if the request is no longer ours.
        """

        def change(request: EvalRequest) -> EvalRequest:
            if request.status is Status.FINISHED and request.results_path == results_path:
                return request
            _check_holder(request, worker_id)
            return self._moved(
                request,
                Status.FINISHED,
                worker_id,
                f"results in {results_path}",
                results_path=results_path,
                lease_expires=None,
                error=None,
            )

        return self._change(request_id, change, f"Finish {request_id}")

    def fail(self, request_id: str, worker_id: str, error: str) -> EvalRequest:
        reason = _clip(
            redact(error, *self._secrets).strip()
            or f"the worker {worker_id} reported a failure without a reason"
        )

        def change(request: EvalRequest) -> EvalRequest:
            if request.status is Status.FAILED and _last_by(request) == worker_id:
                return request  # our own earlier try, whose answer was lost
            _check_holder(request, worker_id)
            return self._moved(
                request, Status.FAILED, worker_id, _first_line(reason), error=reason, lease_expires=None
            )

        return self._change(request_id, change, f"Fail {request_id}")

    def release(self, request_id: str, worker_id: str, note: str) -> EvalRequest:
        """Hand a running request back (e.g. on SIGTERM); ``attempts`` is unchanged."""

        def change(request: EvalRequest) -> EvalRequest:
            if request.status is Status.PENDING and _last_by(request) == worker_id:
                return request  # our own earlier try, whose answer was lost
            _check_holder(request, worker_id)
            return self._moved(
                request, Status.PENDING, worker_id, note or "released", claimed_by=None, lease_expires=None
            )

        return self._change(request_id, change, f"Release {request_id}")

    def retry_later(self, request_id: str, worker_id: str, reason: str) -> EvalRequest:
        """Hand back a run that failed in a way a new attempt may not repeat (e.g. a stalled harness).

        Counted like a lost lease: back to PENDING with ``attempts`` + 1, or FAILED with
        ``reason`` once ``max_attempts`` is reached, so a request that always stalls ends.
        """
        reason = _clip(redact(reason, *self._secrets).strip() or f"handed back by {worker_id}")

        def change(request: EvalRequest) -> EvalRequest:
            if request.status in (Status.PENDING, Status.FAILED) and _last_by(request) == worker_id:
                return request  # our own earlier try, whose answer was lost
            _check_holder(request, worker_id)
            attempts = request.attempts + 1
            if attempts >= self.max_attempts:
                error = f"gave up after {attempts} attempts; last: {reason}"
                return self._moved(
                    request, Status.FAILED, worker_id, _first_line(reason),
                    attempts=attempts, error=error, lease_expires=None,
                )  # fmt: skip
            return self._moved(
                request, Status.PENDING, worker_id, _first_line(reason),
                attempts=attempts, claimed_by=None, lease_expires=None,
            )  # fmt: skip

        return self._change(request_id, change, f"Retry {request_id} later")

    def reap_expired(self) -> list[EvalRequest]:
        """Send RUNNING requests whose lease expired back to PENDING (or FAILED after
        ``max_attempts``); returns the requests changed."""
        return self._reap(self.listing().requests)

    # -- maintainer side ---------------------------------------------------------

    def cancel(self, request_id: str, *, by: str = "maintainer") -> EvalRequest:
        """PENDING or RUNNING → CANCELLED (a running worker loses its lease)."""

        def change(request: EvalRequest) -> EvalRequest:
            if request.status not in (Status.PENDING, Status.RUNNING):
                raise InvalidTransitionError(
                    f"cannot cancel {request.request_id}: it is already {request.status.value}"
                )
            return self._moved(request, Status.CANCELLED, by, "cancelled", lease_expires=None)

        return self._change(request_id, change, f"Cancel {request_id}")

    def requeue(self, request_id: str, *, by: str = "maintainer") -> EvalRequest:
        """FINISHED, FAILED or CANCELLED → PENDING with attempts and error cleared."""

        def change(request: EvalRequest) -> EvalRequest:
            if request.status in (Status.PENDING, Status.RUNNING):
                raise InvalidTransitionError(
                    f"cannot requeue {request.request_id}: it is {request.status.value}; "
                    "only FINISHED, FAILED or CANCELLED requests can be requeued"
                )
            return self._moved(
                request,
                Status.PENDING,
                by,
                f"requeued (was {request.status.value})",
                attempts=0,
                error=None,
                claimed_by=None,
                lease_expires=None,
                results_path=None,
                run_stamp=None,  # a new run: new output paths, the old files are superseded
            )

        return self._change(request_id, change, f"Requeue {request_id}")

    # -- internals ---------------------------------------------------------------

    def _parsed_at(self, path: str, version: str) -> EvalRequest | MalformedFileError | None:
        cached = self._parsed.get(path)
        if cached is not None and cached[0] == version:
            return cached[1]
        outcome = self._load(path)
        if outcome is None:  # deleted between listing and reading
            return None
        if isinstance(outcome, MalformedFileError):
            logger.warning("skipping malformed request file %s", outcome)
        with self._parsed_lock:
            self._parsed[path] = (version, outcome)
        return outcome

    def _read(self, path: str) -> bytes:
        # The cap is checked before reading: a huge file is refused unread.
        return self.storage.read(path, max_bytes=REQUEST_LIMITS.max_bytes)

    def _load(self, path: str) -> EvalRequest | MalformedFileError | None:
        try:
            parse_request_path(path)
            return EvalRequest.from_json(self._read(path), path)
        except MalformedFileError as exc:
            return exc
        except NotFoundError:
            return None

    def _change(self, request_id: str, change: Change, message: str) -> EvalRequest:
        """Apply ``change`` to the stored request as one compare-and-swap."""
        path = path_of(request_id)

        def transform(data: bytes) -> bytes:
            current = EvalRequest.from_json(data, path)
            changed = change(current)
            # A change that returns the request itself changes nothing: no write at all.
            return data if changed is current else changed.to_json()

        return EvalRequest.from_json(self.storage.update(path, transform, message=message), path)

    def _claim_change(self, worker_id: str, lease_s: float) -> Change:
        def change(request: EvalRequest) -> EvalRequest:
            if request.status is not Status.PENDING:
                raise InvalidTransitionError(f"{request.request_id} is {request.status.value}, not PENDING")
            return self._moved(
                request,
                Status.RUNNING,
                worker_id,
                "claimed",
                claimed_by=worker_id,
                lease_expires=self._lease_until(lease_s),
                error=None,
                phase=RunPhase.CLAIMED,
                # The first claim names the run's outputs; a rerun keeps the name.
                run_stamp=request.run_stamp or isoformat(self._clock()),
            )

        return change

    def _reap(self, requests: Iterable[EvalRequest]) -> list[EvalRequest]:
        reaped: list[EvalRequest] = []
        for request in requests:
            if request.status is not Status.RUNNING or not self._expired(request):
                continue
            try:
                published = self._published(request)
            except StorageError as exc:  # cannot tell whether its results are there: decide later
                logger.warning(
                    "not reaping %s yet: cannot read the results store: %s", request.request_id, exc
                )
                continue
            try:
                change = self._expire_change(request.phase, request.results_path, published)
                reaped.append(self._change(request.request_id, change, "Lease expired"))
            except (InvalidTransitionError, ConflictError, NotFoundError, MalformedFileError) as exc:
                logger.debug("not reaping %s: %s", request.request_id, exc)
        for request in reaped:
            logger.warning("lease expired on %s: now %s", request.request_id, request.status.value)
        return reaped

    def _published(self, request: EvalRequest) -> bool:
        """Whether the results a publishing run recorded are in the results store (False: unknown store)."""
        if request.phase is not RunPhase.PUBLISHING or not request.results_path or self.results is None:
            return False
        return results_published(self.results, request.results_path)

    def _expire_change(self, phase: RunPhase | None, results_path: str | None, published: bool) -> Change:
        """The change for a lapsed lease, decided by what the worker was doing (module docstring).

        ``phase`` and ``results_path`` are what ``published`` was checked for; the change
        re-checks them on the fresh bytes, with the expiry.
        """

        def change(request: EvalRequest) -> EvalRequest:
            # The worker may have renewed, moved on or finished meanwhile.
            if request.status is not Status.RUNNING or not self._expired(request):
                raise InvalidTransitionError(f"{request.request_id}: lease no longer expired")
            if (request.phase, request.results_path) != (phase, results_path):
                raise InvalidTransitionError(f"{request.request_id}: its worker moved on meanwhile")
            worker = request.claimed_by
            expired = f"lease of worker {worker} expired at {request.lease_expires}"
            if phase is RunPhase.PUBLISHING and published:
                note = f"results found in {results_path}: finished for worker {worker}, whose lease expired"
                return self._moved(request, Status.FINISHED, "queue", note, lease_expires=None, error=None)
            if phase in (RunPhase.CLAIMED, RunPhase.PUBLISHING):
                what = (
                    "before it started the run (it stopped, or its claim's answer was lost)"
                    if phase is RunPhase.CLAIMED
                    else "while it was publishing a finished run, whose results are not in the store"
                )
                return self._moved(
                    request, Status.PENDING, "queue", f"{expired} {what}; not counted as an attempt",
                    claimed_by=None, lease_expires=None, results_path=None,
                )  # fmt: skip
            return self._lost_run(
                request,
                f"{expired} during the run (the worker stopped renewing it: crashed, killed, hung, "
                "or cut off from the store)",
            )

        return change

    def _lost_run(self, request: EvalRequest, lost: str) -> EvalRequest:
        """A run lost with its lease: counted; FAILED once ``max_attempts`` runs were lost."""
        attempts = request.attempts + 1
        if attempts >= self.max_attempts:
            error = (
                f"gave up after {attempts} attempts that each ended with an expired lease during the run; "
                f"last: {lost}. The run probably crashes the worker (e.g. out of memory), unless the "
                "store was unreachable for longer than a lease each time; check the worker's log, then requeue."
            )
            return self._moved(
                request, Status.FAILED, "queue", lost, attempts=attempts, error=error, lease_expires=None
            )
        return self._moved(
            request, Status.PENDING, "queue", lost, attempts=attempts, claimed_by=None, lease_expires=None
        )

    def _expired(self, request: EvalRequest) -> bool:
        expires = request.lease_expires_at
        return expires is None or expires <= self._clock()

    def _lease_until(self, lease_s: float) -> str:
        if lease_s <= 0:
            raise ValueError("lease_s must be positive")
        return isoformat_ms(self._clock() + timedelta(seconds=lease_s))

    def _moved(self, request: EvalRequest, status: Status, by: str, note: str, **fields: Any) -> EvalRequest:
        """A copy of ``request`` in ``status`` with ``fields`` changed and a history entry.

        A request that leaves RUNNING loses its ``phase`` (only RUNNING has one).
        """
        entry = {"time": isoformat(self._clock()), "status": status.value, "by": by, "note": note}
        history = [*request.history, entry][-HISTORY_LIMIT:]
        if status is not Status.RUNNING:
            fields.setdefault("phase", None)
        return request.model_copy(update={**fields, "status": status, "history": history})


def _check_holder(request: EvalRequest, worker_id: str) -> None:
    if request.status is not Status.RUNNING or request.claimed_by != worker_id:
        holder = f", claimed by {request.claimed_by}" if request.claimed_by else ""
        raise LeaseLostError(
            f"{request.request_id} is no longer held by {worker_id} (it is {request.status.value}{holder})"
        )


def _last_by(request: EvalRequest) -> str | None:
    """Who made the request's last status change (``history``), if anyone."""
    return request.history[-1].get("by") if request.history else None


def _clip(error: str, limit: int = ERROR_LIMIT) -> str:
    """Keep the headline and the end of a long log tail, where the cause usually is."""
    if len(error) <= limit:
        return error
    head = _first_line(error)
    return f"{head}\n… ({len(error) - limit} characters cut) …\n{error[-(limit - len(head) - 40) :]}"


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
