"""The embedded SmolLM2-135M-Instruct (from the HF cache, offline) on a small slice of the track.

Two short books, the 10K setting only: the real model reads the whole book (no cut), answers
every question set, and its multiple-choice answers go through Appendix E's regexes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.embedded import EMBEDDED_MODEL_ID, repo_cache_dir, snapshot_is_complete
from backend.options import RunOptions
from backend.provenance import stamp
from backend.tracks.long_context.run import run_long_context
from eval_queue.requests import EvalRequest, Precision
from eval_queue.settings import hub_cache_dir
from leaderboard.core.schema import ModelInfo
from leaderboard.tracks.long_context.definition import ContextSetting, QuestionSet
from tests.long_context.books import passage_book, summary_book, write_books

pytestmark = pytest.mark.slow


def _cached_revision() -> str:
    repo = repo_cache_dir(hub_cache_dir(os.environ), EMBEDDED_MODEL_ID)
    ref = repo / "refs" / "main"
    if not ref.is_file() or not snapshot_is_complete(repo / "snapshots" / ref.read_text().strip()):
        pytest.skip("the embedded SmolLM2 is not in the HF cache (python -m backend install-embedded)")
    return ref.read_text().strip()


def test_smollm2_answers_every_set_of_a_small_slice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    revision = _cached_revision()
    lib = write_books(tmp_path / "lib", [summary_book("breve", 120), passage_book("passi", 120)])
    request = EvalRequest(
        model=EMBEDDED_MODEL_ID,
        revision=revision,
        precision=Precision.FLOAT32,
        submitted_time="2026-01-01T00:00:00Z",
    )
    options = RunOptions(max_gen_toks=16, bootstrap_iters=0, progress_interval_s=5, limit=10)

    evaluation = run_long_context(request, "10k", f"local:{lib}", tmp_path / "work", options)

    results = stamp(
        evaluation.evaluation(None), track="long-context", model=ModelInfo(id=EMBEDDED_MODEL_ID)
    ).results
    assert list(results.settings) == [ContextSetting.K10]
    body = results.settings[ContextSetting.K10]
    assert set(body.sets) == set(QuestionSet)
    assert (body.truncation.words_cut, body.truncation.window_cut, body.truncation.seen_fraction_mean) == (
        0,
        0,
        1,
    )
    assert results.run.window_tokens == 8192 and results.model.id == EMBEDDED_MODEL_ID
    answers = [record for records in evaluation.details.values() for record in records]
    assert len(answers) == 2 + 2 + 2 + 1 + 1 + 1
    # Without a chat template a small model sometimes stops at once (an empty answer scores 0);
    # most of its answers are text.
    assert sum(bool(record.answer.strip()) for record in answers) >= len(answers) // 2, answers
    for scores in body.sets.values():
        assert scores.meteor is not None and 0.0 <= scores.meteor <= 1.0
