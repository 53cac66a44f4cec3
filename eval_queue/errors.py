"""Typed errors shared by the whole project.

Every failure a user or maintainer can meet has its own class, so callers catch
exactly what they can handle and programmer bugs still surface.  ``eval_queue`` is
the lowest layer of the project, so the base class lives here.
"""

from __future__ import annotations

from eval_queue.text import clip, printable

#: A malformed file's reason is cut to this length (it may quote the file's own text).
REASON_LIMIT = 500


class EvalitaError(Exception):
    """Base class of every error this project raises on purpose."""


class ConfigurationError(EvalitaError):
    """A setting (environment variable) has a value the project cannot use."""


class StorageError(EvalitaError):
    """The store could not be read or written (I/O, hub, permissions)."""


class TransientStorageError(StorageError):
    """The store did not answer, or answered that it cannot right now (HTTP 5xx or 429, a
    dropped connection, a timeout).

    The operation may or may not have been applied: a write's answer can be lost after
    the write was done.  Trying again later may work; a caller that retries must make
    the retry harmless if the first try was applied (an idempotent change, or reading the
    state back).  See :func:`eval_queue.retry.is_transient`.
    """


class NotFoundError(StorageError):
    """The file asked for does not exist in the store."""


class ConflictError(StorageError):
    """A compare-and-swap write lost a race: the file changed since it was read.

    Callers re-read and retry; after the retry budget is spent this surfaces.
    """


class AlreadyExistsError(ConflictError):
    """``create`` was asked to write a file that already exists."""


class StoreUnavailableError(StorageError):
    """A user-facing operation could not use the store (down, unreachable, too busy).

    ``message`` says so in words a submitter understands, with the store's own reason
    (already free of secrets); nothing was written.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @classmethod
    def because(cls, cause: StorageError) -> StoreUnavailableError:
        """The submitter's message for ``cause`` (whose text is already free of secrets)."""
        return cls(
            f"the queue could not be reached, so nothing was submitted ({cause}); please try again later."
        )


class MalformedFileError(EvalitaError):
    """A file in the store that cannot be used: bad JSON, wrong schema, unsafe to read.

    ``path`` names the file so that listings can report it and move on; ``reason`` is
    printable and at most ``REASON_LIMIT`` characters (it may quote the file itself).
    Such a file is skipped and reported, never rewritten.
    """

    def __init__(self, path: str, reason: str) -> None:
        reason = clip(printable(reason, keep_newlines=False), REASON_LIMIT)
        super().__init__(f"{printable(path, keep_newlines=False)}: {reason}")
        self.path = path
        self.reason = reason


class UnreadableFileError(MalformedFileError, StorageError):
    """The store holds this entry but will not hand it out as data.

    A symbolic link (never followed, dangling or not), a special file (a FIFO would block
    the reader), a file over the reader's size cap, or a path that is not a safe store
    path.  It is both a :class:`MalformedFileError` (listings skip and name it) and a
    :class:`StorageError` (what the ``Storage`` protocol raises).
    """


class SubmissionRejected(EvalitaError):
    """A submission was refused; ``message`` tells the user how to fix it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidTransitionError(EvalitaError):
    """A status change that the request's current state does not allow."""


class LeaseLostError(EvalitaError):
    """The worker no longer holds the request (lease expired and re-claimed, or cancelled)."""
