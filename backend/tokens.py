"""Tokens per harness task, counted with the run's own tokenizer at the model's interface.

The runner wraps the model's ``loglikelihood``/``generate_until`` (``backend.runner._instrument``);
each request that reaches the model is counted here, by the lm-eval task it belongs to
(``Instance.task_name``):

* **in**: the tokens the model reads — log-likelihood: context + continuation; generation: the
  prompt — capped at the model's window as the harness truncates them (``max_length``);
* **out**: the tokens of each generated answer as the harness returns it (after its stop
  sequences), re-encoded with the same tokenizer;
* **reasoning**: the part of ``out`` inside a ``<think>…</think>`` block the answer kept (an
  unclosed block counts to the end).

The run's totals are counted on every request, attributed or not; per task only requests that
name their task, so the two agree exactly when every request was attributed (a test checks it
on the tiny model).  These count each request as an API would bill it, unpadded; the forwards
(``RunCost.loglikelihood_tokens``, padding included) can be fewer, since lm-eval scores the
one-token options of a question in one forward over their shared context.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from leaderboard.core.schema import TaskTokens

log = logging.getLogger(__name__)

#: A kept reasoning block: from ``<think>`` to ``</think>`` (or to the end when never closed).
THINK_BLOCK = re.compile(r"<think>(.*?)(?:</think>|\Z)", re.DOTALL)


def reasoning_text(answer: str) -> str:
    """What the answer's ``<think>`` blocks hold (empty when it has none)."""
    return "".join(THINK_BLOCK.findall(answer))


@dataclass
class TokenTally:
    """Counts per task and for the whole run (see the module docstring)."""

    encode: Callable[[str], Sequence[int]]
    max_length: int | None = None
    by_task: dict[str, list[int]] = field(default_factory=dict)  # task → [in, out, reasoning, requests]
    totals: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    unattributed: int = 0
    _lengths: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)

    def _length(self, text: str) -> int:
        # Multiple-choice requests repeat one context per option: encode it once.  Keyed by
        # (length, hash), not by the text: a prompt may hold a whole book.
        key = (len(text), hash(text))
        known = self._lengths.get(key)
        if known is None:
            known = len(self.encode(text))
            if len(self._lengths) < 1_000_000:
                self._lengths[key] = known
        return known

    def _capped(self, n: int) -> int:
        return min(n, self.max_length) if self.max_length else n

    def count(self, kind: str, requests: Sequence[Any], responses: Sequence[Any] | None) -> None:
        """Count one call of the model (``kind``: lm-eval's request type) and its answers."""
        answers = list(responses) if kind == "generate_until" and responses is not None else []
        for i, request in enumerate(requests):
            args = getattr(request, "args", ())
            if kind == "generate_until":
                tokens_in = self._capped(self._length(str(args[0]))) if args else 0
                answer = answers[i] if i < len(answers) and isinstance(answers[i], str) else ""
                tokens_out = len(self.encode(answer)) if answer else 0
                thought = reasoning_text(answer)
                tokens_reasoning = len(self.encode(thought)) if thought else 0
            else:  # loglikelihood (context, continuation) or loglikelihood_rolling (text,)
                tokens_in = self._capped(sum(self._length(str(a)) for a in args[:2]))
                tokens_out = tokens_reasoning = 0
            counts = (tokens_in, tokens_out, tokens_reasoning, 1)
            self.totals = [a + b for a, b in zip(self.totals, counts, strict=True)]
            task = getattr(request, "task_name", None)
            if not task:
                self.unattributed += 1
                continue
            row = self.by_task.setdefault(str(task), [0, 0, 0, 0])
            for k in range(4):
                row[k] += counts[k]

    def per_task(self) -> dict[str, TaskTokens]:
        return {
            task: TaskTokens(input=c[0], output=c[1], reasoning=c[2], requests=c[3])
            for task, c in sorted(self.by_task.items())
        }


def tally_for(lm: Any) -> TokenTally | None:
    """A tally using ``lm``'s tokenizer (lm-eval's ``tok_encode``); None for a model without one."""
    encode = getattr(lm, "tok_encode", None)
    if not callable(encode):
        log.info("the model class has no tokenizer (tok_encode): tokens per task are not counted")
        return None
    try:
        max_length = int(lm.max_length)
    except (AttributeError, TypeError, ValueError):
        max_length = None
    return TokenTally(encode=encode, max_length=max_length)
