"""The app's cold start from the contents table: one file read instead of every results file.

:func:`seed_from_contents` reads the results store's ``contents.parquet``
(:mod:`leaderboard.core.contents`) and, for each results file whose track can build its
record from its rows (``TrackSpec.contents_record``), puts that record into the
:class:`~leaderboard.store.ResultsCache` under the store version the rows were built from.
The store reader then lists the store as always and reads only the files the table does not
cover at their current version: files published after the table was last updated, files
replaced since, files of tracks without a row reader, and unreadable files (which the table
never holds, so they are reported as today).  A missing or unusable table means every file
is read, as before it existed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pydantic import ValidationError

from eval_queue.errors import MalformedFileError, StorageError
from eval_queue.storage.base import Storage
from eval_queue.tracks import TrackRegistry, track_registry
from leaderboard.core.contents import CONTENTS_PATH, read_contents, rows_by_file
from leaderboard.store import ParsedFile, ResultsCache

logger = logging.getLogger(__name__)


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
    try:
        table = read_contents(storage)
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
    builders = {
        spec.name: spec.load("contents_record") for spec in registry if spec.contents_record is not None
    }
    seeded = 0
    for (path, version), rows in rows_by_file(table).items():
        track = rows[0].get("track")
        build = builders.get(track) if isinstance(track, str) else None
        if build is None:
            continue
        try:
            record = build(rows)
        except (ValidationError, ValueError, KeyError, TypeError) as exc:
            # This file is read from the store instead; the table is the one at fault.
            logger.warning("%s: its row of %s is unusable (%s); reading the file", path, CONTENTS_PATH, exc)
            continue
        cache.seed(path, ParsedFile(version, track, record=record))
        seeded += 1
    logger.info("cold start: %d results file(s) from %s", seeded, CONTENTS_PATH)
    return Seeded(files=seeded)
