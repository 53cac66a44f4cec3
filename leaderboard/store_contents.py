"""The app's cold start from the contents table: one file read instead of every results file.

:func:`seed_from_contents` reads the results store's ``contents.parquet``
(:mod:`leaderboard.core.contents`) and, for each results file whose track can build its
record from the table (``TrackSpec.contents_record``: ``records(table) -> {path: (version,
record)}``), puts that record into the
:class:`~leaderboard.store.ResultsCache` under the store version the rows were built from.
The store reader then lists the store as always and reads only the files the table does not
cover at their current version: files published after the table was last updated, files
replaced since, files of tracks without a row reader, and unreadable files (which the table
never holds, so they are reported as today).  A missing or unusable table means every file
is read, as before it existed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pyarrow as pa

from eval_queue.errors import MalformedFileError, StorageError
from eval_queue.storage.base import Storage
from eval_queue.tracks import TrackRegistry, track_registry
from leaderboard import heap
from leaderboard.core.contents import CONTENTS_PATH
from leaderboard.core.contents_io import read_contents
from leaderboard.store import ParsedFile, ResultsCache

logger = logging.getLogger(__name__)


def _columns(readers: Iterable[Callable[..., object]]) -> set[str] | None:
    """The columns the row readers read (each names them in its ``columns`` attribute), ``None``
    (every column) when one does not say: the rest of a 20,000-row table is most of its size."""
    wanted: set[str] = {"track"}
    for reader in readers:
        columns = getattr(reader, "columns", None)
        if columns is None:
            return None
        wanted.update(columns)
    return wanted


@dataclass(frozen=True)
class Seeded:
    """What the cold start took from the contents table."""

    #: Results files whose records came from the table.
    files: int = 0
    #: Why the table was not used (missing, unreadable), or "".
    skipped: str = ""


def seed_from_contents(
    storage: Storage, cache: ResultsCache, registry: TrackRegistry | None = None
) -> Seeded:
    """Fill ``cache`` with the records the contents table of ``storage`` holds (see the module docstring)."""
    registry = registry or track_registry()
    readers = {
        spec.name: spec.load("contents_record") for spec in registry if spec.contents_record is not None
    }
    try:
        table = read_contents(storage, _columns(readers.values()))
    except MalformedFileError as exc:  # before StorageError: an unreadable file is both
        logger.warning(
            "not using %s: %s (python -m leaderboard rebuild-contents repairs it)", exc.path, exc.reason
        )
        return Seeded(skipped=exc.reason)
    except StorageError as exc:
        logger.warning("not using %s: %s", CONTENTS_PATH, exc)
        return Seeded(skipped=str(exc))
    if table is None:
        return Seeded(skipped="no contents table")
    seeded = 0
    for name, reader in readers.items():
        try:
            records = reader(table)
        except (KeyError, ValueError, TypeError, pa.ArrowException) as exc:
            # This track's files are read from the store instead; the table is the one at fault.
            logger.warning("not using %s for %s: %s", CONTENTS_PATH, name, exc)
            continue
        for path, (version, record) in records.items():
            if version:
                cache.seed(path, ParsedFile(version, name, record=record))
                seeded += 1
    del table
    # The table's buffers are freed by now, but Arrow's allocator keeps freed pages for reuse
    # unless asked: at 20,000 rows that is hundreds of MB of the server's memory for nothing.
    pa.default_memory_pool().release_unused()
    # The rows' texts (tens of KB each) are freed as the records are built, but glibc keeps its
    # heap's pages for later allocations: the server would stay at the read's peak.
    heap.trim()
    logger.info("cold start: %d results file(s) from %s", seeded, CONTENTS_PATH)
    return Seeded(files=seeded)
