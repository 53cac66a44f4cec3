"""Masking secrets in text that may become public (request files, the UI, log lines).

:func:`redact` is used by the hub store for client error messages and by the queue for
the ``error`` a worker records on a FAILED request; :func:`install_log_redaction` applies
it to every log record and traceback (each entry point installs it), and
:func:`redacting_records` does the same for the length of one library call
(``backend.worker.run_once`` runs inside it), so a program that calls the package with log
handlers of its own never sees a secret either.  Besides the secrets it is given, every
mask covers the secrets the environment holds (:data:`SECRET_VARIABLES`) and anything
shaped like a Hugging Face token.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from eval_queue.text import printable

# Anything shaped like a Hugging Face token; 8+ characters so that names such as
# ``hf_hub_download`` are left alone.
TOKEN_LIKE = re.compile(r"hf_[A-Za-z0-9]{8,}")
MASK = "***"
#: The environment variables that hold secrets (``Settings.secrets`` reads the same ones): masked
#: wherever they appear, whether or not a caller passed them in.
SECRET_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "EVALITA_SUBMITTER_SALT")
#: An environment value shorter than this is not masked on its own (masking ``"x"`` would
#: garble every message); the configured settings' secrets are masked whatever their length.
MIN_ENVIRONMENT_SECRET = 6


def environment_secrets(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The secrets the environment holds (:data:`SECRET_VARIABLES`), read now."""
    env = os.environ if env is None else env
    values = (env.get(name, "").strip() for name in SECRET_VARIABLES)
    return tuple(value for value in values if len(value) >= MIN_ENVIRONMENT_SECRET)


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every given secret, the environment's and anything shaped like an HF token masked."""
    # The longest first: a secret that contains another is masked whole.
    for secret in sorted({s for s in (*secrets, *environment_secrets()) if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return TOKEN_LIKE.sub(f"hf_{MASK}", text)


class RedactingRecordFactory:
    """A log record factory that masks secrets in every record, traceback included.

    The message is formatted at once, masked (the given secrets and anything shaped like
    an HF token) and made printable (control characters escaped: a model id or an error
    from the store must not drive the terminal that shows the log); the traceback of a
    record logged with ``exc_info`` is formatted and masked too (``exc_text``, which
    every standard formatter prints instead of formatting ``exc_info`` again).  Being the
    record factory, it sees records of every logger, for every handler, added now or later.
    """

    def __init__(self, base: Callable[..., logging.LogRecord], secrets: tuple[str, ...]) -> None:
        self.base = base
        self.secrets = secrets

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        return mask_record(self.base(*args, **kwargs), self.secrets)


_TRACEBACKS = logging.Formatter()


def mask_record(record: logging.LogRecord, secrets: tuple[str, ...] = ()) -> logging.LogRecord:
    """``record`` with its message, traceback and stack masked (:func:`redact`) and made printable."""
    try:
        message = record.getMessage()
    except (TypeError, ValueError):  # arguments that do not fit the format: keep them apart
        message = f"{record.msg} {record.args!r}"
    record.msg, record.args = printable(redact(message, *secrets)), ()
    if record.exc_info and record.exc_info[0] is not None:
        record.exc_text = printable(redact(_TRACEBACKS.formatException(record.exc_info), *secrets))
    if record.stack_info:
        record.stack_info = printable(redact(record.stack_info, *secrets))
    return record


def install_log_redaction(*secrets: str | None) -> None:
    """Mask ``secrets`` (and token-shaped strings) in every log record from now on.

    Called by every entry point (app, worker, CLIs) before anything is logged, and again
    with the configured secrets once the settings are read; a second call replaces the
    secrets of the first instead of stacking factories.
    """
    current = logging.getLogRecordFactory()
    base = current.base if isinstance(current, RedactingRecordFactory) else current
    logging.setLogRecordFactory(RedactingRecordFactory(base, tuple(s for s in secrets if s)))


_SCOPE_LOCK = threading.Lock()
#: The factory :func:`redacting_records` installed, the one it replaced, and how many blocks
#: (threads: several workers in one process) are inside it.
_scope: dict[str, Any] = {"depth": 0, "mine": None, "before": None}


@contextlib.contextmanager
def redacting_records() -> Iterator[None]:
    """While the block runs, every log record is masked (the environment's secrets and anything
    token-shaped, as :func:`install_log_redaction` does), whatever handlers the calling program
    has; the factory found before is restored when the last block (of any thread) ends.

    For the package's library entry points (``backend.worker.run_once``): an entry point's own
    installation stays underneath, so nothing is masked less inside the block than outside it.
    """
    with _SCOPE_LOCK:
        if _scope["depth"] == 0:
            _scope["before"] = logging.getLogRecordFactory()
            _scope["mine"] = RedactingRecordFactory(_scope["before"], ())
            logging.setLogRecordFactory(_scope["mine"])
        _scope["depth"] += 1
    try:
        yield
    finally:
        with _SCOPE_LOCK:
            _scope["depth"] -= 1
            if _scope["depth"] == 0:
                # An entry point that installed its own meanwhile keeps it (it masks as much).
                if logging.getLogRecordFactory() is _scope["mine"]:
                    logging.setLogRecordFactory(_scope["before"])
                _scope["mine"] = _scope["before"] = None
