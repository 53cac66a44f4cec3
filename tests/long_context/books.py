"""Tiny INDAQA2 books in the paper's §3.5 schema, written into ``tmp_path`` by tests and the bench."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_SENTENCES = (
    "Giacometta abitava in una casa bianca vicino al fiume.",
    "Ogni mattina il marchese partiva per Bologna in carrozza.",
    "La zia Adalgisa raccontava storie strane a tutti gli ospiti.",
    "Carla era l'amante di Zeno e viveva in una piccola stanza.",
)


def book_text(words: int, *, marker: str = "") -> str:
    """About ``words`` words of Italian prose; ``marker`` ends the text (to see where it was cut)."""
    out: list[str] = []
    count = 0
    while count < words:
        sentence = _SENTENCES[len(out) % len(_SENTENCES)]
        out.append(sentence)
        count += len(sentence.split())
    text = " ".join(out)
    kept = text.split()[:words]
    if marker:
        kept[-1] = marker
    return " ".join(kept)


def qa(kind: str, qid: str, question: str, answers: list[str], **extra: Any) -> dict[str, Any]:
    item = {
        "question_id": qid,
        "question": question,
        "answers": answers,
        "choices": [],
        "entity": None,
        "kind": kind,
        "model": "tests",
        "source_paragraphs_ids": [],
        "source_questions_ids": [],
        "target": {"label": None, "text": None},
    }
    item.update(extra)
    return item


def mc(
    kind: str, qid: str, question: str, answers: list[str], choices: list[str], label: str
) -> dict[str, Any]:
    return qa(kind, qid, question, answers, choices=choices, target={"label": label, "text": answers[0]})


def summary_book(book_id: str, words: int) -> dict[str, Any]:
    return {
        "id": book_id,
        "text": book_text(words, marker="FINELIBRO"),
        "qas": [
            qa(
                "summary_question",
                f"{book_id}.summary.0",
                "Dove va il marchese?",
                ["A Bologna", "Verso Bologna"],
            ),
            qa("summary_question", f"{book_id}.summary.1", "Chi è Carla per Zeno?", ["È la sua amante"]),
        ],
        "metadata": {"title": book_id, "author": "Test", "year": 1900, "text_length": words},
    }


def passage_book(book_id: str, words: int) -> dict[str, Any]:
    choices = ["A. Carolina", "B. Elena", "C. Giacometta", "D. Geltrude"]
    return {
        "id": book_id,
        "text": book_text(words),
        "qas": [
            mc(
                "local_question",
                f"{book_id}.set-a.0",
                "Come si chiama la giovane?",
                ["Giacometta"],
                choices,
                "C",
            ),
            mc(
                "local_question",
                f"{book_id}.set-a.1",
                "Dove abitava Giacometta?",
                ["Vicino al fiume"],
                choices,
                "A",
            ),
            mc(
                "local_question_alt",
                f"{book_id}.set-b.0",
                "Chi raccontava storie?",
                ["La zia Adalgisa"],
                choices,
                "D",
            ),
            qa(
                "entity_question",
                f"{book_id}.entity.0",
                "Che ruolo ha Adalgisa?",
                ["Racconta storie strane."],
            ),
        ],
        "metadata": {"title": book_id, "author": "Test", "year": 1900, "text_length": words},
    }


def write_books(folder: Path, books: list[dict[str, Any]], name: str = "books.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(b, ensure_ascii=False) + "\n" for b in books), encoding="utf-8")
    return folder


def tiny_library(folder: Path, *, long_words: int = 60, short_words: int = 20) -> Path:
    """Two summary-level and one passage-level book: every question set, MC for the Local ones."""
    return write_books(
        folder,
        [
            summary_book("lungo", long_words),
            summary_book("breve", short_words),
            passage_book("passi", long_words),
        ],
    )
