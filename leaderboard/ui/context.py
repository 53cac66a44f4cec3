"""What every handler needs, built once per app from the settings and passed down.

One :class:`AppContext` per app instance (never a module global): it holds the stores,
the queue and the incremental results cache, and keeps the latest snapshot so that a
filter change never re-reads the store.  ``refresh`` re-reads only what changed, and the
timer's refresh only once the snapshot is older than ``refresh_s``; the store is read
outside the lock every handler shares, and the new snapshot swapped in under it.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from eval_queue.identity import SubmitterIdentifier, caller_from_request, signin_prompt
from eval_queue.queue import QueueListing, RequestQueue
from eval_queue.requests import EvalRequest, utc_now
from eval_queue.resolver import ModelResolver, resolver_for
from eval_queue.settings import Settings
from eval_queue.storage import Stores, open_stores
from eval_queue.submission import SubmissionForm, submit
from leaderboard.results import LoadedResults, ResultsCache, load_results
from leaderboard.views import Board

logger = logging.getLogger(__name__)


@dataclass
class AppContext:
    """Stores, queue and the latest results; safe to share between concurrent handlers."""

    settings: Settings
    stores: Stores
    queue: RequestQueue
    refresh_s: float = 60.0
    download_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="evalita-csv-")))
    _cache: ResultsCache = field(default_factory=ResultsCache, repr=False)
    _board: Board | None = field(default=None, repr=False)
    _version: int = 0
    _parsed_seen: int = -1
    _loaded_at: float = 0.0
    _read_started_at: float = -1.0
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
        snapshot is older than ``refresh_s``, so N visitors cost one read per period, not N.
        The version changes only when the results did, so views re-render only then.
        """
        self._reload(force=force)
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

    @property
    def version(self) -> int:
        return self._version

    def _stale(self) -> bool:
        return self._board is None or time.monotonic() - self._loaded_at > self.refresh_s

    def _reload(self, *, force: bool) -> None:
        """Read the store outside the app lock, then swap the new snapshot in under it.

        Reloads are serialised by their own lock (the results cache is not thread-safe);
        a caller that waited for another's reload finds a fresh snapshot and reads nothing.
        Handlers needing only the current snapshot never wait for the store's I/O.
        """
        requested = time.monotonic()
        with self._reload_lock:
            if force and self._read_started_at >= requested:
                return  # another read began after this request (so saw what it asks for) and finished
            if not force and not self._stale():
                return
            started = time.monotonic()
            loaded = load_results(self.stores.results, cache=self._cache)
            self._read_started_at = started
            changed = self._cache.parsed_count != self._parsed_seen
            self._parsed_seen = self._cache.parsed_count
            with self._lock:
                self._loaded_at = time.monotonic()
                if self._board is None or changed or _fingerprint(loaded) != _fingerprint(self._board.loaded):
                    self._version += 1
                    self._board = Board(loaded)  # a new snapshot: its tables are computed afresh on first use
                    logger.info(
                        "results changed: %d runs, %d problems", len(loaded.runs), len(loaded.problems)
                    )

    def submit(
        self,
        *,
        model: str,
        revision: str,
        precision: str,
        fewshot: list[int],
        model_type: str | None,
        submitted_by: str,
    ) -> list[EvalRequest]:
        """Validate and queue one request per chosen setting; raises ``SubmissionRejected``."""
        form = SubmissionForm(
            model=model,
            revision=revision,
            precision=precision,
            num_fewshot=tuple(fewshot),
            model_type=model_type,
            submitted_by=submitted_by,
        )
        return submit(self.queue, form, resolver=self._resolver(), settings=self.settings)

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
        return self.queue.listing()

    def now(self) -> datetime:
        return utc_now()


def _fingerprint(loaded: LoadedResults) -> tuple:
    """Changes when a run is added, replaced or removed, or a file turns (un)readable."""
    return tuple(sorted(loaded.runs["results_path"].astype(str))), tuple(
        sorted(p.path for p in loaded.problems)
    )
