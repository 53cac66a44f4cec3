"""The serve loop: poll the queue on an APScheduler interval, one fresh ``--once`` process per job.

Each job is ``python -m backend --once`` with the worker's own options, run one at a
time: a model's memory (GPU included) is returned to the system between requests, and a
crash takes down one job only.  After a job that did something (0 or 1) the next poll
runs at once; after an unreachable store (4) or missing data (5) the loop waits an
interval.  It stops for good only on a usage error (2) or SIGTERM/SIGINT, which it
passes on to the running job (that job hands its request back).
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from backend.config import ExitCode, WorkerConfig

log = logging.getLogger(__name__)

#: How long a stopping server waits for its job to hand its request back.
STOP_GRACE_S = 120.0


class _Server:
    """The scheduler, the running job's process and whether a stop or a usage error ended serving."""

    def __init__(self, config: WorkerConfig, once_argv: Sequence[str]) -> None:
        from apscheduler.schedulers.blocking import BlockingScheduler

        self.config = config
        self.command = [sys.executable, "-m", "backend", "--once", *once_argv]
        self.scheduler = BlockingScheduler()
        self.child: subprocess.Popen[bytes] | None = None
        self.stopping = False
        self.usage_error = False
        self._lock = threading.Lock()

    def job(self) -> None:
        with self._lock:
            if self.stopping:
                return
            child = self.child = subprocess.Popen(self.command)
        code = child.wait()
        with self._lock:
            self.child = None
        log.info("job exited with %d (%s)", code, describe_exit(code))
        match code:
            case ExitCode.USAGE:
                self.usage_error = True
                self._shutdown()
            case ExitCode.STORE_UNAVAILABLE:
                log.warning("the store is unavailable: polling again in %.0fs", self.config.poll_s)
            case ExitCode.DATA_UNAVAILABLE:
                log.warning(
                    "the data source is incomplete (see above): polling again in %.0fs", self.config.poll_s
                )
            case ExitCode.OK | ExitCode.FAILED if not self.stopping:
                # There may be more work: poll again right away instead of waiting an interval.
                self.scheduler.modify_job("poll", next_run_time=datetime.now(UTC))
            case _:
                pass

    def stop(self, signum: int, _frame: Any) -> None:
        log.info("received %s: stopping (a running job hands its request back)", signal.Signals(signum).name)
        with self._lock:
            self.stopping = True
            child = self.child
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)
        self._shutdown()

    def _shutdown(self) -> None:
        from apscheduler.schedulers import SchedulerNotRunningError

        try:
            self.scheduler.shutdown(wait=False)
        except SchedulerNotRunningError:
            log.debug("scheduler already stopping")


def serve(config: WorkerConfig, once_argv: Sequence[str]) -> ExitCode:
    """Poll until stopped; ``once_argv`` are the options each ``--once`` job gets."""
    server = _Server(config, once_argv)
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
    log.info(
        "worker %s serving: polling every %.0fs (data: %s)", config.worker_id, config.poll_s, config.data
    )
    server.scheduler.start()
    # The job thread may still wait for a child that is handing its request back.
    deadline = time.monotonic() + STOP_GRACE_S
    while server.child is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    return ExitCode.USAGE if server.usage_error else ExitCode.OK


def describe_exit(code: int) -> str:
    try:
        return ExitCode(code).name
    except ValueError:
        return f"killed by {signal.Signals(-code).name}" if code < 0 else "unexpected"
