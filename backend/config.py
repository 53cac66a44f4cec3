"""What a worker is configured with, and what one run and the process end with.

Plain data, importable without torch or lm-eval: the command line builds a
:class:`WorkerConfig` (:mod:`backend.cli`), the run (:mod:`backend.worker`) and the
track runners (:mod:`backend.tracks`) read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from backend.options import RunOptions
from eval_queue.retry import StoreRetry

DEFAULT_LEASE_S = 900.0
DEFAULT_POLL_S = 60.0
#: A run whose harness reports no progress for this long is stopped (``--stall-s``).
#: Generous: loading a large model, or lm-eval's bootstrap of an F1 stderr, reports none.
DEFAULT_STALL_S = 1800.0
#: Outside the harness (claiming, publishing) the main thread makes store calls, each bounded
#: by the hub timeouts and :class:`~eval_queue.retry.StoreRetry` (about 7 minutes at worst).
#: If it shows no sign of life for this long it is hung where no timeout reaches (e.g. a
#: stuck file system): the heartbeat stops renewing, so that its lease expires and the
#: request moves on.  During the run the limit is ``stall_s`` plus this.
DEFAULT_BLOCKED_S = 600.0


class ExitCode(IntEnum):
    """Exit status of ``python -m backend``."""

    # The request FINISHED with its results (also when the answer to the finish was lost and
    # the state was read back), or there was nothing to do (serve: stopped cleanly).
    OK = 0
    FAILED = 1  # the evaluation failed: the request is FAILED with a reason (or its lease was lost)
    USAGE = 2  # bad usage or configuration: nothing was claimed
    INTERRUPTED = 3  # SIGTERM/SIGINT or a stalled harness: the request was handed back to PENDING
    # The store could not be reached (hub outage, lock timeout) even after retries: nothing was
    # claimed, or the request was handed back without counting an attempt, or its results are
    # published but it is not marked FINISHED yet (the next claim completes it).  Retry later.
    STORE_UNAVAILABLE = 4
    DATA_UNAVAILABLE = 5  # the worker's data source lacks files: nothing was claimed (fix the data)


class Outcome(IntEnum):
    NOTHING = 0
    FINISHED = 1
    FAILED = 2
    RELEASED = 3
    LEASE_LOST = 4
    STORE_UNAVAILABLE = 5
    DATA_UNAVAILABLE = 6

    @property
    def exit_code(self) -> ExitCode:
        match self:
            case Outcome.NOTHING | Outcome.FINISHED:
                return ExitCode.OK
            case Outcome.FAILED | Outcome.LEASE_LOST:
                return ExitCode.FAILED
            case Outcome.RELEASED:
                return ExitCode.INTERRUPTED
            case Outcome.STORE_UNAVAILABLE:
                return ExitCode.STORE_UNAVAILABLE
            case Outcome.DATA_UNAVAILABLE:
                return ExitCode.DATA_UNAVAILABLE
            case _:
                raise AssertionError(self)


@dataclass(frozen=True)
class WorkerConfig:
    """One worker's settings, the same for every request it runs."""

    worker_id: str
    #: ``hub`` | ``sample`` | ``local:<dir>`` (``leaderboard.core.datasource.DataSource``).
    data: str = "sample"
    lease_s: float = DEFAULT_LEASE_S
    poll_s: float = DEFAULT_POLL_S
    #: Seconds without harness progress after which a run is stopped and handed back.
    stall_s: float = DEFAULT_STALL_S
    harness: RunOptions = field(default_factory=RunOptions)
    #: The options tracks add to the worker (``TrackSpec.worker_options``), by dest, parsed;
    #: an option not given is absent (each track's runner reads its own).
    track_options: Mapping[str, Any] = field(default_factory=dict)
    #: Main-thread silence after which the heartbeat stops renewing (:data:`DEFAULT_BLOCKED_S`).
    blocked_s: float = DEFAULT_BLOCKED_S
    #: Seconds between lease renewals; None: a third of the lease, at least half a second.
    heartbeat_every_s: float | None = None
    #: How store calls that carry a finished run (publish, finish, fail) are retried.
    store_retry: StoreRetry = field(default_factory=StoreRetry)
    #: Also publish each run as Every Eval Ever records in the results store (``eee/``, beside
    #: ``contents.parquet``); off by default (``--publish-eee``).
    publish_eee: bool = False

    @property
    def heartbeat_s(self) -> float:
        if self.heartbeat_every_s is not None:
            return self.heartbeat_every_s
        return max(self.lease_s / 3.0, 0.5)
