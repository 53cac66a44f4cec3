"""The fast path's parts against lm-eval's own code, on the tiny random model (seconds).

Each test runs the ``hf-fast`` code and the reference code of lm-eval's ``HFLM`` on the
same model instance and the same inputs (``HFLM.method(lm, …)`` is the reference) and
compares what lm-eval would see.
"""

from __future__ import annotations

import itertools
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from lm_eval.api.instance import Instance
from lm_eval.api.metrics import _bootstrap_internal_no_mp, sample_stddev
from lm_eval.models.huggingface import HFLM

from backend.fastpath import FastHFLM, fastpath_session
from backend.fastpath import model as fast_model
from backend.fastpath.encoding import encode_pairs
from backend.fastpath.generation import (
    CPU_LIMITS,
    BatchingLimits,
    GenerationJob,
    StopPlan,
    generate_greedy,
    plan_waves,
    vocabulary_texts,
)
from backend.fastpath.postprocess import bootstrap_stderr_parallel
from backend.fastpath.tree import PAD, PREFIX, attention_bias, build_batch, plan_batches, plan_rows
from tests.support.tiny_model import TinyModel

CONTEXTS = [
    "La frase implica logicamente che la seconda frase sia vera?",
    "Qual è il sentimento espresso nel tweet? ",  # trailing space moves to the continuation
    "Domanda: quale servizio offre il comune? Risposta:",
    "<s>Estrai tutte le entità di tipo PER, LOC e ORG dal testo seguente.",  # starts with BOS text
    "",  # empty context: lm-eval scores after the prefix token
]
CHOICES = [" Sì", " No", " Vero", " Falso", "Positivo", " A", " B, C e D", " Sì"]  # " Sì" twice: shared


@pytest.fixture(scope="module")
def lm(tiny_model: TinyModel) -> FastHFLM:
    return FastHFLM(pretrained=str(tiny_model.folder), device="cpu", dtype="float32", batch_size=4)


def _pairs() -> list[tuple[str, str]]:
    return [(context, choice) for context in CONTEXTS for choice in CHOICES]


def _tokenized(lm: FastHFLM) -> list[tuple[tuple[str, str], list[int], list[int]]]:
    pairs = _pairs()
    return [(p, c, x) for p, (c, x) in zip(pairs, encode_pairs(lm, pairs), strict=True)]


def test_batched_encoding_equals_hflm_token_for_token(lm: FastHFLM) -> None:
    pairs = _pairs()
    ours = encode_pairs(lm, pairs)
    checked = 0
    for (context, continuation), (ctx, cont) in zip(pairs, ours, strict=True):
        if context:
            spaces = len(context) - len(context.rstrip())
            moved = (
                (context[:-spaces], context[-spaces:] + continuation) if spaces else (context, continuation)
            )
            assert (ctx, cont) == lm._encode_pair(*moved), (context, continuation)
        else:
            expected = lm.tok_encode(continuation, add_special_tokens=False)
            assert ctx + cont == (
                [lm.prefix_token_id, *expected] if expected[0] != lm.prefix_token_id else expected
            )
        checked += 1
    assert checked == len(CONTEXTS) * len(CHOICES)


def test_rows_share_each_context_and_deduplicate_choices() -> None:
    requests = [([1, 2, 3], [4]), ([1, 2, 3], [5, 6]), ([1, 2, 3], [4]), ([9], [4, 4, 4])]
    rows = plan_rows(requests, max_length=100)
    assert [r.prefix for r in rows] == [[1, 2, 3], [9]]
    assert rows[0].branches == [(4,), (5, 6)]
    assert rows[0].members == [(0, 0), (1, 1), (2, 0)]
    assert rows[0].length == 3 + 0 + 1  # a continuation's last token is never fed


def test_rows_truncate_contexts_on_the_left_like_the_reference() -> None:
    rows = plan_rows([([1, 2, 3, 4, 5, 6], [7, 8])], max_length=5)
    # the reference forwards (ctx + cont)[-(max_length + 1):][:-1] = [3, 4, 5, 6, 7]
    assert rows[0].prefix == [3, 4, 5, 6]
    assert rows[0].length == 5


def test_batches_take_the_longest_rows_first_within_the_token_budget() -> None:
    rows = plan_rows([([i] * n, [0]) for i, n in enumerate([3, 30, 10, 12, 40])], max_length=100)
    batches = plan_batches(rows, token_budget=48)
    lengths = [[r.length for r in batch] for batch in batches]
    assert lengths == [[40], [30], [12, 10, 3]]
    assert all(len(b) * -(-b[0].length // 8) * 8 <= 48 for b in batches if len(b) > 1)


def test_on_a_cpu_a_batch_ends_where_a_row_would_be_padded_past_the_share() -> None:
    rows = plan_rows([([i] * n, [0]) for i, n in enumerate([3, 30, 10, 12, 40, 38, 11])], max_length=100)
    uncapped = [[r.length for r in batch] for batch in plan_batches(rows, token_budget=4096)]
    capped = [[r.length for r in batch] for batch in plan_batches(rows, 4096, padding_share=0.125)]
    assert uncapped == [[40, 38, 30, 12, 11, 10, 3]]
    # widths 40, 32, 16, 8: a row joins while its padded length loses at most 1/8 of the width
    assert capped == [[40, 38], [30], [12, 11, 10], [3]]


def test_branch_tokens_attend_to_the_context_and_their_own_branch_only() -> None:
    rows = plan_rows([([1, 2], [3, 4, 5]), ([1, 2], [6, 7])], max_length=100)
    batch = build_batch(rows, pad_id=0)
    segment = batch.segment[0].tolist()
    assert segment[:5] == [PREFIX, PREFIX, 0, 0, 1] and set(segment[5:]) == {PAD}
    assert batch.position_ids[0, :5].tolist() == [0, 1, 2, 3, 2]
    allowed = attention_bias(torch.from_numpy(batch.segment), torch.float32)[0, 0] == 0
    assert allowed[4, :5].tolist() == [True, True, False, False, True]  # branch 1 skips branch 0
    assert allowed[3, :5].tolist() == [True, True, True, True, False]
    assert allowed[1, :5].tolist() == [True, True, False, False, False]
    assert allowed.any(dim=1).all()  # no empty row: padding sees itself


def test_tree_log_likelihoods_equal_the_reference(lm: FastHFLM) -> None:
    requests = _tokenized(lm)
    ours = lm._loglikelihood_tokens(requests)
    theirs = HFLM._loglikelihood_tokens(lm, requests)
    assert len(ours) == len(theirs) == len(requests)
    for (ll, greedy), (ref_ll, ref_greedy) in zip(ours, theirs, strict=True):
        assert ll == pytest.approx(ref_ll, abs=1e-4)
        assert greedy == ref_greedy
    assert lm.stats.tree_check.startswith("passed")
    assert lm.stats.tree_padded_tokens >= lm.stats.tree_tokens > 0


def test_truncated_contexts_score_like_the_reference(lm: FastHFLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lm, "_max_length", 12)
    requests = [r for r in _tokenized(lm) if len(r[1]) + len(r[2]) > 13]
    assert requests, "no request long enough to be truncated"
    ours = lm._loglikelihood_tokens(requests)
    theirs = HFLM._loglikelihood_tokens(lm, requests)
    assert [o[0] for o in ours] == pytest.approx([t[0] for t in theirs], abs=1e-4)


def test_a_failing_tree_check_hands_every_request_to_the_reference(
    tiny_model: TinyModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = FastHFLM(pretrained=str(tiny_model.folder), device="cpu", dtype="float32", batch_size=4)
    # No tree mask: a plain causal mask over the row, so a branch sees the branches before it.
    monkeypatch.setattr(fast_model, "attention_bias", lambda segment, dtype: None)
    requests = _tokenized(broken)
    ours = broken._loglikelihood_tokens(requests)
    assert broken.stats.tree_check.startswith("failed")
    assert broken.stats.reference_loglikelihood_requests == len(requests)
    assert broken.stats.fallback_reasons and "prefix-tree check failed" in broken.stats.fallback_reasons[0]
    assert ours == HFLM._loglikelihood_tokens(broken, requests)


def test_attention_without_custom_masks_is_served_by_the_reference(lm: FastHFLM) -> None:
    config = lm.model.config
    original = config._attn_implementation
    try:
        config._attn_implementation = "flash_attention_2"
        assert "takes no custom 4-D mask" in str(fast_model.tree_unsupported(lm))
    finally:
        config._attn_implementation = original
    assert fast_model.tree_unsupported(lm) is None


def _generation(context: str, **gen_kwargs: Any) -> Instance:
    return Instance("generate_until", {}, (context, gen_kwargs), 0)


def _stops_from_reference(lm: FastHFLM, context: str) -> tuple[str, str | None, str | None]:
    """The unstopped answer, and stop strings cut from it: one token's text, a span over two tokens."""
    [text] = HFLM.generate_until(lm, [_generation(context, until=[], max_gen_toks=12, do_sample=False)])
    prompt = lm.tok_encode(context)
    tokens = lm.model.generate(torch.tensor([prompt]), max_new_tokens=12, do_sample=False)[0, len(prompt) :]
    pieces = [lm.tokenizer.decode([t]) for t in tokens.tolist()]
    middle = pieces[2:9]  # completed well before the 12-token cap
    clean = [p for p in middle if p.strip() and "\ufffd" not in p]
    one = next((p for p in clean if text.count(p) == 1), None)
    spans = [a[-1] + b[0] for a, b in itertools.pairwise(middle) if a in clean and b in clean]
    two = next((s for s in spans if text.count(s) == 1 and not any(s in p for p in pieces)), None)
    return text, one, two


def test_greedy_generation_cuts_at_each_stop_like_the_reference(lm: FastHFLM) -> None:
    requests: list[Instance] = []
    unstopped: list[str] = []
    singles = spans = 0
    for context in [c for c in CONTEXTS if c]:
        full, one, two = _stops_from_reference(lm, context)
        requests.append(_generation(context, until=["</s>"], max_gen_toks=10, do_sample=False))
        unstopped.append("")
        for stop in [s for s in (one, two) if s]:
            requests.append(_generation(context, until=[stop], max_gen_toks=12, do_sample=False))
            unstopped.append(full)
        singles += one is not None
        spans += two is not None
    ours = lm.generate_until(requests)
    theirs = HFLM.generate_until(lm, requests)
    assert ours == theirs
    assert lm.stats.cb_requests >= len(requests)
    cut = [(text, full) for text, full in zip(theirs, unstopped, strict=True) if full]
    assert all(full.startswith(text) and len(text) < len(full) for text, full in cut)
    assert singles > 0 and spans > 0  # single-token stops and stops over two tokens both exercised


def test_a_stop_over_two_tokens_ends_the_request_early(lm: FastHFLM) -> None:
    jobs: list[GenerationJob] = []
    for key, context in enumerate(c for c in CONTEXTS if c):
        _, _, two = _stops_from_reference(lm, context)
        if two:
            jobs.append(GenerationJob(key, lm.tok_encode(context), 12, (two,)))
    assert jobs
    config, blocked = lm._greedy_config()
    assert blocked is None
    config.max_new_tokens = 12
    out = generate_greedy(
        lm.model,
        lm.tokenizer,
        jobs,
        generation_config=config,
        limits=CPU_LIMITS,
        device_type="cpu",
        eos_ids=set(),
    )
    for job in jobs:
        text = lm.tokenizer.decode(out[job.key])
        assert job.stops[0] in text and len(out[job.key]) < 12, (job.stops, text)
        assert job.stops[0] not in lm.tokenizer.decode(
            out[job.key][:-1]
        )  # cut at the token that completed it


def test_tokens_holding_a_stop_end_the_request_and_tokens_closing_one_are_watched(lm: FastHFLM) -> None:
    texts = vocabulary_texts(lm.tokenizer)
    plan = StopPlan.build(["\n", "</s>", ""], texts)
    assert plan.stops == ("\n", "</s>")
    assert {i for i, text in enumerate(texts) if "\n" in text or "</s>" in text} == plan.ending
    assert lm.tokenizer.eos_token_id in plan.ending  # the special token's text is "</s>"
    assert plan.ending <= plan.closing
    assert {i for i, text in enumerate(texts) if text.endswith(">")} <= plan.closing
    assert StopPlan.build([], texts).closing == frozenset()


def test_long_sequences_decode_fewer_at_a_time_than_short_ones() -> None:
    jobs = [GenerationJob(k, [1] * n, 100, ()) for k, n in enumerate([900, 100, 860, 30, 400, 420])]
    waves = plan_waves(jobs, BatchingLimits(max_requests=16, kv_tokens=4096))
    assert [([j.key for j in wave], per_step) for wave, per_step in waves] == [
        ([0, 2, 5], 4),  # longest 1000 tokens: 4096 // 1000; down to half of it
        ([4], 8),  # 500 tokens: exactly half of 1000 starts a new wave
        ([1, 3], 16),  # longest 200: capped at max_requests
    ]


def test_sampling_requests_are_served_by_the_reference(lm: FastHFLM) -> None:
    requests = [_generation(CONTEXTS[0], until=["\n"], max_gen_toks=4, do_sample=True, temperature=0.7)]
    before = lm.stats.reference_generation_requests
    torch.manual_seed(0)
    [ours] = lm.generate_until(requests)
    torch.manual_seed(0)
    [theirs] = HFLM.generate_until(lm, requests)
    assert ours == theirs
    assert lm.stats.reference_generation_requests == before + 1


def test_parallel_bootstrap_gives_upstreams_standard_error() -> None:
    rng = random.Random(7)
    xs = [(rng.randrange(2), rng.randrange(2)) for _ in range(60)]

    def disagreement(items: list[tuple[int, int]]) -> float:
        return sum(a != b for a, b in items) / len(items)

    upstream = sample_stddev(_bootstrap_internal_no_mp(disagreement, xs, 2000))
    assert bootstrap_stderr_parallel(disagreement, xs, 2000, workers=2) == upstream


class _Task:
    """The part of an lm-eval task the post-processing touches."""

    OUTPUT_TYPE = "generate_until"

    def __init__(self, calls: list[int]) -> None:
        self.calls = calls
        self.instances = [
            Instance("generate_until", {"n": n}, ("ctx", {}), 0, metadata=("t", n, 1), resps=[f"a{n}"])
            for n in range(5)
        ]

    def apply_filters(self) -> None:
        for inst in self.instances:
            inst.filtered_resps["none"] = inst.resps[0]

    def process_results(self, doc: dict[str, int], results: list[str]) -> dict[str, float]:
        self.calls.append(doc["n"])
        return {"score": float(doc["n"]) + len(results[0])}


def test_documents_are_scored_once_in_the_pool_and_handed_back_in_any_order() -> None:
    calls: list[int] = []
    task = _Task(calls)
    with fastpath_session("hf-fast", _FakeLM(), [task]) as report:
        assert task.process_results({"n": 3}, ["a3"]) == {"score": 5.0}
        assert task.process_results({"n": 0}, ["a0"]) == {"score": 2.0}
        assert task.process_results({"n": 9}, ["zz"]) == {"score": 11.0}  # not precomputed: computed here
    assert calls == [9]  # the five documents were scored in the forked workers
    assert report["fastpath"]["postprocess"]["documents"] == 5
    assert task.process_results({"n": 1}, ["a1"]) == {"score": 3.0}  # the task's own method is back
    assert calls == [9, 1]


class _FakeLM:
    def fastpath_stats(self) -> dict[str, Any]:
        return {}


def test_other_backends_get_no_session() -> None:
    task = _Task([])
    original = task.process_results
    with fastpath_session("hf", _FakeLM(), [task]) as report:
        assert task.process_results == original
    assert report == {}


def test_length_sorted_batches_pad_little() -> None:
    rng = np.random.default_rng(0)
    requests = [(rng.integers(3, 300, n).tolist(), [5, 6]) for n in rng.integers(50, 400, 300)]
    rows = plan_rows(requests, max_length=2048)
    batches = [build_batch(b, 0) for b in plan_batches(rows, 4096)]
    real = sum(b.real_tokens for b in batches)
    padded = sum(b.padded_tokens for b in batches)
    assert real == sum(len(ctx) + 1 for ctx, _ in requests)
    assert padded < 1.1 * real


def test_vllm_runs_with_prefix_caching_off_and_batch_invariant_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from backend import runner
    from backend.fastpath.vllm_settings import BATCH_INVARIANT_ENV
    from backend.options import HarnessError, ModelRef, RunOptions

    options = RunOptions(backend="vllm", device="cpu")
    args = runner.build_model_args(ModelRef("org/model", "abc"), options, "bfloat16")
    assert "enable_prefix_caching=False" in args.split(",")
    monkeypatch.delenv(BATCH_INVARIANT_ENV, raising=False)
    if importlib.util.find_spec("vllm") is None:
        with pytest.raises(HarnessError, match="needs the vllm package"):
            runner._load_model(args, options, "cpu", 4)
    else:  # pragma: no cover - vllm is not part of requirements-backend.txt
        runner.prepare_vllm_environment()
    assert os.environ[BATCH_INVARIANT_ENV] == "1"


def test_the_worker_runs_the_fast_path_on_request_and_the_reference_by_default(tmp_path: Path) -> None:
    from backend.cli import build_parser, config_from_args
    from eval_queue.settings import Settings

    settings = Settings(data_dir=tmp_path)
    default = config_from_args(build_parser().parse_args(["--once"]), settings)
    fast = config_from_args(build_parser().parse_args(["--once", "--backend", "hf-fast"]), settings)
    assert default.harness.backend == "hf"
    assert fast.harness.backend == "hf-fast"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--once", "--backend", "hf-turbo"])
