"""The tracks' results registry: which parser reads each track's results files, and its export.

One reader (:func:`leaderboard.store.read_results_store`) lists the results store once,
reads each file's envelope (``schema``, ``track``) and hands the file to the parser its
track registered here.  A track registers with **one line** in :data:`RESULTS_TRACKS`,
naming the module attribute that holds its :class:`ResultsTrack`::

    Track.LONG_CONTEXT: "leaderboard.tracks.long_context.schema:RESULTS",

Nothing here imports a track's package until the registry is first built, so this
module (and the Evalita code) never depends on another track's code.  A file of a
track with no entry is listed as *unsupported*, never parsed as something else; a file
whose track is unknown is malformed (:func:`leaderboard.core.migrations.track_of`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, TypeVar

import pandas as pd

from eval_queue.vocabulary import Track

#: What a track keeps of one parsed results file (its own record type).
R = TypeVar("R")

#: Track → ``"module:attribute"`` of its :class:`ResultsTrack`; one line per track.
RESULTS_TRACKS: Mapping[Track, str] = MappingProxyType(
    {
        Track.EVALITA: "leaderboard.tracks.evalita.app.export:RESULTS",
        Track.LONG_CONTEXT: "leaderboard.tracks.long_context.app.results:RESULTS",
        Track.JUDGE: "leaderboard.tracks.judge.app.results:RESULTS",
    }
)


@dataclass(frozen=True)
class ExportOptions:
    """``python -m leaderboard export`` options a track's export may use."""

    #: Evalita: only this few-shot setting (None: all).
    num_fewshot: int | None = None
    #: Evalita: one row per prompt instead of one per run.
    prompts: bool = False
    #: Also list runs that are not comparable with full runs on the official data.
    include_noncomparable: bool = False


@dataclass(frozen=True)
class ExportTable:
    """A track's export: the table, which columns hold 0–100 scores, and notes for stderr."""

    table: pd.DataFrame
    #: Columns printed with two decimals in CSV (``54.00``).
    percent_columns: frozenset[str] = frozenset()
    #: What a reader of the table must know, e.g. that rows were left out and how to show them.
    notes: tuple[str, ...] = ()
    #: ``--format table``: the columns a person reads first, with their short headers (empty: all).
    summary: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ResultsTrack(Generic[R]):
    """How one track's results files are read and exported.

    ``parse(data, path)`` turns a file's bytes into the record the track keeps (raising
    :class:`~eval_queue.errors.MalformedFileError` naming ``path`` if it cannot);
    ``export(records, options)`` builds ``leaderboard export --track <track>``'s table from
    ``{path: record}`` of every usable file of the track (None: the track has no export).
    """

    track: Track
    parse: Callable[[bytes, str], R]
    export: Callable[[Mapping[str, R], ExportOptions], ExportTable] | None = None


class ResultsRegistry:
    """Track → :class:`ResultsTrack`; registering a track twice is an error."""

    def __init__(self, entries: Iterable[ResultsTrack[Any]]) -> None:
        self._entries: dict[Track, ResultsTrack[Any]] = {}
        for entry in entries:
            if entry.track in self._entries:
                raise ValueError(f"track {entry.track.value!r} is registered twice")
            self._entries[entry.track] = entry

    def get(self, track: Track) -> ResultsTrack[Any] | None:
        return self._entries.get(track)

    def __iter__(self) -> Iterator[ResultsTrack[Any]]:
        return iter(self._entries.values())

    @property
    def tracks(self) -> tuple[Track, ...]:
        return tuple(self._entries)


def load_entry(track: Track, reference: str) -> ResultsTrack[Any]:
    """Import ``"module:attribute"`` and check it is ``track``'s :class:`ResultsTrack`."""
    module_name, _, attribute = reference.partition(":")
    entry = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(entry, ResultsTrack) or entry.track is not track:
        raise TypeError(f"{reference} is not the ResultsTrack of track {track.value!r}")
    return entry


@functools.cache
def results_registry() -> ResultsRegistry:
    """The project's registry, built from :data:`RESULTS_TRACKS` on first use."""
    return ResultsRegistry(load_entry(track, reference) for track, reference in RESULTS_TRACKS.items())
