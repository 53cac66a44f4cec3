"""What a worker is configured with, and what one run and the process end with.

Plain data, importable without torch or lm-eval: the command line builds a
:class:`WorkerConfig` (:mod:`backend.cli`), the run (:mod:`backend.worker`) and the
track runners (:mod:`backend.tracks`) read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from backend.options import RunOptions

DEFAULT_LEASE_S = 900.0
DEFAULT_POLL_S = 60.0
#: A run whose harness reports no progress for this long is stopped (``--stall-s``).
#: Generous: loading a large model, or lm-eval's bootstrap of an F1 stderr, reports none.
DEFAULT_STALL_S = 1800.0


class ExitCode(IntEnum):
    """Exit status of ``python -m backend``."""

    OK = 0  # the request FINISHED, or there was nothing to do (serve: stopped cleanly)
    FAILED = 1  # the evaluation failed: the request is FAILED with a reason (or its lease was lost)
    USAGE = 2  # bad usage or configuration: nothing was claimed
    INTERRUPTED = 3  # SIGTERM/SIGINT or a stalled harness: the request was handed back to PENDING
    STORE_UNAVAILABLE = 4  # the store could not be reached (hub outage, lock timeout): retry later
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
    #: ``hub`` | ``sample`` | ``local:<dir>`` (``backend.tracks.evalita.data.DataSource``).
    data: str = "sample"
    lease_s: float = DEFAULT_LEASE_S
    poll_s: float = DEFAULT_POLL_S
    #: Seconds without harness progress after which a run is stopped and handed back.
    stall_s: float = DEFAULT_STALL_S
    #: Evalita: the only task ids this worker runs (its data may hold only those); None: all.
    tasks: tuple[str, ...] | None = None
    harness: RunOptions = field(default_factory=RunOptions)
    #: Judge track: the annotated set (``sample`` | ``local:<dir>`` | ``hub:<org>/<name>``);
    #: None: follows ``data`` (:func:`backend.tracks.judge.worker.annotated_set_source`).
    judge_data: str | None = None
    #: Long-context track: which end of a prompt longer than the model's window is kept
    #: (``end``: the paper's harness; ``start``: a variant, never comparable).
    long_context_keep: str = "end"  # KeptSide's value (config stays plain data)

    @property
    def heartbeat_s(self) -> float:
        return max(self.lease_s / 3.0, 0.5)
