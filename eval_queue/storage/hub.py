"""A store in a Hugging Face dataset repo, through the real ``huggingface_hub`` client.

Correctness: every write is one ``create_commit`` with ``parent_commit=<head seen>``.
The Hub refuses such a commit with HTTP 412 when somebody else committed meanwhile;
we then re-read the head, re-apply the change to the fresh content and retry after a
jittered, growing pause.  Two workers can therefore never both win a claim.

Cost: the tree (paths with their git blob ids) is listed only when the head moved,
and a file is downloaded only when its blob id is one we have not seen — reading a
big results repo again after one new commit downloads one file, not all of them.

Secrets: the token is handed to ``HfApi`` and nowhere else.  Hub errors are turned
into :mod:`eval_queue.errors` types with a short message from which any token is
removed; the original exception is not chained, so a logged traceback cannot carry it.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import RepoFile

from eval_queue.errors import (
    AlreadyExistsError,
    ConflictError,
    NotFoundError,
    StorageError,
    TransientStorageError,
    UnreadableFileError,
)
from eval_queue.hubclient import install_hub_timeouts, transport_errors
from eval_queue.redact import redact
from eval_queue.settings import Settings
from eval_queue.storage.base import Stores, Transform
from eval_queue.storage.paths import DETAILS_FOLDER, check_path, check_prefix, is_hidden
from eval_queue.vocabulary import short_revision

logger = logging.getLogger(__name__)

#: Answers that say "not now" rather than "no": the same call may work later.  408 and 429
#: are the server asking to be called again; 5xx its own failure.
TRANSIENT_STATUSES = frozenset({408, 429})


class _Stale(Exception):
    """The commit's parent is no longer the head (HTTP 412): re-read and retry."""


@dataclass
class _Snapshot:
    """The repo at one commit: ``{path: blob id}`` and ``{path: size in bytes}`` for every file."""

    head: str
    tree: dict[str, str]
    taken_at: float
    sizes: dict[str, int] = field(default_factory=dict)


@dataclass
class RetryPolicy:
    """How hard to try a compare-and-swap commit before giving up with ``ConflictError``."""

    attempts: int = 12
    base_s: float = 0.05
    max_s: float = 2.0

    def pause(self, attempt: int) -> float:
        # Full jitter: racers that collided once spread out instead of colliding again.
        return random.uniform(0, min(self.max_s, self.base_s * 2**attempt))


@dataclass
class HubRepo:
    """One dataset repo: head tracking, tree and blob caches, and conditional commits.

    Shared by the stores that are folders of the same repo (results and details).
    """

    api: HfApi = field(repr=False)
    repo_id: str
    token: str | None = field(default=None, repr=False)
    cache_dir: Path | None = None
    # How old a snapshot ``read`` may use without checking the head.  0 for the queue
    # (a read must see the last claim); results files are written once under new names,
    # so their reader can skip a head check per file right after a listing.
    max_staleness_s: float = 0.0
    # How old a snapshot a write may start from (see ``commit``); correctness never depends on it.
    write_staleness_s: float = 0.5
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    _snapshot: _Snapshot | None = field(default=None, init=False, repr=False)
    # Contents by blob id, only for blobs of the current tree (older ones are dropped).
    _blobs: dict[str, bytes] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)

    # -- reading -----------------------------------------------------------------

    def snapshot(self, *, fresh: bool) -> _Snapshot:
        """The current tree; ``fresh`` forces a head check even if the last one is recent."""
        with self._lock:
            known = self._snapshot
            if known and not fresh and time.monotonic() - known.taken_at < self.max_staleness_s:
                return known
            with self._translated("read the head of"):
                head = self.api.repo_info(self.repo_id, repo_type="dataset", token=self.token).sha
            if head is None:
                raise StorageError(f"hub repo {self.repo_id}: the hub did not report a head commit")
            if known and known.head == head:
                known.taken_at = time.monotonic()
                return known
            tree, sizes = self._list_tree(head)
            self._adopt(_Snapshot(head, tree, time.monotonic(), sizes))
            return self._snapshot

    def content(self, snapshot: _Snapshot, path: str) -> bytes:
        """Bytes of ``path`` at ``snapshot``, downloaded only if that blob is new to us."""
        blob = snapshot.tree.get(path)
        if blob is None:
            raise NotFoundError(f"{path}: no such file in {self.repo_id}")
        with self._lock:
            cached = self._blobs.get(blob)
        if cached is not None:
            return cached
        with self._translated(f"download {path} from"):
            local = self.api.hf_hub_download(
                self.repo_id,
                path,
                repo_type="dataset",
                revision=snapshot.head,
                cache_dir=self.cache_dir,
                token=self.token,
            )
            data = Path(local).read_bytes()
        with self._lock:
            self._blobs[blob] = data
        return data

    # -- writing -----------------------------------------------------------------

    def commit(
        self,
        plan: Callable[[_Snapshot], CommitOperationAdd | CommitOperationDelete | None],
        message: str,
    ) -> bool:
        """Run ``plan`` on a recent snapshot and commit its operation on top of that head.

        ``plan`` may raise (nothing is written) or return ``None`` (nothing to do).
        Returns whether a commit was made: ``False`` when ``plan`` had nothing to do or
        the file already held exactly these bytes (the client then skips the commit).
        On HTTP 412 the snapshot is re-read and ``plan`` runs again.

        The first attempt may use a snapshot up to ``write_staleness_s`` old: a stale
        parent is refused with 412, so no write can be lost, and a worker that lists
        the queue and then tries candidates one by one does not re-read the head for
        each.  A refusal decided by ``plan`` is thus at most that old — like any read.
        """
        for attempt in range(self.retry.attempts):
            snapshot = self._write_snapshot(optimistic=attempt == 0)
            operation = plan(snapshot)
            if operation is None:
                return False
            try:
                return self._commit_on(snapshot, operation, message)
            except _Stale:
                pause = self.retry.pause(attempt)
                logger.debug("%s moved on while committing %r; retry in %.2fs", self.repo_id, message, pause)
                time.sleep(pause)
        raise ConflictError(
            f"hub repo {self.repo_id}: {message!r} kept losing to concurrent commits "
            f"({self.retry.attempts} attempts); try again"
        )

    def _write_snapshot(self, optimistic: bool) -> _Snapshot:
        with self._lock:
            known = self._snapshot
            if optimistic and known and time.monotonic() - known.taken_at < self.write_staleness_s:
                return known
        return self.snapshot(fresh=True)

    def _commit_on(
        self, snapshot: _Snapshot, operation: CommitOperationAdd | CommitOperationDelete, message: str
    ) -> bool:
        with self._translated("commit to"):
            info = self.api.create_commit(
                self.repo_id,
                [operation],
                commit_message=message or "Update",
                repo_type="dataset",
                parent_commit=snapshot.head,
                token=self.token,
            )
        if isinstance(operation, CommitOperationAdd) and _was_noop(operation):
            # The client skips a commit when the file already holds these bytes, without
            # checking the parent.  If our snapshot had other bytes there, somebody changed
            # the file since: a compare-and-swap that must not count as done (a counter
            # bumped twice from the same base would lose one increment).
            with self._lock:
                self._snapshot = None
            if snapshot.tree.get(operation.path_in_repo) != content_id(operation):
                raise _Stale()
            return False
        self._remember_commit(snapshot, operation, info.oid)
        return True

    def _remember_commit(
        self, snapshot: _Snapshot, operation: CommitOperationAdd | CommitOperationDelete, new_head: str
    ) -> None:
        """Our commit's parent was ``snapshot.head``, so the new tree is that tree plus our change."""
        tree, sizes = dict(snapshot.tree), dict(snapshot.sizes)
        if isinstance(operation, CommitOperationAdd):
            data = _payload(operation)
            blob = content_id(operation)
            tree[operation.path_in_repo] = blob
            sizes[operation.path_in_repo] = len(data)
            with self._lock:
                self._blobs[blob] = data
        else:
            tree.pop(operation.path_in_repo, None)
            sizes.pop(operation.path_in_repo, None)
        with self._lock:
            self._adopt(_Snapshot(new_head, tree, time.monotonic(), sizes))

    def _adopt(self, snapshot: _Snapshot) -> None:
        """Make ``snapshot`` current and forget the blobs no longer in its tree (under the lock)."""
        self._snapshot = snapshot
        live = set(snapshot.tree.values())
        if any(blob not in live for blob in self._blobs):
            self._blobs = {blob: data for blob, data in self._blobs.items() if blob in live}

    # -- helpers -----------------------------------------------------------------

    def _list_tree(self, head: str) -> tuple[dict[str, str], dict[str, int]]:
        with self._translated("list the files of"):
            entries = list(
                self.api.list_repo_tree(
                    self.repo_id, recursive=True, revision=head, repo_type="dataset", token=self.token
                )
            )
        # LFS files are identified by their content's sha256, like the client's no-op check does.
        files = [e for e in entries if isinstance(e, RepoFile)]
        tree = {e.path: (e.lfs.sha256 if e.lfs else e.blob_id) for e in files}
        sizes = {e.path: e.size for e in files if isinstance(e.size, int)}
        logger.debug("listed %s at %s: %d files", self.repo_id, short_revision(head), len(tree))
        return tree, sizes

    @contextmanager
    def _translated(self, doing: str) -> Iterator[None]:
        """Turn client errors into project errors with sanitized messages.

        No answer (a dropped connection, a timeout) and "not now" answers (5xx, 408, 429)
        become :class:`TransientStorageError`: for a commit, its effect is then unknown.
        """
        try:
            yield
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else None
            if status == 412:
                raise _Stale() from None
            raise self._hub_error(doing, exc, status) from None
        except LocalEntryNotFoundError as exc:
            # hf_hub_download could not reach the hub (and the blob is not cached): the
            # file exists at the pinned head we asked for, so this is the network, not a 404.
            reason = self.sanitize(str(exc).splitlines()[0] if str(exc) else "") or type(exc).__name__
            raise TransientStorageError(f"cannot {doing} hub repo {self.repo_id}: {reason}") from None
        except EntryNotFoundError:
            raise NotFoundError(f"cannot {doing} hub repo {self.repo_id}: file not found") from None
        except transport_errors() as exc:
            reason = self.sanitize(str(exc)) or type(exc).__name__
            raise TransientStorageError(f"cannot {doing} hub repo {self.repo_id}: {reason}") from None

    def _hub_error(self, doing: str, exc: HfHubHTTPError, status: int | None) -> StorageError:
        where = f"cannot {doing} hub repo {self.repo_id}"
        if status is not None and (status >= 500 or status in TRANSIENT_STATUSES):
            server = self.sanitize(getattr(exc, "server_message", None) or "")
            return TransientStorageError(f"{where}: HTTP {status}" + (f" ({server})" if server else ""))
        if isinstance(exc, RepositoryNotFoundError):
            return StorageError(f"{where}: the repo does not exist or the token cannot see it")
        if isinstance(exc, RevisionNotFoundError | EntryNotFoundError):
            return NotFoundError(f"{where}: not found")
        if status in (401, 403):
            return StorageError(f"{where}: not authorized (HTTP {status}); check that HF_TOKEN can write it")
        server = self.sanitize(getattr(exc, "server_message", None) or "")
        return StorageError(f"{where}: HTTP {status}" + (f" ({server})" if server else ""))

    def sanitize(self, text: str) -> str:
        """``text`` with the token (and anything shaped like one) masked, on one short line."""
        line = " ".join(redact(text, self.token).split())
        return line[:300]


def git_blob_id(data: bytes) -> str:
    """The git blob id the Hub reports for ``data`` (``sha1("blob <len>\\0" + data)``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def content_id(operation: CommitOperationAdd) -> str:
    """The id the tree will list for this file: git blob id, or sha256 for an LFS file."""
    data = _payload(operation)
    if getattr(operation, "_upload_mode", None) == "lfs":  # decided by the client's preupload step
        return hashlib.sha256(data).hexdigest()
    return git_blob_id(data)


def _payload(operation: CommitOperationAdd) -> bytes:
    data = operation.path_or_fileobj
    if not isinstance(data, bytes):  # we only ever commit bytes
        raise TypeError(f"expected bytes for {operation.path_in_repo}, got {type(data).__name__}")
    return data


def _was_noop(operation: CommitOperationAdd) -> bool:
    # Set by the client's preupload step when the file exists remotely with these bytes.
    remote = getattr(operation, "_remote_oid", None)
    return remote is not None and remote == getattr(operation, "_local_oid", None)


class HubStorage:
    """:class:`~eval_queue.storage.base.Storage` over a folder of a :class:`HubRepo`.

    ``folder`` ("" for the root, or e.g. ``"details/"``) is prepended to every path;
    paths under ``exclude`` (relative to the folder) are not part of this store.
    """

    def __init__(self, repo: HubRepo, *, folder: str = "", exclude: tuple[str, ...] = ()) -> None:
        self.repo = repo
        self.folder = folder
        self.exclude = exclude

    def __repr__(self) -> str:
        return f"HubStorage({self.repo.repo_id!r}, folder={self.folder!r})"

    def list(self, prefix: str = "") -> list[str]:
        return sorted(self.versions(prefix))

    def versions(self, prefix: str = "") -> dict[str, str]:
        prefix = check_prefix(prefix)
        snapshot = self.repo.snapshot(fresh=True)
        found: dict[str, str] = {}
        for full, blob in snapshot.tree.items():
            path = self._relative(full)
            if path is not None and path.startswith(prefix):
                found[path] = blob
        return found

    def read(self, path: str, *, max_bytes: int | None = None) -> bytes:
        full = self._full(path)
        snapshot = self.repo.snapshot(fresh=False)
        if full not in snapshot.tree:  # maybe created since our last look
            snapshot = self.repo.snapshot(fresh=True)
        size = snapshot.sizes.get(full)
        if max_bytes is not None and size is not None and size > max_bytes:
            # Refused from the tree's size, without downloading it.
            raise UnreadableFileError(path, f"file is {size:,} bytes; the limit is {max_bytes:,}")
        return self.repo.content(snapshot, full)

    def write(self, path: str, data: bytes, *, message: str = "") -> None:
        full = self._full(path)
        self.repo.commit(lambda _: CommitOperationAdd(full, data), message or f"Write {path}")

    def create(self, path: str, data: bytes, *, message: str = "") -> None:
        full = self._full(path)

        def plan(snapshot: _Snapshot) -> CommitOperationAdd:
            if full in snapshot.tree:
                raise AlreadyExistsError(f"{path}: already exists in {self.repo.repo_id}")
            return CommitOperationAdd(full, data)

        # A racer that created the file after our snapshot makes the commit stale (412) or,
        # with identical bytes, a skipped no-op that ``commit`` also treats as stale; either
        # way the retry sees the file and ``plan`` raises AlreadyExistsError.
        self.repo.commit(plan, message or f"Create {path}")

    def update(self, path: str, transform: Transform, *, message: str = "") -> bytes:
        full = self._full(path)
        written: list[bytes] = []

        def plan(snapshot: _Snapshot) -> CommitOperationAdd | None:
            current = self.repo.content(snapshot, full)
            new = transform(current)
            written[:] = [new]
            return None if new == current else CommitOperationAdd(full, new)

        self.repo.commit(plan, message or f"Update {path}")
        return written[0]

    def delete(self, path: str, *, message: str = "") -> None:
        full = self._full(path)

        def plan(snapshot: _Snapshot) -> CommitOperationDelete:
            if full not in snapshot.tree:
                raise NotFoundError(f"{path}: no such file in {self.repo.repo_id}")
            return CommitOperationDelete(full)

        self.repo.commit(plan, message or f"Delete {path}")

    def _full(self, path: str) -> str:
        check_path(path)
        if any(path.startswith(excluded) for excluded in self.exclude):
            # e.g. "details/…" from the results store: it belongs to the details store.
            raise StorageError(f"{path}: not part of this store ({self!r})")
        return self.folder + path

    def _relative(self, full: str) -> str | None:
        if not full.startswith(self.folder):
            return None
        path = full[len(self.folder) :]
        if is_hidden(path) or any(path.startswith(ex) for ex in self.exclude):
            return None
        return path


def open_hub_stores(settings: Settings, *, api: HfApi | None = None) -> Stores:
    """Stores on the configured dataset repos (``settings.use_hub`` must be true).

    Installs ``settings.hub_timeouts`` on the process's hub client (every hub call of the
    process, see :mod:`eval_queue.hubclient`).
    """
    if not (settings.requests_repo and settings.results_repo):
        raise StorageError("hub stores need both EVALITA_REQUESTS_REPO and EVALITA_RESULTS_REPO")
    install_hub_timeouts(settings.hub_timeouts)
    api = api or HfApi(endpoint=settings.hf_endpoint, token=settings.hf_token)
    cache_dir = settings.data_dir / ".hub-cache"
    requests = HubRepo(api, settings.requests_repo, token=settings.hf_token, cache_dir=cache_dir)
    results = HubRepo(
        api, settings.results_repo, token=settings.hf_token, cache_dir=cache_dir, max_staleness_s=5.0
    )
    return Stores(
        requests=HubStorage(requests),
        results=HubStorage(results, exclude=(DETAILS_FOLDER,)),
        details=HubStorage(results, folder=DETAILS_FOLDER),
    )
