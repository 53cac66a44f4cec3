"""lm-eval hooks of the judge task (``_judge_template_yaml``): parse each answer with ``parse.py``.

lm-eval imports this file by its path; the project root must be importable (the worker
runs from it).  Pure functions, no lm-eval import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from leaderboard.tracks.judge.items import ANSWER_PREFIX_FIELD
from leaderboard.tracks.judge.parse import parse_answer
from leaderboard.tracks.judge.prompts import judge_answer


def process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, float | int | None]:
    """One answer → ``parsed`` (1.0 or 0.0) and ``score`` (1–5, or None when unparsed)."""
    # The harness returns what the model generated after the prefilled start of its answer.
    answer = parse_answer(judge_answer(results[0] if results else "", doc.get(ANSWER_PREFIX_FIELD) or ""))
    return {"parsed": float(answer.parsed), "score": answer.score}


def mean_of_scored(scores: Sequence[int | None]) -> float | None:
    """Mean of the parsed scores; None when nothing parsed (never 0, never NaN)."""
    scored = [s for s in scores if s is not None]
    return fmean(scored) if scored else None
