"""What a track's runner is: how the worker evaluates a claimed request of each track.

The worker (:mod:`backend.worker`) claims the next request of any track, keeps its
lease, and hands it to the runner its spec names (``TrackSpec.runner``)::

    evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation

The runner evaluates (through :func:`backend.runner.run_harness`, the only importer of
``lm_eval``/``torch``) and returns what the track computed (:class:`Evaluation`); the
worker stamps the provenance (:mod:`backend.provenance`), publishes, and finishes, fails or
hands back the request exactly as for every track.  A runner reports harness progress to ``context.progress`` (the
stall watchdog reads it), raises :class:`StageError` to say at which stage a run failed
(the worker tags anything else it raises "running the harness": no runner catches all), and
never publishes anything itself.

The runner's module is imported only when a request of that track runs, so polling an
empty queue needs neither torch nor any track's code.  A spec may also name a
``check_data(config, request)``: the worker calls it (:func:`check_track_data`) before claiming
a request of that track, with the request it is about to claim (None when the queue could not
be listed), so that missing data — or a request this worker cannot serve, such as one whose
protocol needs a file the worker was not given — claims nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from eval_queue.errors import EvalitaError
from eval_queue.storage import Stores
from eval_queue.tracks import TrackRegistry, UnknownTrackError, track_registry
from leaderboard.core.schema import RunInfo

if TYPE_CHECKING:
    from backend.config import WorkerConfig
    from eval_queue.requests import EvalRequest


@dataclass(frozen=True)
class Evaluation:
    """What a runner computed; the worker stamps who ran it and where it goes (:mod:`backend.provenance`).

    A runner fills only what the track knows: its run block (what ran, on which data: the
    track's :class:`~leaderboard.core.schema.RunInfo` type, ``data`` set, provenance left empty),
    its results body, its details files and the variant it covered.
    """

    #: The run block as the harness and the track know it (``data`` included).
    run: RunInfo
    #: The track's results body, by field of its results type (``{"tasks": …}``, ``{"settings": …}``).
    body: Mapping[str, Any]
    #: Per-sample details: file name inside the run's details folder → bytes (JSONL).
    details: Mapping[str, bytes]
    #: What part of the track the run covered, as file names carry it (None: the whole track).
    variant: str | None = None
    #: The model's architecture as the harness loaded it (the request's when None).
    architecture: str | None = None


class Progress:
    """Beaten by the harness whenever it makes progress; the stall watchdog reads how long ago.

    ``beat`` is called from the thread that runs the harness, ``idle_s`` from the
    watchdog's thread: a lock keeps the time and the note consistent.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._last = clock()
        self._what = "starting"

    def beat(self, what: str | None = None) -> None:
        """Progress was made; ``what`` (optional) says where the run is now (for a stall reason)."""
        with self._lock:
            self._last = self._clock()
            if what is not None:
                self._what = what

    def idle_s(self) -> float:
        with self._lock:
            return self._clock() - self._last

    @property
    def what(self) -> str:
        with self._lock:
            return self._what


@dataclass(frozen=True)
class RunContext:
    """What the worker gives a runner besides the request and its own configuration."""

    #: The stores, to read what a run needs (a track may read another run's details).
    #: Publishing is the worker's: a runner writes nothing here.
    stores: Stores
    #: A fresh folder for this run (include paths, generated datasets), deleted after it.
    workdir: Path
    #: Where the harness reports progress (``run_harness(..., on_progress=context.progress.beat)``).
    progress: Progress


class TrackRunner(Protocol):
    def __call__(self, request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation: ...


class StageError(EvalitaError):
    """An error tagged with the stage of the run where it happened (the FAILED reason's headline)."""

    def __init__(self, stage: str, cause: BaseException) -> None:
        super().__init__(f"{stage}: {type(cause).__name__}: {cause}")
        self.stage = stage
        self.cause = cause


class IncompleteRunError(EvalitaError):
    """The harness output lacks a task, prompt or setting the run asked for, or a score is unusable
    (the request ends FAILED, never a partial FINISHED)."""


class NoRunnerError(EvalitaError):
    """A request of a track whose runner is not installed in this worker."""


def check_track_data(
    track: str,
    config: WorkerConfig,
    registry: TrackRegistry | None = None,
    request: EvalRequest | None = None,
) -> bool:
    """The pre-claim data check of ``track`` (``TrackSpec.check_data``), if it has one.

    ``request`` is the request the worker is about to claim (None: unknown), for checks that
    depend on its options.  Returns whether a check ran (False: the track has none).  The
    check raises :class:`~leaderboard.core.datasource.DataSourceError` naming what is missing.
    """
    check = (registry or track_registry()).spec(track).load("check_data")
    if check is None:
        return False
    check(config, request)
    return True


def runner_for(track: str, registry: TrackRegistry | None = None) -> TrackRunner:
    """The runner of ``track`` (imported now); :class:`NoRunnerError` if the track has none here."""
    registry = registry or track_registry()
    try:
        runner: TrackRunner | None = registry.spec(track).load("runner")
    except UnknownTrackError as exc:
        raise NoRunnerError(f"this worker knows no {track!r} track: {exc}") from None
    if runner is None:
        installed = ", ".join(s.name for s in registry if s.runner is not None) or "none"
        raise NoRunnerError(f"this worker has no runner for the {track} track (installed: {installed})")
    return runner
