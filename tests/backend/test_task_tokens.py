"""Tokens per task (issue 33): counted with the run's tokenizer, by the task each request names,
and summing to the run's totals."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from backend.tokens import TokenTally, reasoning_text
from tests.support.tiny_model import TinyModel

WIC = "evalita-mp_wic_prompt-1"
RE = "evalita-mp_re_prompt-1"


def _request(task: str | None, *args: object) -> SimpleNamespace:
    return SimpleNamespace(task_name=task, args=args)


def test_reasoning_is_what_think_blocks_hold_even_unclosed() -> None:
    assert reasoning_text("<think>a b</think> risposta") == "a b"
    assert reasoning_text("x <think>uno</think> y <think>due") == "unodue"
    assert reasoning_text("nessun blocco") == ""


def test_a_tally_counts_inputs_outputs_and_reasoning_per_task_and_in_total() -> None:
    tally = TokenTally(encode=lambda text: text.split(), max_length=6)
    tally.count("loglikelihood", [_request("mc", "a b c", " d"), _request("mc", "a b c", " e f")], None)
    tally.count(
        "generate_until",
        [_request("gen", "p q", {}), _request("gen", "r s t u v w x y", {})],
        ["<think>x y</think> z", "w"],
    )
    tally.count("loglikelihood", [_request(None, "orphan", "x")], None)
    per_task = tally.per_task()
    assert (per_task["mc"].input, per_task["mc"].output, per_task["mc"].requests) == (4 + 5, 0, 2)
    # The second prompt is capped at the window (6); "<think>x y</think> z" is 3 words, 2 of them reasoning.
    assert (per_task["gen"].input, per_task["gen"].output, per_task["gen"].reasoning) == (2 + 6, 3 + 1, 2)
    assert tally.totals == [9 + 8 + 2, 4, 2, 5]
    assert tally.unattributed == 1


@pytest.mark.slow
def test_per_task_tokens_sum_to_the_run_totals_and_match_a_recount_on_the_tiny_model(
    tiny_model: TinyModel, tmp_path: Path, datasets_cache: Path
) -> None:
    from transformers import AutoTokenizer

    from backend.runner import ModelRef, RunOptions, run_harness
    from backend.tracks.evalita.data import prepare_include_path

    override = prepare_include_path("sample", tmp_path / "work", tasks=[WIC, RE])
    model = ModelRef(str(tiny_model.folder), "main", "float32")
    options = RunOptions(
        device="cpu", batch_size=4, bootstrap_iters=0, limit=3, max_gen_toks=8, progress_interval_s=60
    )
    done = run_harness(model, [WIC, RE], 0, options, task_manager_kwargs=override.task_manager_kwargs())
    cost = done.run.cost
    assert cost is not None and cost.task_tokens is not None
    assert set(cost.task_tokens) == {WIC, RE}
    per_task = cost.task_tokens.values()
    assert sum(t.input for t in per_task) == cost.input_tokens > 0
    assert sum(t.output for t in per_task) == cost.output_tokens > 0
    assert sum(t.reasoning for t in per_task) == cost.reasoning_tokens == 0
    assert cost.task_tokens[WIC].output == 0  # log-likelihood only
    # An independent recount from the samples lm-eval kept, with the model's own tokenizer.
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model.folder))

    def n(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    wic_in = sum(n(a[0]) + n(a[1]) for s in done.samples[WIC] for a in s["arguments"])
    assert cost.task_tokens[WIC].input == wic_in
    re_out = sum(n(s["resps"][0][0]) for s in done.samples[RE] if s["resps"][0][0])
    assert cost.task_tokens[RE].output == re_out
    assert cost.task_tokens[RE].requests == len(done.samples[RE]) == 3
    assert cost.scored_items == sum(n["effective"] for n in done.n_samples.values()) == 6
    # On the CPU the energy block says it was not measured, and claims no figure.
    assert cost.energy is not None and not cost.energy.measured and cost.kwh is None
    assert cost.energy.note.startswith("not measured (no NVML counter)")
