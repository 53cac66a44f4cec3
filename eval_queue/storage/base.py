"""The one storage interface both the UI and the worker use.

A store is a flat namespace of files addressed by relative POSIX paths
(``org/model_eval_request_….json``), exactly like a Hugging Face dataset repo.
Two implementations: :mod:`eval_queue.storage.local` (a directory; the embedded
default) and :mod:`eval_queue.storage.hub` (a dataset repo via ``huggingface_hub``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

# ``update`` hands the current bytes to the transform, which returns the new bytes.
# A transform that decides not to change anything raises (e.g. InvalidTransitionError);
# the exception propagates and nothing is written.
Transform = Callable[[bytes], bytes]


@runtime_checkable
class Storage(Protocol):
    """Files in one repository.

    Paths are relative, use ``/``, and never start with ``/`` or contain ``..``.
    Every method raises :class:`~eval_queue.errors.StorageError` subclasses only.
    Listings include every entry, even one ``read`` will refuse (a dangling link, a
    crafted name), so that readers can report it instead of skipping it silently.
    """

    def list(self, prefix: str = "") -> list[str]:
        """Paths of all files under ``prefix`` (recursively), sorted."""
        ...

    def versions(self, prefix: str = "") -> dict[str, str]:
        """``{path: version}`` for all files under ``prefix``.

        The version is opaque (local: mtime, size and inode, which changes on every
        atomic replace; hub: the blob id) and changes whenever the content does, so
        readers can re-parse only what changed.
        """
        ...

    def read(self, path: str, *, max_bytes: int | None = None) -> bytes:
        """Content of ``path``; raises ``NotFoundError`` if missing.

        ``UnreadableFileError`` (a ``StorageError`` that is also a ``MalformedFileError``)
        if the entry is not plain data — a symbolic link (never followed), a special
        file, an unsafe path — or is larger than ``max_bytes`` (checked before reading).
        """
        ...

    def write(self, path: str, data: bytes, *, message: str = "") -> None:
        """Create or overwrite ``path`` atomically (readers never see a partial file)."""
        ...

    def create(self, path: str, data: bytes, *, message: str = "") -> None:
        """Create ``path``; raises ``AlreadyExistsError`` if it exists. Atomic against racers."""
        ...

    def update(self, path: str, transform: Transform, *, message: str = "") -> bytes:
        """Compare-and-swap: read, transform, write only if nobody changed it meanwhile.

        Local: serialised by a per-path file lock, so no race is lost; ``ConflictError``
        if the lock cannot be had within the lock timeout.  Hub: a conditional commit,
        retried (re-reading and re-transforming) with backoff on a lost race, then
        ``ConflictError``.  Returns the bytes written.
        """
        ...

    def delete(self, path: str, *, message: str = "") -> None:
        """Remove ``path``; raises ``NotFoundError`` if missing."""
        ...


@dataclass(frozen=True)
class Stores:
    """The repositories of one deployment.

    ``requests`` is the queue repo; ``results`` holds results files
    (``org/model/results_<ts>.json``); ``details`` holds per-sample outputs
    (``org/model/<run>/<task>_<prompt>.jsonl``).  Locally these are
    ``<data_dir>/requests``, ``<data_dir>/results`` and ``<data_dir>/details``;
    on the hub ``details`` is the ``details/`` folder of the results repo.
    """

    requests: Storage
    results: Storage
    details: Storage
