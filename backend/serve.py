"""The serve loop: poll the queue on an APScheduler interval, one fresh ``--once`` process per job.

Each job is ``python -m backend --once`` with the worker's own options, run one at a
time: a model's memory (GPU included) is returned to the system between requests, and a
crash takes down one job only.  After a job that did something (0 or 1) the next job
runs at once if the queue has work left; otherwise, and after an unreachable store (4)
or missing data (5), the loop waits an interval.  It stops for good only on a usage
error (2) or SIGTERM/SIGINT, which it passes on to the running job (that job hands its
request back).

A batch job's worker (``python -m backend slurm``) also stops on its own
(:class:`ServeLimits`): ``--until-empty`` once the queue has nothing left to claim (no
PENDING request, no expired lease; checked before each job), or when its data source
lacks files (exit 5: waiting would not fix it); ``--deadline-s`` that many seconds after
it started, handing back the running job's request exactly as on SIGTERM.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from backend.config import ExitCode, WorkerConfig
from eval_queue.errors import StorageError
from eval_queue.queue import QueueState, RequestQueue

log = logging.getLogger(__name__)

#: How long a stopping server waits for its job to hand its request back.
STOP_GRACE_S = 120.0
#: States of a request that a claim can take (an expired lease is reaped back to PENDING first).
CLAIMABLE = frozenset({QueueState.PENDING, QueueState.EXPIRED})


@dataclass(frozen=True)
class ServeLimits:
    """When a serving worker stops on its own (a batch job's worker); the defaults: never."""

    #: Stop once the queue has nothing left to claim, or the data source lacks files.
    until_empty: bool = False
    #: Stop this many seconds after starting; the running job hands its request back.
    deadline_s: float | None = None


def queue_has_work(queue: RequestQueue) -> bool:
    """Whether a claim could take something now: a PENDING request or an expired lease."""
    listing = queue.listing()
    return any(listing.state(request) in CLAIMABLE for request in listing.requests)


class _Server:
    """The scheduler, the running job's process and why serving ended."""

    def __init__(
        self,
        config: WorkerConfig,
        once_argv: Sequence[str],
        limits: ServeLimits,
        has_work: Callable[[], bool] | None,
    ) -> None:
        from apscheduler.schedulers.blocking import BlockingScheduler

        self.config = config
        self.command = [sys.executable, "-m", "backend", "--once", *once_argv]
        self.scheduler = BlockingScheduler()
        self.child: subprocess.Popen[bytes] | None = None
        self.stopping = False
        self.exit_code = ExitCode.OK
        self.limits = limits
        self._has_work = has_work
        self._lock = threading.Lock()

    def job(self) -> None:
        """One poll: ``--once`` jobs back to back while the queue has work, then wait for the next poll.

        A loop here, not a reschedule to "now": the scheduler skips a run that falls due
        while this one is still counted as running (``max_instances=1``), so every worker
        waited a whole interval after each request.  Without ``has_work`` (it cannot tell
        work from none: a job exits 0 either way) each poll runs one job.
        """
        first = True
        while first or self._has_work is not None:
            if (self.limits.until_empty or not first) and not self._work_left():
                if self.limits.until_empty:
                    log.info("the queue has nothing left to claim: stopping (--until-empty)")
                    self._stop_serving()
                return
            first = False
            if not self._run_job():
                return

    def _run_job(self) -> bool:
        """Run one ``--once`` job; True when the next one may run at once."""
        with self._lock:
            stopping = self.stopping
            if not stopping:
                child = self.child = subprocess.Popen(self.command)
        if stopping:  # asked before the scheduler started (a deadline already passed)
            self._shutdown()
            return False
        code = child.wait()
        with self._lock:
            self.child = None
        log.info("job exited with %d (%s)", code, describe_exit(code))
        match code:
            case ExitCode.USAGE:
                self.exit_code = ExitCode.USAGE
                self._shutdown()
            case ExitCode.STORE_UNAVAILABLE:
                log.warning("the store is unavailable: polling again in %.0fs", self.config.poll_s)
            case ExitCode.DATA_UNAVAILABLE if self.limits.until_empty:
                log.error("the data source is incomplete (see above): stopping (--until-empty)")
                self.exit_code = ExitCode.DATA_UNAVAILABLE
                self._stop_serving()
            case ExitCode.DATA_UNAVAILABLE:
                log.warning(
                    "the data source is incomplete (see above): polling again in %.0fs", self.config.poll_s
                )
            case ExitCode.OK | ExitCode.FAILED if not self.stopping:
                return True  # there may be more work: run the next job now, not an interval later
            case _:
                pass
        return False

    def _work_left(self) -> bool:
        assert self._has_work is not None, "--until-empty and back-to-back jobs need a look at the queue"
        try:
            return self._has_work()
        except StorageError as exc:  # cannot tell: let the job try (it exits 4 if the store is down)
            log.warning("could not look at the queue: %s", exc)
            return True

    def stop(self, signum: int, _frame: Any) -> None:
        log.info("received %s: stopping (a running job hands its request back)", signal.Signals(signum).name)
        # The scheduler is shut down from another thread: this handler may have interrupted the
        # main thread inside the scheduler's executor, holding the lock its shutdown takes.
        self._stop_serving(shutdown=lambda: threading.Thread(target=self._shutdown, daemon=True).start())

    def deadline_reached(self) -> None:
        log.warning(
            "deadline reached (--deadline-s %g): stopping (a running job hands its request back)",
            self.limits.deadline_s,
        )
        self._stop_serving()

    def _stop_serving(self, shutdown: Callable[[], None] | None = None) -> None:
        with self._lock:
            self.stopping = True
            child = self.child
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)
        (shutdown or self._shutdown)()

    def _shutdown(self) -> None:
        from apscheduler.schedulers import SchedulerNotRunningError

        try:
            self.scheduler.shutdown(wait=False)
        except SchedulerNotRunningError:
            log.debug("scheduler already stopping")


def serve(
    config: WorkerConfig,
    once_argv: Sequence[str],
    limits: ServeLimits | None = None,
    has_work: Callable[[], bool] | None = None,
) -> ExitCode:
    """Poll until stopped (or ``limits`` say so); ``once_argv`` are the options each ``--once`` job gets.

    ``has_work`` tells whether the queue has something to claim (:func:`queue_has_work` over
    the worker's queue): after a job that ran a request the next runs at once if it has, and
    ``--until-empty`` stops when it has not.
    """
    limits = limits or ServeLimits()
    if limits.until_empty and has_work is None:
        raise ValueError("until_empty needs has_work")
    server = _Server(config, once_argv, limits, has_work)
    signal.signal(signal.SIGTERM, server.stop)
    signal.signal(signal.SIGINT, server.stop)
    server.scheduler.add_job(
        server.job,
        "interval",
        seconds=config.poll_s,
        id="poll",
        max_instances=1,
        coalesce=True,
        next_run_time=datetime.now(UTC),
    )
    # A timer, not a scheduler job: a one-off job that shuts the scheduler down races with
    # the scheduler removing that job once it has run.
    deadline = threading.Timer(limits.deadline_s or 0.0, server.deadline_reached)
    deadline.daemon = True
    log.info(
        "worker %s serving: polling every %.0fs (data: %s)%s%s",
        config.worker_id,
        config.poll_s,
        config.data,
        ", until the queue is empty" if limits.until_empty else "",
        f", for at most {limits.deadline_s:g}s" if limits.deadline_s is not None else "",
    )
    if limits.deadline_s is not None:
        deadline.start()
    server.scheduler.start()
    deadline.cancel()
    # The job thread may still wait for a child that is handing its request back.
    deadline = time.monotonic() + STOP_GRACE_S
    while server.child is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    return server.exit_code


def without_serve_options(argv: Sequence[str]) -> list[str]:
    """``argv`` less the options only the serve loop reads (``--once`` jobs ignore them anyway)."""
    kept: list[str] = []
    skip_value = False
    for arg in argv:
        if skip_value:
            skip_value = False
        elif arg == "--deadline-s":
            skip_value = True
        elif arg not in ("--once", "--until-empty") and not arg.startswith("--deadline-s="):
            kept.append(arg)
    return kept


def describe_exit(code: int) -> str:
    try:
        return ExitCode(code).name
    except ValueError:
        return f"killed by {signal.Signals(-code).name}" if code < 0 else "unexpected"
