"""Masking secrets in text that may become public (request files, the UI, log lines).

:func:`redact` is used by the hub store for client error messages and by the queue for
the ``error`` a worker records on a FAILED request; :func:`install_log_redaction` applies
it to every log record and traceback (each entry point installs it).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from eval_queue.text import printable

# Anything shaped like a Hugging Face token; 8+ characters so that names such as
# ``hf_hub_download`` are left alone.
TOKEN_LIKE = re.compile(r"hf_[A-Za-z0-9]{8,}")
MASK = "***"


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every given secret and anything shaped like an HF token masked."""
    for secret in secrets:
        if secret:
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
        record = self.base(*args, **kwargs)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # arguments that do not fit the format: keep them apart
            message = f"{record.msg} {record.args!r}"
        record.msg, record.args = printable(redact(message, *self.secrets)), ()
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = printable(redact(_TRACEBACKS.formatException(record.exc_info), *self.secrets))
        if record.stack_info:
            record.stack_info = printable(redact(record.stack_info, *self.secrets))
        return record


_TRACEBACKS = logging.Formatter()


def install_log_redaction(*secrets: str | None) -> None:
    """Mask ``secrets`` (and token-shaped strings) in every log record from now on.

    Called by every entry point (app, worker, CLIs) before anything is logged, and again
    with the configured secrets once the settings are read; a second call replaces the
    secrets of the first instead of stacking factories.
    """
    current = logging.getLogRecordFactory()
    base = current.base if isinstance(current, RedactingRecordFactory) else current
    logging.setLogRecordFactory(RedactingRecordFactory(base, tuple(s for s in secrets if s)))
