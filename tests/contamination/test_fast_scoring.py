"""The fast scoring of the order test's texts (``hf-fast``'s ``loglikelihood_rolling``) equals the reference.

The reference is lm-eval's ``HFLM.loglikelihood_rolling`` (what ``hf`` runs): per text, its rolling
windows scored in fixed-size batches.  The fast path scores the same windows as tree requests in
length-sorted batches; the log-likelihoods must agree to float tolerance, whether a text fits one
window or needs several, and each text must reach the runner's progress as soon as it is scored.
"""

from __future__ import annotations

from typing import Any

import pytest
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM

from backend.fastpath.model import FastHFLM
from backend.fastpath.tree import ROW_BRANCH_TOKENS, build_batch, plan_rows
from tests.support.tiny_model import TinyModel

ITEMS = [
    '{"text": "Il gatto dorme sul divano.", "label": 1}',
    '{"text": "Oggi piove a Torino, domani forse no.", "label": 0}',
    '{"text": "La frase implica che la seconda sia vera?", "label": 1}',
]


@pytest.fixture(scope="module")
def lm(tiny_model: TinyModel) -> FastHFLM:
    # A short window (64 tokens) so that the long text below needs several rolling windows.
    return FastHFLM(
        pretrained=str(tiny_model.folder), device="cpu", dtype="float32", batch_size=4, max_length=64
    )


def _texts() -> list[str]:
    orders = [(0, 1, 2), (2, 0, 1), (1, 2, 0)]
    short = ["\n\n".join(ITEMS[i] for i in order) for order in orders]
    return [*short, ITEMS[0], "\n\n".join(ITEMS * 6)]  # the last: several windows


def _instances(texts: list[str]) -> list[Instance]:
    return [Instance("loglikelihood_rolling", {}, (text,), i) for i, text in enumerate(texts)]


class _Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any, Any]] = []

    def add_partial(self, attr: str, req: Any, res: Any) -> None:
        self.seen.append((attr, req, res))


def test_fast_rolling_log_likelihoods_equal_the_reference(lm: FastHFLM) -> None:
    texts = _texts()
    assert len(lm.tok_encode(texts[-1])) > 2 * lm.max_length  # the long text really rolls
    ours = lm.loglikelihood_rolling(_instances(texts))
    theirs = HFLM.loglikelihood_rolling(lm, _instances(texts))
    assert len(ours) == len(theirs) == len(texts)
    for a, b in zip(ours, theirs, strict=True):
        assert a == pytest.approx(b, rel=1e-6, abs=1e-3)
    assert lm.stats.tree_requests > 0 and not lm.stats.fallback_reasons


def test_each_text_reaches_the_progress_hook_once_with_its_total(lm: FastHFLM) -> None:
    texts = _texts()
    recorder = _Recorder()
    lm.set_cache_hook(recorder)  # type: ignore[arg-type]
    try:
        totals = lm.loglikelihood_rolling(_instances(texts))
    finally:
        lm.set_cache_hook(_Recorder())  # type: ignore[arg-type]
    assert sorted((r[1][0], r[2]) for r in recorder.seen) == sorted(zip(texts, totals, strict=True))
    assert {r[0] for r in recorder.seen} == {"loglikelihood_rolling"}


def test_texts_after_one_prefix_token_are_not_merged_into_one_row() -> None:
    bos = 1
    texts = [[bos], *([bos] for _ in range(9))]
    requests = [(context, list(range(10 + i, 60 + i))) for i, context in enumerate(texts)]
    rows = plan_rows(requests, max_length=200)
    assert len(rows) == 10  # 50-token texts: one a row, each a plain causal sequence
    assert all(len(r.branches) == 1 for r in rows)
    assert build_batch(rows, pad_id=0).linear


def test_choices_still_share_their_context() -> None:
    context = list(range(100))
    requests = [(context, [200 + i, 300 + i]) for i in range(6)]
    rows = plan_rows(requests, max_length=400)
    assert len(rows) == 1 and len(rows[0].branches) == 6
    assert not build_batch(rows, pad_id=0).linear
    short_context = [(context[:2], list(range(i, i + ROW_BRANCH_TOKENS // 2 + 2))) for i in range(3)]
    assert [len(r.branches) for r in plan_rows(short_context, max_length=400)] == [1, 1, 1]
