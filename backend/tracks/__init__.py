"""The track-runner registry: how the worker evaluates a claimed request of each track.

The worker (:mod:`backend.worker`) claims the next request of any track, keeps its
lease, and hands it to the runner registered for ``request.track``::

    evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation

The runner evaluates (through :func:`backend.runner.run_harness`, the only importer of
``lm_eval``/``torch``), and returns the results file, where it goes and the details
files; the worker publishes them and finishes, fails or hands back the request exactly
as for every track.  A runner reports harness progress to ``context.progress`` (the
stall watchdog reads it), raises :class:`StageError` to say at which stage a run failed,
and never publishes anything itself.

A track registers with **one line** in :data:`TRACK_RUNNERS`, naming its function::

    Track.LONG_CONTEXT: "backend.tracks.long_context:evaluate",

The module is imported only when a request of that track runs, so polling an empty
queue needs neither torch nor any track's code.  A runner's module may also define
``check_data(config)``: the worker calls it (:func:`check_track_data`) before claiming a
request of that track, so that missing data claims nothing.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

from eval_queue.errors import EvalitaError
from eval_queue.storage import Stores
from eval_queue.vocabulary import Track
from leaderboard.core.schema import ResultsEnvelope

if TYPE_CHECKING:
    from backend.config import WorkerConfig
    from eval_queue.requests import EvalRequest

#: Track → ``"module:function"`` of its :class:`TrackRunner`; one line per track.
TRACK_RUNNERS: Mapping[Track, str] = MappingProxyType(
    {
        Track.EVALITA: "backend.tracks.evalita.run:evaluate",
        Track.LONG_CONTEXT: "backend.tracks.long_context.run:evaluate",
        Track.JUDGE: "backend.tracks.judge.worker:evaluate",
    }
)


@dataclass(frozen=True)
class Evaluation:
    """What a successful run hands to the worker to publish."""

    #: The results file (any track's :class:`~leaderboard.tracks.evalita.schema.ResultsEnvelope` subclass).
    results: ResultsEnvelope
    #: Its path in the results store (:func:`leaderboard.tracks.evalita.schema.results_file_path`).
    results_path: str
    #: Per-sample details: path in the details store → file bytes (JSONL).
    details: Mapping[str, bytes]


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

    #: The stores, to read what a run needs (the judge reads another run's details).
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


class NoRunnerError(EvalitaError):
    """A request of a track whose runner is not installed in this worker."""


def check_track_data(track: Track, config: WorkerConfig, runners: Mapping[Track, str] | None = None) -> bool:
    """The pre-claim data check of ``track``'s runner: its module's ``check_data(config)``, if it has one.

    Returns whether a check ran (False: the track has no runner here, or no check).  The
    check raises :class:`~backend.tracks.evalita.data.DataSourceError` naming what is missing.
    """
    runners = TRACK_RUNNERS if runners is None else runners
    reference = runners.get(track)
    if reference is None:
        return False
    check = getattr(importlib.import_module(reference.partition(":")[0]), "check_data", None)
    if check is None:
        return False
    check(config)
    return True


def runner_for(track: Track, runners: Mapping[Track, str] | None = None) -> TrackRunner:
    """The runner registered for ``track`` (imported now); :class:`NoRunnerError` if there is none.

    ``runners`` defaults to :data:`TRACK_RUNNERS`.
    """
    runners = TRACK_RUNNERS if runners is None else runners
    reference = runners.get(track)
    if reference is None:
        installed = ", ".join(t.value for t in runners) or "none"
        raise NoRunnerError(f"this worker has no runner for the {track.value} track (installed: {installed})")
    module_name, _, attribute = reference.partition(":")
    runner: TrackRunner = getattr(importlib.import_module(module_name), attribute)
    return runner
