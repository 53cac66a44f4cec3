"""The book-cache ``hf`` model: same answers with and without prefix reuse; cuts the book, not the question.

A tiny random Llama in float32 on CPU, greedy decoding.  Its answers depend on the
question (checked), so equal answers mean each question really continued from its own
book's cache, cropped back after every answer.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from backend.options import HarnessError
from backend.tracks.long_context.lm import BookCacheHFLM, split_prompt
from leaderboard.tracks.long_context.definition import QUESTION_MARKER, render_prompt
from tests.long_context.books import book_text

pytestmark = pytest.mark.slow

GEN = {"until": ["\n\n"], "max_gen_toks": 10, "do_sample": False, "temperature": 0.0}
QUESTIONS = ("Chi è Carla?", "Dove va la marchesa?", "Di che colore erano i capelli di Giacometta?")
CHOICES = ["A. Carolina", "B. Elena", "C. Giacometta", "D. Geltrude"]


def _requests(books: dict[str, str]) -> list[Any]:
    requests = []
    for name, text in books.items():
        for i, question in enumerate(QUESTIONS):
            choices = CHOICES if i == 2 else None
            context = render_prompt(text, question, choices)
            requests.append(SimpleNamespace(args=(context, dict(GEN)), task_name=f"t_{name}", doc_id=i))
    return requests


def _model(folder: Path, **kwargs: Any) -> BookCacheHFLM:
    return BookCacheHFLM(pretrained=str(folder), device="cpu", dtype="float32", batch_size=1, **kwargs)


BOOKS = {"a": book_text(12), "b": book_text(9) + " Fine."}


def test_prefix_reuse_gives_the_answers_of_the_plain_run(tiny_model_dir):
    requests = _requests(BOOKS)
    reused_lm = _model(tiny_model_dir, reuse_prefix=True)
    reused = reused_lm.generate_until(requests)
    plain_lm = _model(tiny_model_dir, reuse_prefix=False)
    plain = plain_lm.generate_until(requests)
    assert reused == plain
    assert len(set(reused[:3])) > 1, "the answers should depend on the question"
    # The book was prefilled once per book, not once per question.
    report, plain_report = reused_lm.run_report(), plain_lm.run_report()
    assert report["groups"] == 2 and report["requests"] == 6
    prefix = sum(w["seen_tokens"] for w in report["windows"][::3])
    assert plain_report["prefill_tokens"] - report["prefill_tokens"] == 2 * prefix


def test_without_truncation_the_answers_equal_stock_hflm(tiny_model_dir):
    from lm_eval.models.huggingface import HFLM

    requests = _requests(BOOKS)
    stock = HFLM(pretrained=str(tiny_model_dir), device="cpu", dtype="float32", batch_size=1)
    assert _model(tiny_model_dir).generate_until(requests) == stock.generate_until(requests)


def test_a_window_smaller_than_the_prompt_cuts_the_book_not_the_question(tiny_model_dir):
    text = book_text(400)
    requests = _requests({"long": text})
    lm = _model(tiny_model_dir, max_length=256)
    seen: list[list[int]] = []
    generate = lm._model_generate

    def spy(context: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(context[0].tolist())
        return generate(context, *args, **kwargs)

    lm._model_generate = spy
    answers = lm.generate_until(requests)
    assert len(answers) == 3
    windows = lm.run_report()["windows"]
    assert all(w["seen_tokens"] < w["prefix_tokens"] for w in windows)
    for ids, request in zip(seen, requests, strict=True):
        assert len(ids) + GEN["max_gen_toks"] <= 256
        shown = lm.tokenizer.decode(ids, skip_special_tokens=True)
        _, tail = split_prompt(request.args[0])
        assert shown.endswith(tail), "the question and choices are kept whole"
        assert shown.startswith(text[:50]), "the book keeps its beginning"
        assert QUESTION_MARKER in shown
    # One cut per book: every question of it saw the same prefix.
    assert len({w["seen_tokens"] for w in windows}) == 1
    # And the plain run, cut the same way, answers the same.
    assert _model(tiny_model_dir, max_length=256, reuse_prefix=False).generate_until(requests) == answers


def test_a_question_that_cannot_fit_the_window_is_an_error(tiny_model_dir):
    question = "Perché " * 200 + "?"
    request = SimpleNamespace(args=(render_prompt("Il libro.", question), dict(GEN)), task_name="t", doc_id=0)
    with pytest.raises(HarnessError, match="does not fit the model's window of 64 tokens"):
        _model(tiny_model_dir, max_length=64).generate_until([request])
