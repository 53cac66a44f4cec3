"""The one reader of a results store: list it once, dispatch each file to its track's parser.

``read_results_store(storage)`` lists the store's ``results_*.json`` files (with their
store versions), reads each file's envelope (``schema`` and ``track`` only), and hands
the bytes to the parser its track's spec names (``TrackSpec.parse_results``).  It returns
:class:`StoreResults`: per track, the record of every usable file by path; per track,
the files its parser refused; the files whose envelope could not be read (bad JSON, an
unknown schema or track: a file's track is never guessed); and the files of a known
track whose parser is not installed.  Each track's view (its spec's ``snapshot``) is built
from its part.

A refresh is a new call with the same :class:`ResultsCache`: only files whose
``Storage.versions()`` entry changed are read and parsed again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval_queue.errors import MalformedFileError, NotFoundError
from eval_queue.safe_json import RESULTS_LIMITS, load_object
from eval_queue.storage.base import Storage
from eval_queue.storage.paths import is_results_file as is_results_file  # re-exported for the app's readers
from eval_queue.storage.paths import results_files
from eval_queue.tracks import TrackRegistry, track_registry
from leaderboard.core.migrations import track_of

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ParsedFile:
    """One results file as read at one store version: its track, and its record or why it is unusable.

    ``track`` is None when the envelope could not be read; ``record`` and ``problem`` are
    both None for a file of a known track whose parser is not installed.
    """

    version: str
    track: str | None
    record: Any = None
    problem: MalformedFileError | None = None


@dataclass
class ResultsCache:
    """Parsed results files by path, each with the store version it was parsed from.

    Pass the same object to successive reads so that a refresh re-reads only new or
    changed files (and warns about a bad file once, not on every refresh).  It holds
    no reference to a store.
    """

    _entries: dict[str, ParsedFile] = field(default_factory=dict)
    #: How many files were read and parsed (rather than served from the cache).
    parsed_count: int = 0

    def get(self, path: str, version: str) -> ParsedFile | None:
        entry = self._entries.get(path)
        return entry if entry is not None and entry.version == version else None

    def put(self, path: str, entry: ParsedFile) -> None:
        self._entries[path] = entry
        self.parsed_count += 1

    def seed(self, path: str, entry: ParsedFile) -> None:
        """Take ``entry`` for ``path`` without reading the file (built from the contents table at
        cold start); used while the store lists ``path`` at ``entry.version``, like a parsed one."""
        self._entries[path] = entry

    def keep_only(self, paths: Iterable[str]) -> None:
        """Forget files that are no longer in the store."""
        alive = set(paths)
        for path in [p for p in self._entries if p not in alive]:
            del self._entries[path]


@dataclass(frozen=True)
class StoreResults:
    """Everything a results store holds, by track (paths in sorted order throughout)."""

    #: track → path → the record its parser made of the file.
    records: Mapping[str, Mapping[str, Any]]
    #: track → the files of that track its parser refused.
    track_problems: Mapping[str, tuple[MalformedFileError, ...]]
    #: Files whose envelope could not be read: not JSON, unknown schema, unknown track.
    envelope_problems: tuple[MalformedFileError, ...]
    #: path → track, for files of a known track whose parser is not installed.
    unsupported: Mapping[str, str]

    def of(self, track: str) -> Mapping[str, Any]:
        """The records of ``track`` (what its results parser returned), by path."""
        return self.records.get(track, MappingProxyType({}))

    def problems_of(self, track: str) -> tuple[MalformedFileError, ...]:
        return self.track_problems.get(track, ())


class _Envelope(BaseModel):
    """Only what dispatching needs; the body is skipped unparsed into Python objects."""

    model_config = ConfigDict(extra="ignore")

    schema_: Any = Field(default=None, alias="schema")
    track: Any = None


def envelope_track(data: bytes, path: str, registry: TrackRegistry | None = None) -> str:
    """The track of a results file from its envelope; :class:`MalformedFileError` if it has none we know."""
    known = (registry or track_registry()).names
    try:
        envelope = _Envelope.model_validate_json(data)
    except ValidationError:
        # The fast path refused it: the safe reader says exactly why (encoding, depth,
        # numbers, not an object) or reads what it tolerates (a UTF-8 byte-order mark).
        raw = load_object(data, path, RESULTS_LIMITS)
        return track_of(raw.get("schema"), raw.get("track"), path, known)
    return track_of(envelope.schema_, envelope.track, path, known)


def read_results_store(
    storage: Storage,
    cache: ResultsCache | None = None,
    registry: TrackRegistry | None = None,
    *,
    versions: Mapping[str, str] | None = None,
) -> StoreResults:
    """List ``storage`` once and parse every results file with its track's parser.

    Unusable files are logged as warnings naming the file (once per version, with a
    cache) and listed as problems; they never stop the others from loading.  ``versions``: the
    listing (:func:`results_files`) when the caller has made it already (the cold start lists the
    store while the contents table is decoded).
    """
    registry = track_registry() if registry is None else registry
    cache = ResultsCache() if cache is None else cache
    versions = results_files(storage) if versions is None else versions
    cache.keep_only(versions)

    records: dict[str, dict[str, Any]] = {}
    track_problems: dict[str, list[MalformedFileError]] = {}
    envelope_problems: list[MalformedFileError] = []
    unsupported: dict[str, str] = {}
    for path in sorted(versions):
        entry = _parse_cached(storage, path, versions[path], cache, registry)
        if entry is None:
            continue
        if entry.track is None:
            if entry.problem is not None:
                envelope_problems.append(entry.problem)
        elif entry.problem is not None:
            track_problems.setdefault(entry.track, []).append(entry.problem)
        elif entry.record is not None:
            records.setdefault(entry.track, {})[path] = entry.record
        else:
            unsupported[path] = entry.track
    return StoreResults(
        records=MappingProxyType({t: MappingProxyType(r) for t, r in records.items()}),
        track_problems=MappingProxyType({t: tuple(p) for t, p in track_problems.items()}),
        envelope_problems=tuple(envelope_problems),
        unsupported=MappingProxyType(unsupported),
    )


def _parse_cached(
    storage: Storage, path: str, version: str, cache: ResultsCache, registry: TrackRegistry
) -> ParsedFile | None:
    cached = cache.get(path, version)
    if cached is not None:
        return cached
    try:
        # The cap is checked before reading; links and special files are refused unread.
        data = storage.read(path, max_bytes=RESULTS_LIMITS.max_bytes)
    except NotFoundError:
        # Deleted between listing and reading: it is simply no longer there.
        logger.info("results file %s vanished while loading", path)
        return None
    except MalformedFileError as exc:  # an entry the store will not hand out (link, too large)
        logger.warning("skipping results file %s", exc)
        entry = ParsedFile(version, None, problem=exc)
    else:
        entry = _parse(data, path, version, registry)
    cache.put(path, entry)
    return entry


def _parse(data: bytes, path: str, version: str, registry: TrackRegistry) -> ParsedFile:
    try:
        track = envelope_track(data, path, registry)
    except MalformedFileError as exc:
        logger.warning("skipping results file %s", exc)
        return ParsedFile(version, None, problem=exc)
    parse = registry.spec(track).load("parse_results")
    if parse is None:
        logger.info("%s: a %s results file; that track's reader is not installed", path, track)
        return ParsedFile(version, track)
    try:
        return ParsedFile(version, track, record=parse(data, path))
    except MalformedFileError as exc:
        logger.warning("skipping results file %s", exc)
        return ParsedFile(version, track, problem=exc)
