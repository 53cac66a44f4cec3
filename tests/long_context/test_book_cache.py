"""The book-cache ``hf`` model: what it feeds the model, and the same answers with shared prefills.

A tiny random Llama in float32 on CPU, greedy decoding.  Its answers depend on the
question (checked), so equal answers mean each question really continued from its own
book's cache, cropped back after every answer.  "Stock" is lm-eval's own ``HFLM`` (what the
paper's harness ran): by default the track's model must feed it the very same tokens.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from backend.options import HarnessError
from backend.tracks.long_context.lm import BookCacheHFLM, split_prompt
from leaderboard.tracks.long_context.definition import QUESTION_MARKER, render_prompt, truncate_words
from tests.long_context.books import book_text

pytestmark = pytest.mark.slow

GEN = {"until": ["\n\n"], "max_gen_toks": 10, "do_sample": False, "temperature": 0.0}
QUESTIONS = ("Chi è Carla?", "Dove va la marchesa?", "Di che colore erano i capelli di Giacometta?")
CHOICES = ["A. Carolina", "B. Elena", "C. Giacometta", "D. Geltrude"]
BOOKS = {"a": book_text(12), "b": book_text(9) + " Fine."}


def _request(context: str, task: str, doc_id: int, gen: dict[str, Any] = GEN) -> Any:
    return SimpleNamespace(args=(context, dict(gen)), task_name=task, doc_id=doc_id)


def _requests(books: dict[str, str]) -> list[Any]:
    return [
        _request(render_prompt(text, question, CHOICES if i == 2 else None), f"t_{name}", i)
        for name, text in books.items()
        for i, question in enumerate(QUESTIONS)
    ]


def _model(folder: Path, **kwargs: Any) -> BookCacheHFLM:
    return BookCacheHFLM(pretrained=str(folder), device="cpu", dtype="float32", batch_size=1, **kwargs)


def _stock(folder: Path, **kwargs: Any) -> Any:
    from lm_eval.models.huggingface import HFLM

    return HFLM(pretrained=str(folder), device="cpu", dtype="float32", batch_size=1, **kwargs)


def _spy(lm: Any) -> list[list[int]]:
    """Record the tokens every ``generate`` call of ``lm`` reads (HFLM's and ours)."""
    seen: list[list[int]] = []
    generate = lm._model_generate

    def spy(context: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(context[0].tolist())
        return generate(context, *args, **kwargs)

    lm._model_generate = spy
    return seen


@pytest.fixture(scope="module")
def bos_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a tokenizer that starts every encoding with ``<s>`` (as Llama's)."""
    from tokenizers import Tokenizer
    from tokenizers.processors import TemplateProcessing

    folder = tmp_path_factory.mktemp("bos") / "model"
    shutil.copytree(tiny_model_dir, folder)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    bos = tokenizer.token_to_id("<s>")
    tokenizer.post_processor = TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)]
    )
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


# --------------------------------------------------------------------------- answers and shared prefills


def test_prefix_reuse_gives_the_answers_of_the_plain_run(tiny_model_dir):
    requests = _requests(BOOKS)
    reused_lm = _model(tiny_model_dir, reuse_prefix=True)
    reused = reused_lm.generate_until(requests)
    plain_lm = _model(tiny_model_dir, reuse_prefix=False)
    plain = plain_lm.generate_until(requests)
    assert reused == plain
    assert len(set(reused[:3])) > 1, "the answers should depend on the question"
    # The book was prefilled once per book, not once per question, into a static cache.
    report, plain_report = reused_lm.run_report(), plain_lm.run_report()
    assert (report["groups"], report["prefix_prefills"], report["requests"]) == (2, 2, 6)
    assert (report["decode_cache"], plain_report["decode_cache"]) == ("static", "dynamic")
    prefix = sum(w["seen_tokens"] for w in report["windows"][::3])
    # Each book's prefix ran once instead of three times; the books begin alike, so the
    # second one took the first one's common beginning from its cache.
    assert report["carried_tokens"] > 0
    saved = plain_report["prefill_tokens"] - report["prefill_tokens"]
    assert saved == 2 * prefix + report["carried_tokens"]


def test_without_truncation_the_answers_and_tokens_equal_stock_hflm(tiny_model_dir):
    requests = _requests(BOOKS)
    stock = _stock(tiny_model_dir)
    ours = _model(tiny_model_dir)
    stock_seen, our_seen = _spy(stock), _spy(ours)
    assert ours.generate_until(requests) == stock.generate_until(requests)
    assert sorted(our_seen) == sorted(stock_seen)


def test_the_dynamic_cache_fallback_gives_the_same_answers(tiny_model_dir):
    """Models whose cache cannot be a plain static one (sliding window, hybrid) prefill a DynamicCache."""
    requests = _requests(BOOKS)
    lm = _model(tiny_model_dir)
    lm._static_cache_ok = False
    assert lm.generate_until(requests) == _model(tiny_model_dir, reuse_prefix=False).generate_until(requests)
    assert lm.run_report()["decode_cache"] == "dynamic"


def test_a_prefix_that_begins_the_next_is_carried_over_not_prefilled_again(tiny_model_dir):
    # The 10K-word book is the beginning of the full one: when both fit, the full setting's
    # prefill starts where the 10K one ended.
    text = book_text(300, marker="FINELIBRO")
    requests = [
        _request(render_prompt(truncate_words(text, words), question), f"t_{words}", i)
        for words in (200, 300)
        for i, question in enumerate(QUESTIONS[:2])
    ]
    lm = _model(tiny_model_dir)
    answers = lm.generate_until(requests)
    assert answers == _model(tiny_model_dir, reuse_prefix=False).generate_until(requests)
    report = lm.run_report()
    short = report["windows"][0]["seen_tokens"]
    assert report["prefix_prefills"] == 2 and report["carried_tokens"] >= short - 2


# --------------------------------------------------------------------------- the window: its end is kept


def test_a_window_smaller_than_the_prompt_keeps_its_last_tokens_as_stock_hflm(tiny_model_dir):
    text = book_text(400)
    requests = _requests({"long": text})
    lm = _model(tiny_model_dir, max_length=256)
    stock = _stock(tiny_model_dir, max_length=256)
    seen, stock_seen = _spy(lm), _spy(stock)
    answers = lm.generate_until(requests)
    assert answers == stock.generate_until(requests)
    assert sorted(seen) == sorted(stock_seen), "the very tokens lm-eval's HFLM reads"
    room = 256 - GEN["max_gen_toks"]
    for request in requests:
        whole, _ = lm.encode_prompt(request.args[0])
        assert whole[-room:] in seen, "the prompt's last max_length - max_gen_toks tokens"
    for ids in seen:
        shown = lm.tokenizer.decode(ids, skip_special_tokens=True)
        assert any(shown.endswith(split_prompt(r.args[0])[1]) for r in requests), "question and options whole"
        assert not shown.startswith(text[:50]), "the beginning of the book is cut"
        assert QUESTION_MARKER in shown
    windows = lm.run_report()["windows"]
    assert all(0 < w["seen_tokens"] < w["prefix_tokens"] for w in windows)
    # And the plain run, cut the same way, answers the same.
    assert _model(tiny_model_dir, max_length=256, reuse_prefix=False).generate_until(requests) == answers


def test_a_cut_prompt_loses_its_bos_as_stock_hflm(bos_model_dir):
    requests = _requests({"long": book_text(400), "short": book_text(20)})
    lm, stock = _model(bos_model_dir, max_length=256), _stock(bos_model_dir, max_length=256)
    seen, stock_seen = _spy(lm), _spy(stock)
    assert lm.generate_until(requests) == stock.generate_until(requests)
    assert sorted(seen) == sorted(stock_seen)
    bos = lm.tokenizer.bos_token_id
    by_book = {r.task_name: ids for r, ids in zip(requests, lm.kept_tokens(requests), strict=True)}
    assert by_book["t_short"][0] == bos, "a prompt that fits starts with BOS"
    assert by_book["t_long"][0] != bos, "a cut prompt loses it, as in lm-eval"


def test_settings_read_different_pages_when_the_books_differ_at_their_end(tiny_model_dir):
    """Table 5's point: with a small window, 10K / 50K / full read the end of what each offers."""
    words = book_text(700).split()
    for at, mark in ((300, "DIECIMILA"), (500, "CINQUANTAMILA"), (700, "FINELIBRO")):
        words[at - 1] = mark
    text = " ".join(words)
    settings = {"10k": 300, "50k": 500, "full": None}  # a 700-word book scaled down
    requests = [
        _request(render_prompt(truncate_words(text, n), QUESTIONS[0]), f"t_{name}", 0)
        for name, n in settings.items()
    ]
    lm = _model(tiny_model_dir, max_length=256)
    seen = _spy(lm)
    lm.generate_until(requests)
    shown = {
        r.task_name: lm.tokenizer.decode(ids)
        for r, ids in zip(requests, lm.kept_tokens(requests), strict=True)
    }
    assert len(set(map(tuple, seen))) == 3
    assert "DIECIMILA" in shown["t_10k"] and "CINQUANTAMILA" not in shown["t_10k"]
    assert "CINQUANTAMILA" in shown["t_50k"] and "FINELIBRO" not in shown["t_50k"]
    assert "FINELIBRO" in shown["t_full"]
    # The start variant reads the same first pages in every setting, prefilled once.
    start = _model(tiny_model_dir, max_length=256, keep="start")
    start_seen = _spy(start)
    start.generate_until(requests)
    assert len(set(map(tuple, start_seen))) == 1
    assert start.run_report()["prefix_prefills"] == 1


# --------------------------------------------------------------------------- the start variant


def test_the_start_option_reproduces_the_previous_rule(tiny_model_dir):
    """``keep=start``: the book's first tokens, cut to fit the book's longest question, then the question."""
    text = book_text(400)
    requests = _requests({"long": text})
    lm = _model(tiny_model_dir, max_length=256, keep="start")
    seen = _spy(lm)
    answers = lm.generate_until(requests)
    prefix_ids = lm.tok_encode(split_prompt(requests[0].args[0])[0])
    tails = [lm.tok_encode(split_prompt(r.args[0])[1], add_special_tokens=False) for r in requests]
    keep = 256 - max(len(t) for t in tails) - GEN["max_gen_toks"]
    assert sorted(seen) == sorted(prefix_ids[:keep] + tail for tail in tails)
    for ids in seen:
        assert lm.tokenizer.decode(ids, skip_special_tokens=True).startswith(text[:50])
    report = lm.run_report()
    assert report["kept_side"] == "start" and report["prefix_prefills"] == 1
    assert {w["seen_tokens"] for w in report["windows"]} == {keep}
    assert (
        _model(tiny_model_dir, max_length=256, keep="start", reuse_prefix=False).generate_until(requests)
        == answers
    )


def test_an_unknown_side_is_refused_naming_the_valid_ones(tiny_model_dir):
    with pytest.raises(ValueError, match="Valid: end, start"):
        _model(tiny_model_dir, keep="middle")


@pytest.mark.parametrize("keep", ["end", "start"])
def test_a_question_that_cannot_fit_the_window_is_an_error(tiny_model_dir, keep):
    question = "Perché " * 200 + "?"
    request = _request(render_prompt("Il libro.", question), "t", 0)
    with pytest.raises(HarnessError, match="does not fit the model's window of 64 tokens"):
        _model(tiny_model_dir, max_length=64, keep=keep).generate_until([request])
