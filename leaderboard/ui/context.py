"""What every handler needs, built once per app from the settings and passed down.

One :class:`AppContext` per app instance (never a module global): it holds the stores,
the queue and the incremental results cache, and keeps the latest read of the store — and
each track's view of it (``TrackSpec.snapshot``), built once per results version — so that a
filter change never re-reads the store.  ``refresh`` re-reads only what changed; the
timer's refresh reads only once the snapshot is older than ``refresh_s``, and a Refresh
click (or ``/refresh`` call) at most once per ``min_reread_s`` however many visitors ask, so
nobody can make the app hammer the store.  The queue listing is cached the same way.  The
store is read outside the lock every handler shares, and the new snapshot swapped in under it.
"""

from __future__ import annotations

import gc
import logging
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval_queue.identity import SubmitterIdentifier, caller_from_request, signin_prompt
from eval_queue.queue import QueueListing, RequestQueue
from eval_queue.requests import EvalRequest, utc_now
from eval_queue.resolver import ModelResolver, resolver_for
from eval_queue.settings import Settings
from eval_queue.storage import Stores, open_stores
from eval_queue.storage.paths import results_files
from eval_queue.submission import SubmissionForm, submit
from eval_queue.tracks import DEFAULT_TRACK, TrackRegistry, track_registry
from leaderboard import heap
from leaderboard.store import ResultsCache, StoreResults, read_results_store
from leaderboard.store_contents import seed_from_contents
from leaderboard.views.common import md_text

logger = logging.getLogger(__name__)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a store is read (then as it was).

    A read of 20,000 runs allocates millions of long-lived objects (the records, none of them
    garbage) and each allocation burst triggers a collection that walks all of them again: at
    10,000 models × 2 settings that was more than half of the cold start."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class AppContext:
    """Stores, queue and the latest results; safe to share between concurrent handlers."""

    settings: Settings
    stores: Stores
    queue: RequestQueue
    refresh_s: float = 60.0
    #: The least time between two store reads a visitor can cause (Refresh, ``/refresh``, the queue).
    min_reread_s: float = 5.0
    #: Monotonic seconds (injected by tests).
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    download_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="evalita-csv-")))
    #: The tracks whose results are read and shown (their specs' parsers and snapshots).
    registry: TrackRegistry = field(default_factory=track_registry, repr=False)
    #: Cold start from the store's contents table (one file) rather than every results file.
    use_contents: bool = True
    _cache: ResultsCache = field(default_factory=ResultsCache, repr=False)
    #: The latest read of the store, every track's files in it.
    _store: StoreResults | None = field(default=None, repr=False)
    #: Each track's view of ``_store`` (its spec's ``snapshot``), built on first use per version.
    _views: dict[str, Any] = field(default_factory=dict, repr=False)
    _version: int = 0
    _parsed_seen: int = -1
    _read_started_at: float | None = None
    _read_wall: datetime | None = None
    _queue_cache: tuple[float, QueueListing] | None = field(default=None, repr=False)
    _status: tuple[StoreResults, datetime | None, str] | None = field(default=None, repr=False)
    _queue_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _warming: threading.Thread | None = field(default=None, repr=False)
    #: Called in each warm-up, in its thread, as soon as the tracks' views exist and before they
    #: are warmed (their other settings, metric sets, task tables): what the first visitor is shown
    #: (the page's default view: :meth:`leaderboard.ui.page.Page.warm_first_render`), so that a
    #: visitor arriving at start waits for that alone, not for the rest of the warm-up.
    first_views: list[Callable[[], None]] = field(default_factory=list, repr=False)
    #: Called at the end of each warm-up, in its thread, once the tracks' views are built (the
    #: page renders the views most visitors open first: :meth:`leaderboard.ui.page.Page.warm_renders`).
    after_warm: list[Callable[[], None]] = field(default_factory=list, repr=False)
    _model_resolver: ModelResolver | None = field(default=None, repr=False)
    _identifier: SubmitterIdentifier | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: Serialises the tracks' view builds (``snapshot``): one build per results version.
    _snapshot_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: Serialises store reads (held during I/O); ``_lock`` only guards the swap.
    _reload_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings, *, refresh_s: float = 60.0) -> AppContext:
        stores = open_stores(settings)
        return cls(settings=settings, stores=stores, queue=RequestQueue(stores.requests), refresh_s=refresh_s)

    def store(self) -> StoreResults:
        """The latest read of the results store (read on first use)."""
        store = self._store
        if store is None:
            self._reload(force=False)
            store = self._store
        assert store is not None
        return store

    def fresh(self) -> StoreResults:
        """The store read, re-read first if it is older than the refresh period (a new visitor)."""
        self._reload(force=False)
        assert self._store is not None
        return self._store

    def snapshot(self, track: str) -> Any:
        """``track``'s view of the latest read (its spec's ``snapshot``), built once per results version.

        One build at a time: a visitor arriving while the warm-up builds the view waits for that
        view (and the tables it computes) rather than build a second one and compute them again.
        """
        store = self.store()
        with self._lock:
            view = self._views.get(track)
            if view is not None and self._store is store:
                return view
        with self._snapshot_lock:
            with self._lock:
                view = self._views.get(track)
                if view is not None and self._store is store:
                    return view
            build = self.registry.spec(track).load("snapshot")
            if build is None:
                raise LookupError(f"the {track} track has no snapshot view")
            view = build(store)
            with self._lock:
                if self._store is store:  # not replaced by a newer read meanwhile
                    self._views[track] = view
        return view

    def track_records(self, track: str) -> Mapping[str, Any]:
        """``{results path: record}`` of ``track`` in the latest read (what its parser returned)."""
        return self.store().records.get(track, {})

    def refresh(self, *, force: bool = True) -> int:
        """Re-read the results store (only changed files are parsed); returns the data version.

        With ``force=False`` (every open page's timer) the store is read only when the
        snapshot is older than ``refresh_s``; with ``force`` (a Refresh click, ``/refresh``)
        when it is older than ``min_reread_s``.  Either way N callers cost one read per
        interval, not N.  The version changes only when the results did.
        """
        before = self._version
        self._reload(force=force)
        if self._version != before:
            self.warm_in_background()  # build the new views now, before visitors ask for them
        return self._version

    def warm(self) -> None:
        """Read the store and build every track's view now, render what a first visitor is shown
        (:attr:`first_views`), then warm each view (``warm()``) and the rest, so no visitor waits.

        Run in a background thread at start-up and by the refresh timer after a change.
        """
        try:
            views = [self.snapshot(spec.name) for spec in self.registry if spec.snapshot is not None]
            for hook in list(self.first_views):
                hook()
            for view in views:
                if hasattr(view, "warm"):
                    view.warm()
            for hook in list(self.after_warm):
                hook()
            heap.trim()  # the warm-up's temporaries (tiers' blocks, parsed texts) back to the system
        except Exception:  # a background task: log it; the next request retries and reports
            logger.exception("warming the results snapshot failed")

    def warm_in_background(self) -> None:
        """Start :meth:`warm` in a daemon thread unless one is already running."""
        with self._lock:
            if self._warming is not None and self._warming.is_alive():
                return
            self._warming = threading.Thread(target=self.warm, name="warm-results", daemon=True)
            self._warming.start()

    @property
    def version(self) -> int:
        return self._version

    def _age(self) -> float:
        """Seconds since the last store read began (infinite before the first)."""
        started = self._read_started_at
        return float("inf") if started is None else self.clock() - started

    def _reload(self, *, force: bool) -> None:
        """Read the store outside the app lock, then swap the new read in under it.

        Reloads are serialised by their own lock (the results cache is not thread-safe); a
        caller that waited for another's reload finds a fresh read and reads nothing.
        Handlers needing only the current read never wait for the store's I/O.
        """
        with self._reload_lock:
            interval = min(self.min_reread_s, self.refresh_s) if force else self.refresh_s
            if self._store is not None and self._age() < interval:
                return
            self._read_started_at = self.clock()
            with collector_paused():
                versions = None
                if self._store is None and self.use_contents:
                    # The store listed in a thread while the table is read and decoded (Arrow and
                    # the listing's system calls let each other run).  A file published meanwhile
                    # and missing from the listing is read at the next refresh.
                    with ThreadPoolExecutor(1, thread_name_prefix="list-results") as pool:
                        listing = pool.submit(results_files, self.stores.results)
                        seed_from_contents(self.stores.results, self._cache, self.registry)
                        versions = listing.result()
                store = read_results_store(
                    self.stores.results, cache=self._cache, registry=self.registry, versions=versions
                )
            changed = self._cache.parsed_count != self._parsed_seen
            self._parsed_seen = self._cache.parsed_count
            with self._lock:
                self._read_wall = datetime.now(UTC)
                previous, self._store = self._store, store
                if previous is None or changed or _fingerprint(store) != _fingerprint(previous):
                    self._version += 1
                    self._views.clear()  # a new version: every track's view is built afresh on first use
                    logger.info(
                        "results changed: %d files, %d problems", _files(store), len(_problems(store))
                    )
                else:
                    self._store = previous  # the same results: keep the read the views were built from

    def status_line(self) -> str:
        """What the page says about the read: runs, models, when read, unreadable files (escaped).

        Once per read (every page event shows it; counting 20,000 runs each time would not do)."""
        store = self.store()
        cached = self._status
        if cached is not None and cached[0] is store and cached[1] == self._read_wall:
            return cached[2]
        text = self._status_of(store)
        self._status = (store, self._read_wall, text)
        return text

    def _status_of(self, store: StoreResults) -> str:
        records = [record for track in store.records.values() for record in track.values()]
        models = {getattr(getattr(record, "model", None), "id", None) for record in records} - {None}
        stamp = self._read_wall.strftime("%H:%M:%S UTC") if self._read_wall else "—"
        text = f"{_count(len(records), 'run')} of {_count(len(models), 'model')} · results read at {stamp}"
        problems = _problems(store)
        if problems:
            names = ", ".join(md_text(p.path) for p in problems[:10])
            text += f" · ⚠️ {len(problems)} unreadable results file(s) skipped: {names}"
        return text

    def submit(
        self,
        *,
        model: str,
        revision: str,
        precision: str,
        fewshot: list[int],
        model_type: str | None,
        submitted_by: str,
        track: str = DEFAULT_TRACK,
        options: Mapping[str, Any] | None = None,
    ) -> list[EvalRequest]:
        """Validate and queue one request per chosen setting; raises ``SubmissionRejected``.

        ``track`` and the options it owns as in docs/TRACKS.md (its check runs first, e.g. a
        run an option names is looked up in the results store before anything is queued).
        """
        form = SubmissionForm(
            model=model,
            revision=revision,
            precision=precision,
            num_fewshot=tuple(fewshot),
            model_type=model_type,
            submitted_by=submitted_by,
            track=track,
            options=dict(options or {}),
        )
        created = submit(
            self.queue, form, resolver=self._resolver(), settings=self.settings, results=self.stores.results
        )
        self._queue_cache = None  # the submitter sees the queue with the new request in it
        return created

    def submitter(self, request: Any, profile: Any = None) -> str:
        """The submitter id of a web caller (a ``gr.Request`` and its ``gr.OAuthProfile``).

        Raises ``SignInRequired`` (a ``SubmissionRejected``) for an anonymous caller when
        sign-in is required, ``StoreUnavailableError`` if the salt cannot be read.
        """
        with self._lock:
            if self._identifier is None:
                self._identifier = SubmitterIdentifier(self.settings, self.stores.requests)
            identifier = self._identifier
        return identifier(caller_from_request(request, profile))

    def signin_text(self, request: Any, profile: Any = None) -> str:
        """What the submission tab says about signing in (plain text; the tab escapes it).

        For the sign-in button (``gr.LoginButton``, ``hf_oauth: true``) the redesigned tab adds.
        """
        return signin_prompt(self.settings.require_signin, caller_from_request(request, profile).username)

    def _resolver(self) -> ModelResolver:
        with self._lock:
            if self._model_resolver is None:  # built on first submission: online it makes a hub client
                self._model_resolver = resolver_for(self.settings)
            return self._model_resolver

    def queue_listing(self) -> QueueListing:
        """The queue, read at most once per ``min_reread_s`` (the queue tab is re-rendered on every
        page's refresh while it is open)."""
        with self._queue_lock:  # concurrent callers wait for one listing and share it
            cached = self._queue_cache
            now = self.clock()
            if cached is not None and now - cached[0] < self.min_reread_s:
                return cached[1]
            listing = self.queue.listing()
            self._queue_cache = (now, listing)
            return listing

    def now(self) -> datetime:
        return utc_now()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _problems(store: StoreResults) -> list:
    """Every file of the read that could not be used (its envelope, or its track's parser refused it)."""
    problems = [*store.envelope_problems, *(p for track in store.track_problems.values() for p in track)]
    return sorted(problems, key=lambda p: p.path)


def _files(store: StoreResults) -> int:
    return sum(len(records) for records in store.records.values())


def _fingerprint(store: StoreResults) -> tuple:
    """Changes when a file is added, replaced or removed, or turns (un)readable."""
    return (
        tuple(sorted((track, path) for track, records in store.records.items() for path in records)),
        tuple(p.path for p in _problems(store)),
    )
