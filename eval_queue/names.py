"""What a model id, a revision and a submitter name may look like: one definition for all.

The submission form checks them before anything is written; the worker checks a request
file's model id and revision again before they reach ``model_args`` (a request file can
be edited in the store, and ``org/x,peft=/path`` would smuggle an argument into
``pretrained=org/x,peft=/path,revision=…``).
"""

from __future__ import annotations

import re

from eval_queue.errors import EvalitaError
from eval_queue.text import shorten

# The Hub's own rule: org/name, letters, digits, "-", "_", "."; no "--" or "..";
# neither part starts or ends with "-" or ".".
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?"
MODEL_ID_RE = re.compile(rf"^{_PART}/{_PART}\Z")
REVISION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}\Z")
SUBMITTER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@ -]{0,99}\Z")


class UnsafeRequestError(EvalitaError):
    """A request file names a model or revision that could not have been submitted."""


def is_model_id(text: str) -> bool:
    """``org/name`` as the Hub allows it."""
    return bool(MODEL_ID_RE.match(text)) and "--" not in text and ".." not in text


def is_revision(text: str) -> bool:
    """A branch, tag or commit sha: letters, digits, ``._/-``, no ``..``."""
    return bool(REVISION_RE.match(text)) and ".." not in text


def check_runnable(model: str, revision: str) -> None:
    """The worker's check before building ``model_args``; ``UnsafeRequestError`` if it fails."""
    if not is_model_id(model):
        raise UnsafeRequestError(f"the request's model id {shorten(model)} is not a Hub model id; not run")
    if not is_revision(revision):
        raise UnsafeRequestError(
            f"the request's revision {shorten(revision)} is not a valid revision; not run"
        )
