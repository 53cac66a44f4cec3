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
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

import pyarrow as pa

from eval_queue.errors import MalformedFileError, StorageError
from eval_queue.storage.base import Storage
from eval_queue.tracks import TrackRegistry, track_registry
from leaderboard import heap
from leaderboard.core.contents import CONTENTS_PATH, read_table
from leaderboard.core.contents_io import contents_bytes
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


def _deferred(readers: Iterable[Callable[..., object]], wanted: set[str] | None) -> set[str]:
    """The columns every reader can take later (each names them in ``deferred_columns`` and
    accepts ``deferred=``): decoded in a thread while the readers build their records from the
    others.  None when one reader cannot (it gets every column at once)."""
    if wanted is None:
        return set()
    deferred: set[str] = set()
    for reader in readers:
        columns = getattr(reader, "deferred_columns", None)
        if columns is None:
            return set()
        deferred.update(columns)
    return deferred & wanted - {"track", "results_path"}


def seed_from_contents(
    storage: Storage, cache: ResultsCache, registry: TrackRegistry | None = None
) -> Seeded:
    """Fill ``cache`` with the records the contents table of ``storage`` holds (see the module docstring).

    A reader's ``deferred_columns`` (a track's resampled draws: most of the file's bytes) are decoded in a
    thread while it builds its records from the other columns, and handed to it when it asks
    (``reader(table, deferred=...)``): Arrow's decoding and the reader's Python run side by side."""
    registry = registry or track_registry()
    readers = {
        spec.name: spec.load("contents_record") for spec in registry if spec.contents_record is not None
    }
    wanted = _columns(readers.values())
    later = _deferred(readers.values(), wanted)
    pool = ThreadPoolExecutor(1, thread_name_prefix="contents-columns") if later else None
    try:
        data = contents_bytes(storage)
        if data is None:
            return Seeded(skipped="no contents table")
        table = read_table(data, columns=None if wanted is None else wanted - later)
        deferred = None if pool is None else _Deferred(pool.submit(read_table, data, columns=later))
        del data  # the decoding thread keeps its reference until it is done
        return _seed(table, readers, cache, deferred)
    except MalformedFileError as exc:  # before StorageError: an unreadable file is both
        logger.warning(
            "not using %s: %s (python -m leaderboard rebuild-contents repairs it)", exc.path, exc.reason
        )
        return Seeded(skipped=exc.reason)
    except StorageError as exc:
        logger.warning("not using %s: %s", CONTENTS_PATH, exc)
        return Seeded(skipped=str(exc))
    finally:
        if pool is not None:
            pool.shutdown(wait=True)


class _Deferred:
    """The deferred columns being decoded: called, the table of them (waiting for it; the
    decoding's error raised); :meth:`release` drops it once the readers are done."""

    def __init__(self, decoding: Future[pa.Table]) -> None:
        self._decoding: Future[pa.Table] | None = decoding

    def __call__(self) -> pa.Table:
        if self._decoding is None:
            raise RuntimeError("the contents table's deferred columns were released")
        return self._decoding.result()

    def release(self) -> None:
        """Drop the decoded columns (waiting for a decoding no reader asked for to end)."""
        decoding, self._decoding = self._decoding, None
        if decoding is not None and not decoding.cancel():
            wait([decoding])


def _seed(
    table: pa.Table,
    readers: dict[str, Callable[..., dict[str, tuple[str, object]]]],
    cache: ResultsCache,
    deferred: _Deferred | None,
) -> Seeded:
    try:
        return _seed_records(table, readers, cache, deferred)
    finally:
        if deferred is not None:
            deferred.release()
        del table
        # The table's buffers are freed by now, but Arrow's allocator keeps freed pages for reuse
        # unless asked: at 20,000 rows that is hundreds of MB of the server's memory for nothing.
        pa.default_memory_pool().release_unused()
        # The rows' texts (tens of KB each) are freed as the records are built, but glibc keeps its
        # heap's pages for later allocations: the server would stay at the read's peak.
        heap.trim()


def _seed_records(
    table: pa.Table,
    readers: dict[str, Callable[..., dict[str, tuple[str, object]]]],
    cache: ResultsCache,
    deferred: _Deferred | None,
) -> Seeded:
    seeded = 0
    for name, reader in readers.items():
        try:
            records = reader(table) if deferred is None else reader(table, deferred=deferred)
        except (KeyError, ValueError, TypeError, pa.ArrowException) as exc:
            # This track's files are read from the store instead; the table is the one at fault.
            logger.warning("not using %s for %s: %s", CONTENTS_PATH, name, exc)
            continue
        for path, (version, record) in records.items():
            if version:
                cache.seed(path, ParsedFile(version, name, record=record))
                seeded += 1
    logger.info("cold start: %d results file(s) from %s", seeded, CONTENTS_PATH)
    return Seeded(files=seeded)
