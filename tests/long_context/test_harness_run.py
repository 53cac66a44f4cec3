"""A whole long-context run through the harness: tiny random model, tiny books in ``tmp_path``."""

from __future__ import annotations

import json

import pytest

from backend.options import HarnessError, RunOptions
from backend.provenance import stamp
from backend.tracks.long_context.run import run_long_context
from eval_queue.requests import EvalRequest, Precision
from leaderboard.core.schema import ModelInfo
from leaderboard.tracks.long_context.definition import ContextSetting, KeptSide, QuestionSet, harness_tasks
from leaderboard.tracks.long_context.schema import LongContextResults
from tests.long_context.books import passage_book, summary_book, write_books


def _request(model: str) -> EvalRequest:
    return EvalRequest(model=model, precision=Precision.FLOAT32, submitted_time="2026-01-01T00:00:00Z")


@pytest.mark.slow
def test_run_reports_every_set_of_every_setting_and_what_was_cut(tmp_path, tiny_model_dir):
    # "lungo" has 12,000 words: the 10K setting cuts it, and no setting fits the tiny
    # model's 2,048-token window, so the book is cut again there (never the question).
    lib = write_books(
        tmp_path / "lib",
        [summary_book("lungo", 12_000), summary_book("breve", 20), passage_book("passi", 60)],
    )
    options = RunOptions(max_gen_toks=4, bootstrap_iters=0, progress_interval_s=0)
    evaluation = run_long_context(
        _request(str(tiny_model_dir)), None, f"local:{lib}", tmp_path / "work", options
    )
    results = stamp(evaluation.evaluation(None), track="long-context", model=ModelInfo(id="org/m")).results

    assert results.track == "long-context" and results.schema_ == "evalita-llm-results/2"
    assert results.run.context_settings == list(ContextSetting)
    assert results.run.data == "local:lib" and results.run.backend == "hf-book-cache"
    assert results.run.prefix_reuse is True and results.run.window_tokens == 2048
    assert (results.run.kept_side, results.run.decode_cache) == (KeptSide.END, "static")
    for setting in ContextSetting:
        body = results.settings[setting]
        assert set(body.sets) == set(QuestionSet)
        assert body.sets[QuestionSet.SUMMARY].n_oe == 4
        assert (body.sets[QuestionSet.LOCAL].n_oe, body.sets[QuestionSet.LOCAL].n_mc) == (2, 2)
        assert body.sets[QuestionSet.ENTITY].n_mc is None
        assert body.truncation.items == 4 + 2 + 2 + 1 + 1 + 1
        assert body.truncation.window_cut == 2  # lungo's two questions
        assert body.truncation.seen_tokens_min < body.truncation.context_tokens_mean
        assert body.truncation.kept_side is KeptSide.END
    assert results.settings[ContextSetting.K10].truncation.words_cut == 2
    assert results.settings[ContextSetting.FULL].truncation.words_cut == 0
    assert results.settings[ContextSetting.K10].truncation.offered_words_mean < (
        results.settings[ContextSetting.FULL].truncation.offered_words_mean
    )

    assert LongContextResults.from_json(results.to_json(), "r.json") == results
    files = evaluation.details_jsonl()
    assert set(files) == {f"{t.name}.jsonl" for t in harness_tasks()}
    mc = [json.loads(line) for line in files["indaqa2_local_mc_10k.jsonl"].decode().splitlines()]
    assert [r["question_id"] for r in mc] == ["passi.set-a.0", "passi.set-a.1"]
    assert all(len(r["choices"]) == 4 and r["label"] in "ABCD" and r["acc"] in (0.0, 1.0) for r in mc)
    assert all("letter" in r for r in mc)
    oe = [json.loads(line) for line in files["indaqa2_summary_oe_10k.jsonl"].decode().splitlines()]
    assert (
        oe[0]["references"] == ["A Bologna", "Verso Bologna"] and oe[0]["question"] == "Dove va il marchese?"
    )
    assert all(r["meteor"] is not None and r["em"] is not None and r["meteor_it"] is not None for r in oe)
    assert oe[0]["seen_tokens"] < oe[0]["context_tokens"]  # lungo, cut to the window


def test_only_the_hf_backend_is_supported(tmp_path):
    with pytest.raises(HarnessError, match="hf backend only"):
        run_long_context(_request("x/y"), None, "sample", tmp_path, RunOptions(backend="vllm"))
