"""Read a judge's answer: ``{"score": 1–5, "explanation": "…"}`` as judges really write it.  Pure.

What is accepted (each case has a test in ``tests/judge/test_parse.py``):

* the object anywhere in the text — after a preamble, before a comment, inside a
  Markdown code fence (```` ```json … ``` ````), after a ``<think>…</think>`` block
  (which is set aside first, :func:`split_thinking`: a draft inside it is not the answer;
  a reasoning model whose chat template opens the block in the prompt writes only its
  ``</think>``, and one cut off by its token budget never closes it);
* JSON, or a Python-style dict with single quotes, or a "JSON-ish" object that neither
  parser takes — an apostrophe inside a single-quoted Italian explanation
  (``'explanation': 'L'articolo …'``), unescaped inner quotes, a trailing comma, an
  answer cut off by the token cap after the score — from which the score and the
  explanation are read with patterns (``JudgeAnswer.repaired`` says so);
* the score as a number (``4``, ``4.0``) or a string (``"4"``, ``"4/5"``, ``"4 su 5"``);
  the keys in any case, and their Italian names (``punteggio``, ``spiegazione``).

What is *unparsed* — never a number (:class:`ParseStatus` says why):

* no object at all (``NO_JSON``), an object without a score (``NO_SCORE``);
* a score that is not a whole number on the 1–5 scale: ``3.5``, ``"buono"``, ``true``,
  ``"4/10"``, a placeholder echoed from the prompt (``BAD_SCORE``);
* a whole number outside 1–5 (``OUT_OF_RANGE``).

An object whose score is the prompt's own placeholder (``<numero intero da 1 a 5>``) is
the output template echoed back, not an answer, and is skipped.  When several objects
carry a score, the first one is the answer: the prompt asks for
one object and nothing else, and picking the "best" of several would reward a judge
that hedges.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from leaderboard.tracks.judge.definition import EXPLANATION_KEY, SCORE_KEY, SCORE_MAX, SCORE_MIN


class ParseStatus(StrEnum):
    PARSED = "parsed"
    NO_JSON = "no_json"
    NO_SCORE = "no_score"
    BAD_SCORE = "bad_score"
    OUT_OF_RANGE = "out_of_range"


@dataclass(frozen=True)
class JudgeAnswer:
    """A judge's answer: ``score`` is an int in 1–5 exactly when ``status`` is ``PARSED``."""

    status: ParseStatus
    score: int | None = None
    explanation: str | None = None
    #: True when the object was read with patterns, not by a JSON or literal parser.
    repaired: bool = False
    #: What the judge wrote inside its think block(s), kept for the details; None: no block.
    thinking: str | None = None

    @property
    def parsed(self) -> bool:
        return self.status is ParseStatus.PARSED


_SCORE_KEYS = frozenset({SCORE_KEY, "punteggio", "voto"})
_EXPLANATION_KEYS = frozenset({EXPLANATION_KEY, "spiegazione", "motivazione"})
# A longer candidate is not worth handing to ast.literal_eval (cost grows with size).
_MAX_OBJECT_CHARS = 20_000

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_SMART_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})
_PLACEHOLDER = re.compile(r"""^\s*["']?\s*<[^<>]*>\s*["']?\s*$""")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
# "4", "4.0", "4,0", "4/5", "4 / 5", "4 su 5", "4 out of 5", "4 di 5".
_SCORE_TEXT = re.compile(
    r"^\s*(?P<value>[+-]?\d+(?:[.,]\d+)?)\s*(?:(?:/|su|di|out\s+of)\s*(?P<scale>\d+))?\s*\.?\s*$",
    re.IGNORECASE,
)
_KEY = r"""["']?\s*({keys})\s*["']?\s*:\s*"""
_LOOSE_SCORE = re.compile(
    _KEY.format(keys="|".join(sorted(_SCORE_KEYS))) + r"""(?P<value>"[^"\n]*"|'[^'\n]*'|[^,}\n]+)""",
    re.IGNORECASE,
)
# The explanation's value runs to its closing quote when that quote is followed by the
# next (quoted) key or the closing brace; else (an answer cut short, or stopped before its
# closing brace) to the end, without a closing quote there.
_LOOSE_EXPLANATION = re.compile(
    _KEY.format(keys="|".join(sorted(_EXPLANATION_KEYS)))
    + r"""(?P<quote>["'])(?P<value>.*?)(?:(?P=quote)\s*(?:,\s*["']\w+["']\s*:|\})|(?P=quote)?\s*\Z)""",
    re.IGNORECASE | re.DOTALL,
)


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the ``}`` closing the ``{`` at ``start`` (quotes respected), or None."""
    depth = 0
    quote: str | None = None
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char == '"':
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _decode(candidate: str) -> dict[Any, Any] | None:
    """The object, by the strict parsers only (JSON, then a Python literal), or None."""
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            value = json.loads(attempt)
        except ValueError:
            pass
        else:
            return value if isinstance(value, dict) else None
        if len(attempt) <= _MAX_OBJECT_CHARS:
            try:
                value = ast.literal_eval(attempt)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            return value if isinstance(value, dict) else None
    return None


def _candidates(text: str) -> Iterator[tuple[str, dict[Any, Any] | None]]:
    """Every ``{…}`` of the text in order of its opening brace, decoded when a parser takes it.

    Single quotes are not treated as string delimiters when matching braces: in Italian
    they are apostrophes far more often than quotes.  An object left open at the end of
    the text (an answer cut by the token cap) is yielded as the text to its end.
    """
    for match in re.finditer(r"\{", text):
        start = match.start()
        end = _balanced_end(text, start)
        candidate = text[start:end] if end is not None else text[start:]
        yield candidate, _decode(candidate) if end is not None else None


def _lookup(obj: Mapping[Any, Any], keys: frozenset[str]) -> tuple[bool, Any]:
    for key, value in obj.items():
        if isinstance(key, str) and key.strip().lower() in keys:
            return True, value
    return False, None


def score_value(value: Any) -> tuple[ParseStatus, int | None]:
    """A score as written (number or text) → ``(PARSED, 1–5)`` or the reason it is not one."""
    if isinstance(value, bool) or value is None:
        return ParseStatus.BAD_SCORE, None
    if isinstance(value, int):
        number: float = value
    elif isinstance(value, float):
        number = value
    elif isinstance(value, str):
        match = _SCORE_TEXT.match(value.strip().strip("\"'"))
        if match is None:
            return ParseStatus.BAD_SCORE, None
        scale = match.group("scale")
        if scale is not None and int(scale) != SCORE_MAX:
            return ParseStatus.BAD_SCORE, None  # "4/10" is on another scale
        number = float(match.group("value").replace(",", "."))
    else:
        return ParseStatus.BAD_SCORE, None
    if number != number or not float(number).is_integer():  # NaN, or 3.5: not a level of the scale
        return ParseStatus.BAD_SCORE, None
    whole = int(number)
    if not SCORE_MIN <= whole <= SCORE_MAX:
        return ParseStatus.OUT_OF_RANGE, None
    return ParseStatus.PARSED, whole


def _explanation_text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.strip()


def _is_placeholder(value: Any) -> bool:
    """The prompt's own ``<numero intero da 1 a 5>``, echoed: part of the prompt, not an answer."""
    return isinstance(value, str) and _PLACEHOLDER.match(value) is not None


def _loose(candidate: str) -> JudgeAnswer | None:
    """Read score and explanation with patterns from an object no parser takes, or None."""
    found = _LOOSE_SCORE.search(candidate)
    if found is None:
        return None
    if _is_placeholder(found.group("value")):
        return JudgeAnswer(ParseStatus.NO_SCORE, repaired=True)
    status, score = score_value(found.group("value").strip())
    described = _LOOSE_EXPLANATION.search(candidate)
    explanation = (described.group("value").strip() or None) if described is not None else None
    return JudgeAnswer(status, score, explanation, repaired=True)


def split_thinking(text: str) -> tuple[str | None, str]:
    """``(thinking, answer)``: the judge's think blocks set aside from the text to read.

    Closed ``<think>…</think>`` blocks are taken out wherever they are; a ``</think>`` with no
    opening tag (the chat template opened the block in the prompt) ends a block that started
    at the beginning; an opening tag never closed (the budget ran out mid-thought) runs to the
    end.  ``thinking`` is None when there was no block at all.
    """
    parts: list[str] = []

    def aside(match: re.Match[str]) -> str:
        parts.append(match.group(1).strip())
        return " "

    answer = _THINK.sub(aside, text)
    closes = list(_THINK_CLOSE.finditer(answer))
    if closes:
        parts.insert(0, answer[: closes[-1].start()].strip())
        answer = answer[closes[-1].end() :]
    opened = _THINK_OPEN.search(answer)
    if opened is not None:
        parts.append(answer[opened.end() :].strip())
        answer = answer[: opened.start()]
    if not parts:
        return None, text
    return "\n\n".join(p for p in parts if p), answer


def parse_answer(text: str) -> JudgeAnswer:
    """Read one judge answer; never raises on any text (see the module docstring)."""
    thinking, answer = split_thinking(str(text))
    found = _read(answer.translate(_SMART_QUOTES))
    return found if thinking is None else replace(found, thinking=thinking)


def _read(cleaned: str) -> JudgeAnswer:
    seen_object = False
    for candidate, obj in _candidates(cleaned):
        if obj is None:
            loose = _loose(candidate)
            if loose is not None and loose.status is not ParseStatus.NO_SCORE:
                return loose
            seen_object = seen_object or loose is not None
            continue
        seen_object = True
        has_score, raw_score = _lookup(obj, _SCORE_KEYS)
        if has_score and not _is_placeholder(raw_score):
            status, score = score_value(raw_score)
            _, raw_explanation = _lookup(obj, _EXPLANATION_KEYS)
            return JudgeAnswer(status, score, _explanation_text(raw_explanation))
    return JudgeAnswer(ParseStatus.NO_SCORE if seen_object else ParseStatus.NO_JSON)
