"""One run of the worker: claim a request, evaluate it with its track's runner, publish, record the outcome.

``run_once`` claims the next request (fair order, compare-and-swap, so several workers
on one queue never run the same request), marks the run started (phase ``running``:
from now on a lost lease counts as an attempt), renews its lease from a heartbeat thread
while the track's runner (:mod:`backend.tracks`) evaluates it, then

* publishes the per-sample details and the results file and marks it FINISHED
  (:mod:`backend.publish`: one transaction, each step retried on transient errors), or
* marks it FAILED with a readable reason (what failed, where) and a short log tail, or
* on SIGTERM/SIGINT hands it back to PENDING (``release``), or
* if the harness makes no progress for ``config.stall_s``, stops the run and hands the
  request back counting an attempt (``retry_later``: FAILED once attempts run out), or
* if the heartbeat finds the lease lost (expired and re-claimed, or cancelled), stops
  and publishes nothing, or
* if the store cannot be reached (hub outage, lock timeout) even after retries, gives up
  this round (``STORE_UNAVAILABLE``) and never marks the request FAILED for it: nothing
  claimed; or the request handed back without counting an attempt; or, once its results
  are written, left in phase ``publishing`` for the next claim to complete to FINISHED.

The heartbeat renews only while the main thread shows signs of life (harness progress
during the run, each store call while publishing); when it has been quiet past its
limit (``stall_s + blocked_s`` during the run, ``blocked_s`` otherwise) the worker is
hung where no timeout reaches, and the heartbeat lets the lease expire.

Signals: while the runner works, SIGTERM/SIGINT (and the heartbeat's and the watchdog's
SIGUSR1) raise in the main thread (:class:`SignalGate`).  Processes the harness forks
(lm-eval's bootstrap ``multiprocessing.Pool``) must not inherit that Python-level
handler: CPython drops a Python-level signal that reaches a child between ``fork()`` and
its after-fork reinitialisation, so ``Pool.terminate()``'s SIGTERM could be lost and
the pool's ``join()`` wait forever on a child blocked on the queue lock.
:class:`_ForkSignalReset` blocks those signals across ``fork()`` and gives the child the
default dispositions before unblocking them, so a child dies of SIGTERM with no Python
code running, whenever it arrives.

The command line is :mod:`backend.cli`, the serve loop :mod:`backend.serve`.
"""

from __future__ import annotations

import collections
import logging
import tempfile
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from backend.config import ExitCode, Outcome, WorkerConfig
from backend.provenance import stamp_request
from backend.publish import Unconfirmed, publish
from backend.signals import GATED_SIGNALS, SignalGate, WorkerInterrupted, disarm, signal_gate
from backend.tracks import Evaluation, Progress, RunContext, StageError, TrackRunner, runner_for
from eval_queue.errors import EvalitaError, LeaseLostError, MalformedFileError, StorageError
from eval_queue.names import check_runnable
from eval_queue.queue import RequestQueue, fair_order
from eval_queue.redact import redacting_records
from eval_queue.requests import EvalRequest
from eval_queue.storage import Stores

log = logging.getLogger(__name__)

LOG_TAIL_LINES = 30
#: The stage of a runner's failure that names none (:func:`_evaluate`).
HARNESS_STAGE = "running the harness"

__all__ = [
    "GATED_SIGNALS",
    "Evaluation",
    "ExitCode",
    "Outcome",
    "StageError",
    "WorkerConfig",
    "failure_reason",
    "run_once",
    "signal_gate",
]


class _LeaseLostSignal(BaseException):  # control flow: `except Exception` must not catch it
    """Raised in the main thread when the heartbeat thread finds the lease lost."""


class _StalledSignal(BaseException):  # control flow, like _LeaseLostSignal
    """Raised in the main thread when the watchdog finds the harness stalled."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------- log tail


class LogTail(logging.Handler):
    """Keeps the last lines logged, for the FAILED request's ``error`` field."""

    def __init__(self, lines: int = LOG_TAIL_LINES) -> None:
        super().__init__(level=logging.INFO)
        self.lines: collections.deque[str] = collections.deque(maxlen=lines)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:  # a broken log call must not break the worker
            text = str(record.msg)
        self.lines.extend(line[:300] for line in text.splitlines()[:5])

    def text(self) -> str:
        return "\n".join(self.lines)


@contextmanager
def _captured_log() -> Iterator[LogTail]:
    tail = LogTail()
    root = logging.getLogger()
    root.addHandler(tail)
    try:
        yield tail
    finally:
        root.removeHandler(tail)


def failure_reason(exc: BaseException, tail: str) -> str:
    """A readable reason: what failed and where, then the innermost frames and the log tail."""
    stage = exc.stage if isinstance(exc, StageError) else "worker"
    cause = exc.cause if isinstance(exc, StageError) else exc
    frames = traceback.extract_tb(cause.__traceback__)
    where = (
        f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    )
    lines = [f"{stage} failed: {type(cause).__name__}: {cause}{where}"]
    chain = cause.__cause__ or cause.__context__
    if chain is not None:
        lines.append(f"caused by {type(chain).__name__}: {chain}")
    if tail:
        lines += ["--- log tail ---", tail]
    return "\n".join(lines)[:6000]


# --------------------------------------------------------------------------- heartbeat and watchdog


class _BackgroundLoop:
    """A daemon thread running ``_run`` until :meth:`stop` (which waits for it, unless called from it)."""

    def __init__(self, name: str) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)


class Heartbeat(_BackgroundLoop):
    """Renews the lease every ``heartbeat_s`` in a thread, from the claim until the request is
    finished (publishing included); on loss, interrupts the main thread (while it evaluates).

    Renews only while the main thread shows signs of life: :meth:`watch` names what it
    beats (a :class:`~backend.tracks.Progress`) and how long it may stay quiet.  Past
    that, the main thread is hung where no timeout or watchdog reaches; the heartbeat
    stops (``abandoned`` says why) and the lease expires, so the request moves on.

    Transient errors (any :class:`EvalitaError`) are logged and retried at the next beat;
    unexpected exceptions are logged with their traceback and retried too.
    """

    def __init__(
        self, queue: RequestQueue, request_id: str, config: WorkerConfig, gate: SignalGate | None
    ) -> None:
        self._queue = queue
        super().__init__("lease-heartbeat")
        self._request_id = request_id
        self._config = config
        self._gate = gate
        self.lost: LeaseLostError | None = None
        self.abandoned: str | None = None
        self._lock = threading.Lock()
        self._watched = Progress()
        self._limit_s = config.blocked_s
        self._doing = "claiming"

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def watch(self, liveness: Progress, limit_s: float, doing: str) -> None:
        """From now on renew only while ``liveness`` beat within the last ``limit_s`` seconds."""
        with self._lock:
            self._watched, self._limit_s, self._doing = liveness, limit_s, doing

    def _blocked(self) -> str | None:
        with self._lock:
            idle, limit, doing = self._watched.idle_s(), self._limit_s, self._doing
        if idle <= limit:
            return None
        return (
            f"the worker has shown no sign of life for {idle:.0f} s while {doing} (last: "
            f"{self._watched.what}; limit {limit:g} s)"
        )

    def _run(self) -> None:
        while not self._stop.wait(self._config.heartbeat_s):
            blocked = self._blocked()
            if blocked is not None:
                self.abandoned = blocked
                log.error(
                    "%s: %s; no longer renewing its lease, so that it can move on", self._request_id, blocked
                )
                return
            try:
                self._queue.renew(self._request_id, self._config.worker_id, self._config.lease_s)
                log.debug("lease of %s renewed", self._request_id)
            except LeaseLostError as exc:
                if self._stop.is_set():  # raced with finish/fail/release: the job is over anyway
                    return
                self.lost = exc
                log.error("lease lost on %s: %s; stopping", self._request_id, exc)
                if self._gate is not None:
                    self._gate.interrupt(_LeaseLostSignal())
                return
            except EvalitaError as exc:  # transient: keep trying while the lease may still be valid
                log.warning("could not renew the lease of %s: %s", self._request_id, exc)
            except Exception:  # a bug: say so loudly, but keep the lease alive if the next try works
                log.exception("unexpected error renewing the lease of %s", self._request_id)


class StallWatchdog(_BackgroundLoop):
    """Stops a run whose harness has reported no progress for ``stall_s`` seconds.

    The heartbeat alone would keep a hung run's lease alive forever; the watchdog reads
    the runner's :class:`~backend.tracks.Progress` and interrupts the main thread with a
    reason naming where the run was.
    """

    def __init__(self, progress: Progress, stall_s: float, gate: SignalGate | None) -> None:
        super().__init__("stall-watchdog")
        self._progress = progress
        self._stall_s = stall_s
        self._gate = gate
        self.reason: str | None = None

    def start(self) -> StallWatchdog:
        if self._gate is not None:  # without a gate nothing could stop the run anyway
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(min(max(self._stall_s / 10.0, 0.05), 5.0)):
            idle = self._progress.idle_s()
            if idle >= self._stall_s:
                self.reason = (
                    f"the harness made no progress for {idle:.0f} s (limit --stall-s {self._stall_s:g}); "
                    f"last: {self._progress.what}"
                )
                log.error("stalled: %s", self.reason)
                assert self._gate is not None
                self._gate.interrupt(_StalledSignal(self.reason))
                return


# --------------------------------------------------------------------------- one job


def next_request(queue: RequestQueue) -> EvalRequest | None:
    """The request :meth:`RequestQueue.claim_next` would claim now (None: none, or unreadable).

    For the pre-claim data check only: another worker may claim it first, and the runner
    checks its data again when it runs.
    """
    try:
        pending = fair_order(queue.listing().requests)
    except StorageError as exc:
        log.warning("could not list the queue before claiming: %s", exc)
        return None
    return pending[0] if pending else None


def run_once(
    stores: Stores, queue: RequestQueue, config: WorkerConfig, evaluate: TrackRunner | None = None
) -> Outcome:
    """Claim and run at most one request; see the module docstring for the outcomes.

    ``evaluate`` replaces the track's registered runner (tests); None: ``runner_for(request.track)``.
    Every log record made meanwhile is masked (:func:`eval_queue.redact.redacting_records`): a
    program calling this with handlers of its own sees no secret of the environment either.
    """
    with redacting_records():
        return _run_once(stores, queue, config, evaluate)


def _run_once(
    stores: Stores, queue: RequestQueue, config: WorkerConfig, evaluate: TrackRunner | None
) -> Outcome:
    try:
        request = queue.claim_next(config.worker_id, config.lease_s)
    except StorageError as exc:
        log.error("could not claim: the store is unavailable: %s", exc)
        return Outcome.STORE_UNAVAILABLE
    if request is None:
        log.info("nothing to do: no PENDING request")
        return Outcome.NOTHING
    rid = request.request_id
    log.info(
        "claimed %s (%s@%s, %s, %s, %d-shot%s)",
        rid,
        request.model,
        request.revision,
        request.precision,
        request.track,
        request.num_fewshot,
        f", {request.variant}" if request.variant else "",
    )
    with _captured_log() as tail, signal_gate() as gate:
        heartbeat = Heartbeat(queue, rid, config, gate).start()
        progress = Progress()
        watchdog = StallWatchdog(progress, config.stall_s, gate)

        def stop_threads() -> None:
            disarm(gate)
            watchdog.stop()
            heartbeat.stop()

        starting = Progress()
        heartbeat.watch(starting, config.blocked_s, "starting the run")
        started = _start(queue, rid, config, starting)
        if started is not None:
            stop_threads()
            return started
        try:
            # A request file can be edited in the store: its model id and revision are
            # checked again before any runner builds model_args from them.
            check_runnable(request.model, request.revision)
            runner = evaluate or runner_for(request.track)
            heartbeat.watch(progress, config.stall_s + config.blocked_s, "running")
            with tempfile.TemporaryDirectory(prefix="evalita-run-") as workdir:
                context = RunContext(stores=stores, workdir=Path(workdir), progress=progress)
                watchdog.start()
                if gate is not None:
                    gate.armed = True
                evaluation = _evaluate(runner, request, config, context)
                disarm(gate)
                watchdog.stop()
            # Provenance is the worker's, the same for every track: model block, ids, paths.
            publication = stamp_request(request, config.worker_id, evaluation)
            if heartbeat.lost:
                raise _LeaseLostSignal()
            # The heartbeat keeps renewing while publishing: a slow upload must not lose the lease.
            publishing = Progress()
            heartbeat.watch(publishing, config.blocked_s, "publishing")
            publish(stores, queue, request, config, publication, liveness=publishing)
            heartbeat.stop()
        except (_LeaseLostSignal, LeaseLostError) as lost:
            stop_threads()
            log.error("%s: lease lost%s; nothing more is published", rid, f" ({lost})" if str(lost) else "")
            return Outcome.LEASE_LOST
        except Unconfirmed as unconfirmed:
            stop_threads()
            return _unconfirmed(queue, rid, config, unconfirmed)
        except _StalledSignal as stalled:
            stop_threads()
            return _hand_back(queue, rid, config, f"stalled: {stalled.reason}", count_attempt=True)
        except WorkerInterrupted as stop:
            stop_threads()
            log.warning("%s: interrupted by %s; handing the request back", rid, stop)
            return _hand_back(queue, rid, config, f"worker {config.worker_id} stopped by {stop}")
        except Exception as exc:  # the outermost handler of a job: record a readable reason
            stop_threads()
            log.exception("%s failed", rid)
            return _fail(queue, rid, config, failure_reason(exc, tail.text()))
        finally:
            stop_threads()  # idempotent: every path above has stopped them already
        if gate is not None and gate.pending:
            log.warning("stop requested while publishing: %s was finished first", rid)
    log.info("%s FINISHED: %s", rid, publication.results_path)
    return Outcome.FINISHED


def _evaluate(
    runner: TrackRunner, request: EvalRequest, config: WorkerConfig, context: RunContext
) -> Evaluation:
    """The runner's evaluation.  Whatever it raises without a stage (lm-eval and torch raise their
    own types) failed while running the harness: the one catch-all of every track's runner."""
    try:
        return runner(request, config, context)
    except (StageError, LeaseLostError):  # tagged already, or the worker's own control flow
        raise
    except Exception as exc:
        raise StageError(HARNESS_STAGE, exc) from exc


def _start(queue: RequestQueue, rid: str, config: WorkerConfig, liveness: Progress) -> Outcome | None:
    """Mark the run started (phase ``running``); None when it may go on, else how this job ends.

    A store that stays unreachable hands the request back: nothing ran, nothing is counted.
    """
    try:
        config.store_retry.call(
            f"{rid}: starting the run",
            lambda: queue.start(rid, config.worker_id, config.lease_s),
            before_each=lambda: liveness.beat("starting the run"),
        )
    except LeaseLostError as lost:
        log.error("%s: lease lost before the run started: %s", rid, lost)
        return Outcome.LEASE_LOST
    except (StorageError, MalformedFileError) as exc:
        log.error("%s: could not start the run: %s", rid, exc)
        return _hand_back(
            queue, rid, config, f"the store could not be used to start the run: {exc}", store=True
        )
    return None


def _unconfirmed(queue: RequestQueue, rid: str, config: WorkerConfig, unconfirmed: Unconfirmed) -> Outcome:
    """The store stayed unreachable while publishing: never FAILED (see :mod:`backend.publish`)."""
    if unconfirmed.results_written:
        log.error(
            "%s: its results are in the store, but %s failed (%s); it stays RUNNING (publishing) and "
            "the next claim or the reaper marks it FINISHED once its lease expires",
            rid,
            unconfirmed.step,
            unconfirmed.cause,
        )
        return Outcome.STORE_UNAVAILABLE
    log.error(
        "%s: %s failed (%s); handing it back, not counted as an attempt",
        rid,
        unconfirmed.step,
        unconfirmed.cause,
    )
    return _hand_back(
        queue, rid, config, f"the store could not be used to publish: {unconfirmed.cause}", store=True
    )


def _hand_back(
    queue: RequestQueue,
    rid: str,
    config: WorkerConfig,
    note: str,
    *,
    count_attempt: bool = False,
    store: bool = False,
) -> Outcome:
    """Back to PENDING: ``release`` (a stop, or ``store``: the store could not be used; neither
    counts), or ``retry_later`` (a stall: counted as an attempt).

    After store trouble the release is retried like the publish steps (the outage may be
    ending).  If the store still refuses, the request stays RUNNING and its expired lease
    is decided by its phase: a run that never started, or that was publishing, is not
    counted; a run in progress is (the reaper cannot tell an outage longer than the retries
    and the lease from a crash, and says so).
    """
    try:
        if count_attempt:
            handed = queue.retry_later(rid, config.worker_id, note)
            log.error("%s: %s; the request is %s again", rid, note, handed.status.value)
        elif store:
            config.store_retry.call(
                f"{rid}: handing it back", lambda: queue.release(rid, config.worker_id, note)
            )
            log.error("%s: handed back to PENDING, not counted as an attempt", rid)
        else:
            queue.release(rid, config.worker_id, note)
    except LeaseLostError as exc:
        log.error("could not hand %s back: %s", rid, exc)
    except (StorageError, MalformedFileError) as exc:
        log.error("could not hand %s back (it stays RUNNING until its lease expires): %s", rid, exc)
        return Outcome.STORE_UNAVAILABLE
    if store:
        return Outcome.STORE_UNAVAILABLE
    return Outcome.FAILED if count_attempt else Outcome.RELEASED


def _fail(queue: RequestQueue, rid: str, config: WorkerConfig, reason: str) -> Outcome:
    """FAILED with ``reason`` (retried on transient errors: a lost lease would count as a crash)."""
    try:
        config.store_retry.call(
            f"{rid}: marking it FAILED", lambda: queue.fail(rid, config.worker_id, reason)
        )
    except LeaseLostError as lost:
        log.error("could not mark %s FAILED: %s", rid, lost)
        return Outcome.LEASE_LOST
    except (StorageError, MalformedFileError) as unavailable:
        log.error("could not mark %s FAILED (it stays RUNNING until its lease expires): %s", rid, unavailable)
        return Outcome.STORE_UNAVAILABLE
    return Outcome.FAILED
