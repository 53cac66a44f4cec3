"""Text from the store or from a user, made safe to print and short enough to echo.

Request and results files are written by workers and, on the hub, by anyone with write
access; a model id comes from a web form.  Their text ends up in terminals (``eval_queue
list``), log lines and refusal messages, so two rules, each defined here once:

* :func:`printable` — control characters (ESC, BEL, the C1 range, bidi overrides…) are
  shown as escapes (``\\x1b``) instead of being sent to a terminal that would act on them;
* :func:`shorten` — a value echoed back to a user is cut to a readable length, saying
  how long it really was (a 100 KB model id is not repeated in full).

This module imports nothing of the project, so even :mod:`eval_queue.errors` can use it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

# C0 controls but tab and newline, DEL, the C1 range, and the Unicode format characters
# that reorder or hide text on screen (bidi embeddings/overrides/isolates, line and
# paragraph separators).  Newline and tab are kept: error texts are multi-line logs.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# Lone UTF-16 surrogates cannot be encoded (or written back) as UTF-8.
SURROGATE = re.compile("[\ud800-\udfff]")
#: How many characters of a user's value a refusal repeats.
ECHO_LIMIT = 80


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with control and invisible reordering characters shown as ``\\xNN``/``\\uNNNN``.

    With ``keep_newlines=False`` newlines and tabs are escaped too (one-line contexts).
    Lone surrogates are escaped as well, so the result can always be encoded.
    """
    text = _CONTROL.sub(_escape, text)
    text = SURROGATE.sub(_escape, text)
    if not keep_newlines:
        text = text.replace("\n", "\\n").replace("\t", "\\t")
    return text


def clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, ending with ``… (N characters)`` when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def shorten(value: object, limit: int = ECHO_LIMIT) -> str:
    """A user's value as a refusal echoes it: quoted, printable, and cut with its length.

    ``shorten("a" * 100_000)`` is ``'aaaa…aaa'… (100,000 characters)``.
    """
    text = str(value)
    shown = printable(text[:limit], keep_newlines=False)
    quoted = "'" + shown.replace("'", "\\'") + "'"
    return quoted if len(text) <= limit else f"{quoted}… ({len(text):,} characters)"


def unknown_name(kind: str, value: object, valid: Sequence[str], where: str = "") -> str:
    """The one "unknown name" message: ``Unknown task 'tee'. Did you mean te? Valid: wic, te, …``.

    Every registry and definition that looks a name up (tracks, tasks, prompts, settings,
    criteria) refuses an unknown one with it, suggesting the closest valid name when one is
    close; ``where`` places it (`` for task 'te'``).
    """
    close = difflib.get_close_matches(str(value), list(valid), n=1)
    hint = f" Did you mean {close[0]}?" if close else ""
    return f"Unknown {kind} {str(value)!r}{where}.{hint} Valid: {', '.join(valid)}."
