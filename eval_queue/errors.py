"""Typed errors shared by the whole project.

Every failure a user or maintainer can meet has its own class, so callers catch
exactly what they can handle and programmer bugs still surface.  ``eval_queue`` is
the lowest layer of the project, so the base class lives here.
"""

from __future__ import annotations


class EvalitaError(Exception):
    """Base class of every error this project raises on purpose."""


class ConfigurationError(EvalitaError):
    """A setting (environment variable) has a value the project cannot use."""


class StorageError(EvalitaError):
    """The store could not be read or written (I/O, hub, permissions)."""


class NotFoundError(StorageError):
    """The file asked for does not exist in the store."""


class ConflictError(StorageError):
    """A compare-and-swap write lost a race: the file changed since it was read.

    Callers re-read and retry; after the retry budget is spent this surfaces.
    """


class AlreadyExistsError(ConflictError):
    """``create`` was asked to write a file that already exists."""


class MalformedFileError(EvalitaError):
    """A JSON file in the store does not match its schema.

    ``path`` names the file so that listings can report it and move on.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class SubmissionRejected(EvalitaError):
    """A submission was refused; ``message`` tells the user how to fix it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidTransitionError(EvalitaError):
    """A status change that the request's current state does not allow."""


class LeaseLostError(EvalitaError):
    """The worker no longer holds the request (lease expired and re-claimed, or cancelled)."""
