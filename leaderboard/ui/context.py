"""What every handler needs, built once per app from the settings and passed down.

One :class:`AppContext` per app instance (never a module global): it holds the stores,
the queue and the incremental results cache, and keeps the latest snapshot so that a
filter change never re-reads the store.  ``refresh`` re-reads only what changed; the
timer's refresh reads only once the snapshot is older than ``refresh_s``, and a Refresh
click (or ``/refresh`` call) at most once per ``min_reread_s`` however many visitors ask, so
nobody can make the app hammer the store.  The queue listing is cached the same way.  The
store is read outside the lock every handler shares, and the new snapshot swapped in under it.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
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
from eval_queue.submission import SubmissionForm, check_judge_target, submit
from eval_queue.vocabulary import JudgeMode, Track
from leaderboard.store import StoreResults, read_results_store
from leaderboard.tracks.evalita.app.results import LoadedResults, ResultsCache, evalita_results
from leaderboard.tracks.evalita.app.views import Board, md_text

logger = logging.getLogger(__name__)


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
    _cache: ResultsCache = field(default_factory=ResultsCache, repr=False)
    _board: Board | None = field(default=None, repr=False)
    #: The latest read of every track (other tracks' tabs and panels build their views from it).
    _store: StoreResults | None = field(default=None, repr=False)
    _version: int = 0
    _parsed_seen: int = -1
    _read_started_at: float | None = None
    _read_wall: datetime | None = None
    _queue_cache: tuple[float, QueueListing] | None = field(default=None, repr=False)
    _queue_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _warming: threading.Thread | None = field(default=None, repr=False)
    _model_resolver: ModelResolver | None = field(default=None, repr=False)
    _identifier: SubmitterIdentifier | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: Serialises store reads (held during I/O); ``_lock`` only guards the swap.
    _reload_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings, *, refresh_s: float = 60.0) -> AppContext:
        stores = open_stores(settings)
        return cls(settings=settings, stores=stores, queue=RequestQueue(stores.requests), refresh_s=refresh_s)

    def results(self) -> Board:
        """The latest snapshot (loaded on first use), with its tables computed once."""
        board = self._board
        if board is None:
            self._reload(force=False)
            board = self._board
        assert board is not None
        return board

    def fresh(self) -> Board:
        """The snapshot, re-read first if it is older than the refresh period (a new visitor)."""
        self._reload(force=False)
        assert self._board is not None
        return self._board

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
            self.warm_in_background()  # score the new snapshot now, before visitors ask for it
        return self._version

    def warm(self) -> None:
        """Load the store and score both settings now, so that no visitor waits for it.

        Run in a background thread at start-up and by the refresh timer after a change.
        """
        try:
            self.results().warm()
        except Exception:  # a background task: log it; the next request retries and reports
            logger.exception("warming the results snapshot failed")

    def warm_in_background(self) -> None:
        """Start :meth:`warm` in a daemon thread unless one is already running."""
        with self._lock:
            if self._warming is not None and self._warming.is_alive():
                return
            self._warming = threading.Thread(target=self.warm, name="warm-results", daemon=True)
            self._warming.start()

    def track_records(self, track: Track) -> Mapping[str, Any]:
        """``{results path: record}`` of ``track`` in the latest snapshot (what its parser returned).

        Read with the Evalita results, in the same listing of the store; the results
        version changes when any track's files do.
        """
        self.results()  # the first read, if none was made yet
        store = self._store
        return store.records.get(track, {}) if store is not None else {}

    @property
    def version(self) -> int:
        return self._version

    def _age(self) -> float:
        """Seconds since the last store read began (infinite before the first)."""
        started = self._read_started_at
        return float("inf") if started is None else self.clock() - started

    def _reload(self, *, force: bool) -> None:
        """Read the store outside the app lock, then swap the new snapshot in under it.

        Reloads are serialised by their own lock (the results cache is not thread-safe); a
        caller that waited for another's reload finds a fresh snapshot and reads nothing.
        Handlers needing only the current snapshot never wait for the store's I/O.
        """
        with self._reload_lock:
            interval = min(self.min_reread_s, self.refresh_s) if force else self.refresh_s
            if self._board is not None and self._age() < interval:
                return
            self._read_started_at = self.clock()
            store = read_results_store(self.stores.results, cache=self._cache)
            loaded = evalita_results(store)
            changed = self._cache.parsed_count != self._parsed_seen
            self._parsed_seen = self._cache.parsed_count
            with self._lock:
                self._read_wall = datetime.now(UTC)
                self._store = store
                if self._board is None or changed or _fingerprint(loaded) != _fingerprint(self._board.loaded):
                    self._version += 1
                    self._board = Board(loaded)  # a new snapshot: its tables are computed afresh on first use
                    logger.info(
                        "results changed: %d runs, %d problems", len(loaded.runs), len(loaded.problems)
                    )

    def status_line(self) -> str:
        """What the page says about the snapshot: runs, models, when read, unreadable files (escaped)."""
        board = self.results()
        runs = board.runs
        models = runs["model"].nunique() if not runs.empty else 0
        stamp = self._read_wall.strftime("%H:%M:%S UTC") if self._read_wall else "—"
        text = f"{_count(len(runs), 'run')} of {_count(models, 'model')} · results read at {stamp}"
        if board.problems:
            names = ", ".join(md_text(p.path) for p in board.problems[:10])
            text += f" · ⚠️ {len(board.problems)} unreadable results file(s) skipped: {names}"
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
        track: str = Track.EVALITA.value,
        context_settings: Sequence[str] | None = None,
        judge_target: str | None = None,
    ) -> list[EvalRequest]:
        """Validate and queue one request per chosen setting; raises ``SubmissionRejected``.

        ``track`` and its fields as in docs/TRACKS.md; a judge target implies judging generations.
        """
        form = SubmissionForm(
            model=model,
            revision=revision,
            precision=precision,
            num_fewshot=tuple(fewshot),
            model_type=model_type,
            submitted_by=submitted_by,
            track=track,
            context_settings=context_settings,
            judge_mode=JudgeMode.GENERATIONS.value if judge_target else None,
            judge_target=judge_target,
        )
        if judge_target:  # refused before anything is queued, as on the command line
            check_judge_target(self.stores.results, judge_target)
        created = submit(self.queue, form, resolver=self._resolver(), settings=self.settings)
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


def _fingerprint(loaded: LoadedResults) -> tuple:
    """Changes when a run is added, replaced or removed, or a file turns (un)readable."""
    return tuple(sorted(loaded.runs["results_path"].astype(str))), tuple(
        sorted(p.path for p in loaded.problems)
    )
