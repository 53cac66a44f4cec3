"""The order test and CoDeC come out the same on the worker's two model backends (``hf``, ``hf-fast``)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from backend.options import RunOptions
from backend.tracks.contamination.run import run_contamination
from eval_queue.requests import Precision
from leaderboard.tracks.contamination.schema import CodecDetail, OrderDetail
from tests.support.tiny_model import TinyModel

pytestmark = pytest.mark.slow


def _details(
    tiny_model: TinyModel, backend: str, workdir: Path
) -> tuple[list[OrderDetail], list[CodecDetail]]:
    request = SimpleNamespace(
        model=str(tiny_model.folder), revision="main", precision=Precision.FLOAT32, variant=None
    )
    options = RunOptions(device="cpu", backend=backend, limit=6)
    evaluation = run_contamination(request, "sample", workdir, options, set_ids=["te"])  # type: ignore[arg-type]
    order = [OrderDetail.model_validate_json(x) for x in evaluation.details["order_te.jsonl"].splitlines()]
    codec = [CodecDetail.model_validate_json(x) for x in evaluation.details["codec_te.jsonl"].splitlines()]
    return order, codec


def test_hf_and_hf_fast_give_the_same_log_likelihoods(tiny_model: TinyModel, tmp_path: Path) -> None:
    order_hf, codec_hf = _details(tiny_model, "hf", tmp_path / "hf")
    order_fast, codec_fast = _details(tiny_model, "hf-fast", tmp_path / "fast")
    assert len(order_hf) == 2 and len(codec_hf) == 6
    # Float tolerance: both sum ~1,000 float32 log-probabilities (the random tiny model gives
    # ~8 nats a token), in different orders; a relative 1e-6 is a few float32 ulps of such a sum.
    close = {"rel": 1e-6, "abs": 1e-3}
    for a, b in zip(order_hf, order_fast, strict=True):
        assert a.canonical == pytest.approx(b.canonical, **close)
        assert a.permuted == pytest.approx(b.permuted, **close)
    for a, b in zip(codec_hf, codec_fast, strict=True):
        assert (a.alone, a.in_context) == pytest.approx((b.alone, b.in_context), **close)
