"""The contamination tasks' one hook: keep each document's log-likelihood (pure)."""

from __future__ import annotations

from typing import Any


def process_loglikelihood(doc: dict[str, Any], results: list[Any]) -> dict[str, float]:
    """``loglikelihood`` answers ``(logprob, is_greedy)``, ``loglikelihood_rolling`` a float: the logprob."""
    answer = results[0]
    value = answer[0] if isinstance(answer, (tuple, list)) else answer
    return {"ll": float(value)}
