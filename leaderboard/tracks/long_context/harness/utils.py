"""Hooks of the INDAQA2 harness tasks (``!function utils.…`` in the YAML configs).

A doc (one line of the JSONL files :mod:`backend.tracks.long_context.data` writes) is one
question: ``question_id``, ``question``, ``answers`` (1–5 references), ``choices`` and
``label`` (MC), ``book_file`` (the book's text file) and ``max_words`` (the context
setting: first N words, or null for the whole book).

Books are files, not fields: a book of up to 242K words is shared by 38–117 questions
(INDAQA2 Table 1), and copying it into every row would write gigabytes for the real
data.  :func:`book_text` reads each book once (a small cache: the rows of one book are
contiguous).  Everything else here is pure.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from leaderboard.tracks.long_context.definition import render_prompt, truncate_words
from leaderboard.tracks.long_context.metrics import (
    exact_match,
    meteor_italian,
    meteor_paper,
    score_multiple_choice,
)
from leaderboard.tracks.long_context.wordnet import load_wordnet


@lru_cache(maxsize=4)
def book_text(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def _book(doc: dict[str, Any]) -> str:
    return truncate_words(book_text(doc["book_file"]), doc["max_words"])


def doc_to_text_oe(doc: dict[str, Any]) -> str:
    return render_prompt(_book(doc), doc["question"])


def doc_to_text_mc(doc: dict[str, Any]) -> str:
    return render_prompt(_book(doc), doc["question"], doc["choices"])


def doc_to_target_oe(doc: dict[str, Any]) -> str:
    return doc["answers"][0]


def doc_to_target_mc(doc: dict[str, Any]) -> str:
    return doc["label"]


def process_results_oe(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """EM, paper-compatible METEOR and Italian METEOR of the answer (max over references)."""
    answer, references = results[0], doc["answers"]
    scores = {
        "em": exact_match(answer, references),
        "meteor": meteor_paper(answer, references, load_wordnet()),
        "meteor_it": meteor_italian(answer, references),
    }
    missing = [name for name, value in scores.items() if value is None]
    if missing:  # the data preparation rejects items without a usable reference
        raise ValueError(f"question {doc['question_id']}: no usable reference for {', '.join(missing)}")
    return {name: float(value) for name, value in scores.items() if value is not None}


def process_results_mc(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Accuracy and unparsed flag of the answer's letter (Appendix E's regexes)."""
    scored = score_multiple_choice(results[0], doc["label"])
    return {"acc": scored.acc, "unparsed": scored.unparsed}
