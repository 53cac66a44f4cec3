"""Path rules shared by both storage backends.

Store paths are relative POSIX paths, like paths inside a Hugging Face repo.  Both
backends hide "dot" entries (``.gitattributes`` on the hub; lock and temporary files
locally) so that a listing means the same thing whatever the backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eval_queue.errors import StorageError, UnreadableFileError

if TYPE_CHECKING:
    from eval_queue.storage.base import Storage

# On the hub the details store is this folder of the results repo; results readers skip it.
DETAILS_FOLDER = "details/"


def is_results_file(path: str) -> bool:
    """``org/model/results_<ts>….json`` outside the details folder: a results file of any track."""
    name = path.rsplit("/", 1)[-1]
    return not path.startswith(DETAILS_FOLDER) and name.startswith("results_") and name.endswith(".json")


def results_files(storage: Storage, prefix: str = "") -> dict[str, str]:
    """Every results file of ``storage`` (under ``prefix``) with its version, in path order: the one
    walk of the results store that every reader (the app, the contents table, exports, rescore) makes."""
    versions = storage.versions(prefix)
    return {path: versions[path] for path in sorted(versions) if is_results_file(path)}


def check_path(path: str) -> str:
    """Return ``path`` if it is a safe relative store path, else raise ``UnreadableFileError``.

    Refusing ``..``, absolute paths, empty parts and NUL keeps a crafted request id (the
    CLI passes user-typed ids through here) or a crafted name in a hub repo's tree from
    reaching outside the store.  The error is a ``StorageError`` and a
    ``MalformedFileError``: a listing that meets such a name reports it and moves on.
    """
    if not path or path.startswith("/") or "\\" in path or "\0" in path:
        raise UnreadableFileError(path, "not a safe store path: must be relative and use '/'")
    parts = path.split("/")
    if any(part in {"", ".", ".."} for part in parts):
        raise UnreadableFileError(path, "not a safe store path: empty, '.' or '..' component")
    return path


def check_prefix(prefix: str) -> str:
    """A listing prefix: ``""`` (everything) or a folder/partial path, normalised without a leading ``/``."""
    prefix = prefix.lstrip("/")
    if prefix and ".." in prefix.split("/"):
        raise StorageError(f"invalid store prefix {prefix!r}")
    return prefix


def is_hidden(path: str) -> bool:
    """True for paths with a component starting with ``.`` (never part of a listing)."""
    return any(part.startswith(".") for part in path.split("/"))
