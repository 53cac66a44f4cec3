"""A store in a local directory, laid out exactly like the hub repository.

Safe for several processes on one machine:

* every write goes to a hidden temporary file in the target's folder, is flushed to
  disk, and is then moved into place with ``os.replace`` — readers never see a
  partial file and need no lock;
* ``create`` publishes the temporary file with ``os.link``, which fails if the
  target exists, so exactly one of several racing creators wins even without a lock;
* ``write``, ``update`` and ``delete`` hold a per-path ``filelock`` so that an
  update's read–transform–write cannot interleave with another writer.

Lock files live in ``<root>/.locks/``; hidden entries are never listed.

A writer killed between syncing its temporary file and moving it into place leaves the
temporary file behind.  Its name carries the writer's process id
(``.<name>.<pid>.<random>.tmp``), so the next write of the same path removes it as soon
as that process is gone (or the file is older than ``STALE_TEMP_S``, e.g. a process id
since reused); :meth:`LocalStorage.sweep_temp_files` does the same for the whole store
(``python -m eval_queue doctor``).

Symbolic links are never followed, whether they point into the store, out of it or
nowhere: a link (to a file or a folder) is listed like a file so that readers report
it, and reading it raises :class:`~eval_queue.errors.UnreadableFileError`; so does a
special file (a FIFO would block the reader) or a file over the reader's size cap.  No
operation reaches through a linked folder either.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import re
import stat as stat_module
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from eval_queue.errors import (
    AlreadyExistsError,
    ConflictError,
    NotFoundError,
    StorageError,
    UnreadableFileError,
)
from eval_queue.storage.base import Transform
from eval_queue.storage.paths import check_path, check_prefix, is_hidden

logger = logging.getLogger(__name__)

LOCK_DIR = ".locks"
#: A temporary file this old is debris whoever wrote it: no write takes an hour.
STALE_TEMP_S = 3600.0
# ``.<name>.<pid>.<random>.tmp`` (ours), or ``.<name>.<random>.tmp`` (written before pids were kept).
_TEMP_RE = re.compile(r"^\.(?P<name>.+?)\.(?:(?P<pid>\d+)\.)?[A-Za-z0-9_]{8}\.tmp$")


class LocalStorage:
    """:class:`~eval_queue.storage.base.Storage` over the directory ``root`` (created on demand)."""

    def __init__(self, root: Path | str, *, lock_timeout_s: float = 30.0) -> None:
        self.root = Path(root)
        self.lock_timeout_s = lock_timeout_s

    def __repr__(self) -> str:
        return f"LocalStorage({str(self.root)!r})"

    # -- reading -----------------------------------------------------------------

    def list(self, prefix: str = "") -> list[str]:
        return sorted(self.versions(prefix))

    def versions(self, prefix: str = "") -> dict[str, str]:
        prefix = check_prefix(prefix)
        found: dict[str, str] = {}
        for path, stat in self._walk(prefix):
            # The inode changes on every os.replace, so two writes within one mtime tick
            # still give different versions.
            found[path] = f"{stat.st_mtime_ns:x}-{stat.st_size:x}-{stat.st_ino:x}"
        return found

    def read(self, path: str, *, max_bytes: int | None = None) -> bytes:
        target = self._file(path)
        try:
            # O_NOFOLLOW: a link is refused, not followed; O_NONBLOCK: opening a FIFO
            # returns at once (and is refused below) instead of waiting for a writer.
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise NotFoundError(f"{path}: no such file in {self.root}") from exc
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                what = "symbolic link" if target.exists() else "dangling symbolic link"
                raise UnreadableFileError(path, f"a {what} (links are never followed)") from None
            if exc.errno == errno.EISDIR:
                raise NotFoundError(f"{path}: is a folder, not a file") from exc
            raise StorageError(f"{path}: cannot read ({exc.strerror})") from exc
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat_module.S_ISDIR(info.st_mode):
                raise NotFoundError(f"{path}: is a folder, not a file")
            if not stat_module.S_ISREG(info.st_mode):
                raise UnreadableFileError(path, "not a regular file (a FIFO, socket or device)")
            if max_bytes is not None and info.st_size > max_bytes:
                raise UnreadableFileError(path, f"file is {info.st_size:,} bytes; the limit is {max_bytes:,}")
            try:
                data = handle.read()
            except OSError as exc:
                raise StorageError(f"{path}: cannot read ({exc.strerror})") from exc
        if max_bytes is not None and len(data) > max_bytes:  # grew between fstat and read
            raise UnreadableFileError(path, f"file is over the limit of {max_bytes:,} bytes")
        return data

    # -- writing -----------------------------------------------------------------

    def write(self, path: str, data: bytes, *, message: str = "") -> None:
        target = self._file(path)
        with self._locked(path):
            self._replace(target, data)
        logger.debug("wrote %s (%s)", path, message or "no message")

    def create(self, path: str, data: bytes, *, message: str = "") -> None:
        target = self._file(path)
        tmp = self._temp_with(target, data)
        try:
            # link() refuses an existing target atomically: exactly one racer wins.
            os.link(tmp, target)
        except FileExistsError as exc:
            raise AlreadyExistsError(f"{path}: already exists") from exc
        except OSError as exc:
            raise StorageError(f"{path}: cannot create ({exc.strerror})") from exc
        finally:
            tmp.unlink(missing_ok=True)
        _fsync_dir(target.parent)
        _sweep_temps_of(target)
        logger.debug("created %s (%s)", path, message or "no message")

    def update(self, path: str, transform: Transform, *, message: str = "") -> bytes:
        target = self._file(path)
        self._require(path, target)  # no lock files for a path that does not exist
        # Under the lock nobody else can write this path, so the compare-and-swap cannot
        # lose a race; a transform that raises leaves the file untouched.
        with self._locked(path):
            current = self.read(path)
            new = transform(current)
            if new != current:
                self._replace(target, new)
        logger.debug("updated %s (%s)", path, message or "no message")
        return new

    def delete(self, path: str, *, message: str = "") -> None:
        target = self._file(path)
        self._require(path, target)
        with self._locked(path):
            try:
                target.unlink()
            except FileNotFoundError as exc:
                raise NotFoundError(f"{path}: no such file in {self.root}") from exc
            except OSError as exc:
                raise StorageError(f"{path}: cannot delete ({exc.strerror})") from exc
        logger.debug("deleted %s (%s)", path, message or "no message")

    # -- maintenance -------------------------------------------------------------

    def sweep_temp_files(self, *, dry_run: bool = False) -> list[str]:
        """Remove the stale temporary files of this store's atomic writes; returns their paths.

        Stale: the process that wrote it is gone, or it is older than ``STALE_TEMP_S``.
        A live writer's file is left alone.  ``dry_run`` only names them.
        """
        found: list[str] = []
        if not self.root.is_dir():
            return found
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d != LOCK_DIR or dirpath != str(self.root)]
            for name in filenames:
                temp = Path(dirpath, name)
                if _is_stale_temp(temp):
                    found.append(temp.relative_to(self.root).as_posix())
                    if not dry_run:
                        temp.unlink(missing_ok=True)
        return sorted(found)

    # -- helpers -----------------------------------------------------------------

    def _file(self, path: str) -> Path:
        """The file for a store path, refused if a folder on the way is a link."""
        target = self.root / check_path(path)
        real_root = os.path.realpath(self.root)
        expected = os.path.join(real_root, *path.split("/")[:-1])
        if os.path.realpath(target.parent) != expected:
            raise UnreadableFileError(
                path, "a folder on its path is a symbolic link (links are never followed)"
            )
        return target

    def _require(self, path: str, target: Path) -> None:
        if not target.is_file():
            raise NotFoundError(f"{path}: no such file in {self.root}")

    def _walk(self, prefix: str) -> Iterator[tuple[str, os.stat_result]]:
        # Start at the deepest folder the prefix names so a narrow listing stays cheap.  One
        # scandir per folder and one lstat per entry, paths as strings: a store of 20,000 results
        # files in 10,000 folders is listed at every refresh (os.walk and pathlib took 5 s).
        folder = prefix.rpartition("/")[0]
        root = str(self.root)
        start = os.path.join(root, folder) if folder else root
        if not os.path.isdir(start):
            return
        cut = len(os.path.join(root, ""))
        pending = [start]
        while pending:
            try:
                entries = os.scandir(pending.pop())
            except OSError:  # gone or unreadable meanwhile: as os.walk, skip it
                continue
            with entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if not entry.name.startswith("."):
                            pending.append(entry.path)
                        continue
                    # Everything else is an entry: files, links (a linked folder too, never
                    # entered, so that it is reported like a linked file), special files.
                    rel = entry.path[cut:].replace(os.sep, "/")
                    if is_hidden(rel) or not rel.startswith(prefix):
                        continue
                    # lstat: a link is described, not followed, so a dangling one is listed too.
                    with contextlib.suppress(FileNotFoundError):  # deleted while we walked
                        yield rel, entry.stat(follow_symlinks=False)

    @contextlib.contextmanager
    def _locked(self, path: str) -> Iterator[None]:
        lock_dir = self.root / LOCK_DIR
        digest = hashlib.sha1(path.encode()).hexdigest()[:20]
        try:
            lock_dir.mkdir(parents=True, exist_ok=True)
            lock = FileLock(lock_dir / f"{digest}.lock", timeout=self.lock_timeout_s)
            lock.acquire()
        except Timeout as exc:
            raise ConflictError(
                f"{path}: still locked by another process after {self.lock_timeout_s:g}s"
            ) from exc
        except OSError as exc:
            raise StorageError(f"{path}: cannot lock ({exc.strerror})") from exc
        try:
            yield
        finally:
            lock.release()

    def _temp_with(self, target: Path, data: bytes) -> Path:
        """A hidden, fully written and synced temporary file beside ``target``."""
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            # The pid in the name tells a sweeper whether the writer is still alive.
            prefix = f".{target.name}.{os.getpid()}."
            fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=target.parent)
        except OSError as exc:
            raise StorageError(f"cannot write in {target.parent} ({exc.strerror})") from exc
        tmp = Path(name)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StorageError(f"cannot write {target.name} ({exc.strerror})") from exc
        return tmp

    def _replace(self, target: Path, data: bytes) -> None:
        tmp = self._temp_with(target, data)
        try:
            os.replace(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StorageError(f"cannot replace {target.name} ({exc.strerror})") from exc
        _fsync_dir(target.parent)
        _sweep_temps_of(target)


def _sweep_temps_of(target: Path) -> None:
    """Remove stale temporary files left beside ``target`` by killed writes of the same file."""
    prefix = f".{target.name}."
    try:
        names = [e.name for e in os.scandir(target.parent) if e.name.startswith(prefix)]
    except OSError:
        return
    for name in names:
        temp = target.parent / name
        if _is_stale_temp(temp):
            logger.info("removing %s, left by a write that never finished", temp)
            temp.unlink(missing_ok=True)


def _is_stale_temp(path: Path) -> bool:
    """A temporary file of ours whose writer is gone, or which is older than ``STALE_TEMP_S``."""
    match = _TEMP_RE.match(path.name)
    if match is None:
        return False
    try:
        age = time.time() - path.lstat().st_mtime
    except OSError:
        return False
    if age > STALE_TEMP_S:
        return True
    pid = match.group("pid")
    return pid is not None and not _process_alive(int(pid))


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # ours: a write in another thread of this process may still be using it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, under another user
        return True
    return True


def _fsync_dir(folder: Path) -> None:
    """Persist a rename/link: without it a power cut can lose a request just "written"."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
