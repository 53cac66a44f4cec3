"""The contents table in a results store: read it, put a run's rows in it, rebuild it.

The table's format (schema, rows, Parquet bytes) is :mod:`leaderboard.core.contents`; this
module is its store I/O.  :func:`publish_rows` (the worker, after a results file) updates the
file by compare-and-swap (:func:`upsert`), so concurrent workers keep each other's rows;
:func:`rebuild` (``python -m leaderboard rebuild-contents``) regenerates it from the results
files; :func:`read_contents` is what the app's cold start (:mod:`leaderboard.store_contents`)
reads.  :func:`parse_results` reads any track's results file as its results type.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pyarrow as pa

from eval_queue.errors import AlreadyExistsError, MalformedFileError, NotFoundError
from eval_queue.safe_json import RESULTS_LIMITS, load_object
from eval_queue.storage.base import Storage
from eval_queue.storage.paths import results_files
from eval_queue.tracks import TrackRegistry, track_registry
from leaderboard.core.contents import (
    CONTENTS_MAX_BYTES,
    CONTENTS_PATH,
    Row,
    contents_schema,
    read_table,
    rows_of,
    table_of,
    to_parquet,
    with_rows,
)
from leaderboard.core.migrations import track_of, upgrade
from leaderboard.core.schema import ResultsEnvelope

logger = logging.getLogger(__name__)


def upsert(storage: Storage, path: str, transform: Callable[[bytes | None], bytes], message: str) -> None:
    """Compare-and-swap ``path`` with ``transform`` (which gets None while the file does not exist).

    Two writers creating it at once: one wins the create, the other updates the winner's file.
    """
    for _ in range(5):
        try:
            storage.update(path, transform, message=message)
            return
        except NotFoundError:
            pass
        try:
            storage.create(path, transform(None), message=message)
            return
        except AlreadyExistsError:
            continue  # created meanwhile: update it
    raise AlreadyExistsError(f"{path}: kept appearing and disappearing while being written")


def publish_rows(
    storage: Storage, results: ResultsEnvelope, path: str, registry: TrackRegistry | None = None
) -> int:
    """Put the rows of the results file at ``path`` (just written) into the store's contents file.

    Its store version is read back first (the rows say which version they describe).  The
    file is updated by compare-and-swap: concurrent workers keep each other's rows.  Returns
    the number of rows written; raises ``StorageError`` / :class:`ContentsError`.
    """
    version = storage.versions(path).get(path)
    rows = rows_of(results, path, version, registry)
    schema = contents_schema(registry)
    upsert(
        storage,
        CONTENTS_PATH,
        lambda existing: with_rows(existing, path, rows, schema),
        message=f"Contents: {path}",
    )
    return len(rows)


@dataclass(frozen=True)
class Rebuilt:
    """A contents table regenerated from a store's results files."""

    table: pa.Table
    #: The results files that could not be read, each named with its reason (skipped).
    problems: tuple[MalformedFileError, ...]
    #: Results files of a registered track that has no results type installed here.
    unsupported: tuple[str, ...] = ()

    @property
    def data(self) -> bytes:
        return to_parquet(self.table)


def parse_results(data: bytes, path: str, registry: TrackRegistry | None = None) -> ResultsEnvelope | None:
    """A results file as its track's results type; None if that track's type is not installed.

    Raises :class:`MalformedFileError` naming the file (bad JSON, unknown schema or track, a
    file its track's schema refuses).
    """
    registry = registry or track_registry()
    raw = load_object(data, path, RESULTS_LIMITS)
    track = track_of(raw.get("schema"), raw.get("track"), path, registry.names)
    results_type = registry.spec(track).load("results_type")
    if results_type is None:
        return None
    return results_type.from_raw(upgrade(raw, path), path)


def rebuild(storage: Storage, registry: TrackRegistry | None = None) -> Rebuilt:
    """The contents table of every readable results file in ``storage`` (nothing is written).

    A file that cannot be read is named in ``problems`` (and logged) and skipped, as every
    reader of the store does.
    """
    registry = registry or track_registry()
    schema = contents_schema(registry)
    versions = results_files(storage)
    rows: list[Row] = []
    problems: list[MalformedFileError] = []
    unsupported: list[str] = []
    for path in sorted(versions):
        try:
            results = parse_results(storage.read(path, max_bytes=RESULTS_LIMITS.max_bytes), path, registry)
        except NotFoundError:
            continue  # deleted since the listing
        except MalformedFileError as exc:
            logger.warning("skipping results file %s", exc)
            problems.append(exc)
            continue
        if results is None:
            unsupported.append(path)
            continue
        rows.extend(rows_of(results, path, versions[path], registry))
    return Rebuilt(table_of(rows, schema), tuple(problems), tuple(unsupported))


def read_contents(storage: Storage, columns: Iterable[str] | None = None) -> pa.Table | None:
    """The store's contents table (only ``columns`` if given), None when it has none;
    :class:`ContentsError` if it is unusable."""
    data = contents_bytes(storage)
    return None if data is None else read_table(data, columns=columns)


def contents_bytes(storage: Storage) -> bytes | None:
    """The store's contents file as it is (size-capped), None when it has none: to decode its
    columns in parts (:func:`~leaderboard.core.contents.read_table`)."""
    try:
        return storage.read(CONTENTS_PATH, max_bytes=CONTENTS_MAX_BYTES)
    except NotFoundError:
        return None
