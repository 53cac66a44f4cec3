"""The one reader for JSON that comes from a store: requests, results, details lines.

Anyone who can write to a store (a worker, a maintainer, on the hub anyone with write
access to the dataset repo) can put any bytes there.  Python's ``json`` module alone lets
some of them through to crash whoever reads them later (deep nesting → ``RecursionError``;
a 4,300-digit integer → ``ValueError``; ``"\\ud800"`` parses and then cannot be written
back as UTF-8; ``NaN`` breaks scoring).  :func:`loads` refuses all of these, each with a
:class:`~eval_queue.errors.MalformedFileError` naming the file and the reason, so a
listing reports the file, skips it and never rewrites it.

The rules, in order:

1. **size** — at most ``limits.max_bytes`` (readers also pass the cap to ``Storage.read``,
   so a huge file is refused before it is read);
2. **encoding** — strict UTF-8.  A UTF-8 byte-order mark is accepted and dropped (editors on
   Windows add one; the content is still UTF-8); UTF-16/32 marks are refused;
3. **depth** — arrays and objects nested at most ``limits.max_depth`` deep (deeper than the
   parser's own recursion limit is caught as its ``RecursionError``; anything shallower is
   measured on the parsed value without recursion);
4. **numbers** — integers of at most ``limits.max_int_digits`` digits; floats finite
   (``NaN``, ``Infinity`` and overflowing literals such as ``1e999`` are refused);
5. **strings** — no lone surrogates (``"\\ud800"``), in values or keys; no duplicate keys
   (parsers disagree on which one wins).

Schema validation follows in the file's own model (:func:`validate`).

Cost: the walk looking for lone surrogates runs only when the text holds a surrogate
escape at all; ``bench/bench_safe_reader.py`` measures the rest against pydantic's own parser.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from eval_queue.errors import MalformedFileError
from eval_queue.text import SURROGATE

if TYPE_CHECKING:
    from eval_queue.storage.base import Storage

M = TypeVar("M", bound=BaseModel)

_BOM_UTF8 = b"\xef\xbb\xbf"
_BOMS_OTHER = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")  # UTF-16/32 (LE covers UTF-32 LE)
# A cheap scan of the text: could it hold a lone surrogate (only a \uD800–\uDFFF escape can)?
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


@dataclass(frozen=True)
class JsonLimits:
    """What one kind of store file may be; see the module docstring for each rule."""

    max_bytes: int
    max_depth: int = 32
    # 18 digits: every such integer fits in a signed 64-bit number.
    max_int_digits: int = 18


#: A request file: a few KB (history capped at 50 entries, error at 8,000 characters).
REQUEST_LIMITS = JsonLimits(max_bytes=1 << 20)
#: A results file: tens of KB for most runs; room for the tracks' larger bodies.
RESULTS_LIMITS = JsonLimits(max_bytes=16 << 20)
#: One line of a details file (one answered document, its input and choices).
DETAILS_LINE_LIMITS = JsonLimits(max_bytes=4 << 20)
#: A whole details file (thousands of lines).
DETAILS_FILE_MAX_BYTES = 512 << 20


class _Refused(ValueError):
    """Raised from inside the parser's hooks; becomes a ``MalformedFileError``."""


def loads(data: bytes, path: str, limits: JsonLimits) -> Any:
    """Parse ``data`` under ``limits``; raises ``MalformedFileError(path, reason)``.

    Returns plain JSON values (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``,
    ``None``) that are safe to validate and to write back.
    """
    if len(data) > limits.max_bytes:
        raise MalformedFileError(path, f"file is {len(data):,} bytes; the limit is {limits.max_bytes:,}")
    text = _decode(data, path)
    try:
        value = json.loads(
            text,
            # Python's int() parses any long literal (or raises past 4,300 digits); float()
            # turns 1e999 into inf.
            parse_int=_int_parser(limits.max_int_digits),
            parse_float=_parse_float,
            parse_constant=_refuse_constant,
            object_pairs_hook=_object,
        )
    except _Refused as exc:
        raise MalformedFileError(path, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise MalformedFileError(path, f"not valid JSON ({exc})") from None
    except RecursionError:  # deeper than the parser's own limit (about 1,000 levels)
        raise MalformedFileError(path, f"JSON nested too deeply; the limit is {limits.max_depth}") from None
    depth = _depth(value)
    if depth > limits.max_depth:
        raise MalformedFileError(path, f"JSON nested {depth} levels deep; the limit is {limits.max_depth}")
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):  # only a \uD8xx–\uDFxx escape makes one
        _check_strings(value, path)
    return value


def load_object(data: bytes, path: str, limits: JsonLimits) -> dict[str, Any]:
    """:func:`loads` of a file whose top level must be a JSON object."""
    value = loads(data, path, limits)
    if not isinstance(value, dict):
        raise MalformedFileError(path, f"top level is not a JSON object (it is {_kind(value)})")
    return value


def read_object(storage: Storage, path: str, limits: JsonLimits) -> dict[str, Any]:
    """Read ``path`` from ``storage`` (refused unread if over the cap) and :func:`load_object` it."""
    return load_object(storage.read(path, max_bytes=limits.max_bytes), path, limits)


def validate(model: type[M], raw: dict[str, Any], path: str) -> M:
    """``model.model_validate(raw)``; the first validation error becomes ``MalformedFileError``."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise MalformedFileError(path, f"field {where!r}: {first['msg']}") from None


# -- the rules ---------------------------------------------------------------------------


def _decode(data: bytes, path: str) -> str:
    if data.startswith(_BOM_UTF8):
        data = data[len(_BOM_UTF8) :]
    elif data.startswith(_BOMS_OTHER):
        raise MalformedFileError(path, "not UTF-8 (a UTF-16 or UTF-32 byte-order mark)")
    try:
        # Python's UTF-8 codec is strict: it also refuses encoded surrogates (ED A0 80).
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedFileError(path, f"not UTF-8 (byte {exc.start}: {exc.reason})") from None


def _depth(value: Any) -> int:
    """How deep arrays/objects nest in ``value`` (a scalar: 0), without recursion."""
    if not isinstance(value, dict | list):
        return 0
    deepest = 1
    stack: list[tuple[dict[str, Any] | list[Any], int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return deepest


def _int_parser(max_digits: int) -> Any:
    def parse_int(literal: str) -> int:
        digits = len(literal.lstrip("-"))
        if digits > max_digits:
            raise _Refused(f"an integer of {digits:,} digits; the limit is {max_digits}")
        return int(literal)

    return parse_int


def _parse_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused(f"number {literal[:40]!r} is out of range")
    return value


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {key[:80]!r}")
            seen.add(key)
    return result


def _check_strings(value: Any, path: str) -> None:
    for text in _strings(value):
        if SURROGATE.search(text):
            raise MalformedFileError(path, f"a lone surrogate escape in the string {text[:60]!r}")


def _strings(value: Any) -> Iterator[str]:
    """Every string in ``value`` (keys included), without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            yield from item.keys()
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _kind(value: Any) -> str:
    match value:
        case list():
            return "an array"
        case str():
            return "a string"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case None:
            return "null"
        case _:
            return type(value).__name__
