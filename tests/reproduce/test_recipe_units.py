"""The recipe's command line says what the worker ran, and where a plain lm_eval run differs."""

from __future__ import annotations

import shlex

from backend.options import RecipeInclude, RunOptions
from backend.recipe import INCLUDE_PLACEHOLDER, lm_eval_recipe
from backend.runner import SEEDS
from backend.tracks.evalita.run import recipe_include


def _recipe(options: RunOptions, **kwargs: object):  # type: ignore[no-untyped-def]
    defaults: dict[str, object] = {
        "seeds": SEEDS,
        "include": None,
        "task_hashes": {"t1": "h"},
        "uses_include": False,
    }
    return lm_eval_recipe(
        options.backend,
        "pretrained=org/m,revision=abc,dtype=bfloat16,trust_remote_code=False",
        ["t1", "t2"],
        5,
        options,
        "auto" if options.device == "cuda" else 4,
        options.device or "cpu",
        **(defaults | kwargs),  # type: ignore[arg-type]
    )


def _flags(command: str) -> dict[str, str | None]:
    args = shlex.split(command)[2:]
    flags: dict[str, str | None] = {}
    for i, arg in enumerate(args):
        if arg.startswith("--"):
            value = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else None
            flags[arg] = value
    return flags


def test_the_command_carries_every_setting_of_the_run() -> None:
    options = RunOptions(
        device="cuda", limit=20, max_gen_toks=64, apply_chat_template=True, bootstrap_iters=1000
    )
    recipe = _recipe(options)
    flags = _flags(recipe.command)
    assert recipe.command.startswith("lm_eval run --model hf --model_args pretrained=org/m,revision=abc")
    assert flags["--tasks"] == "t1,t2" and flags["--num_fewshot"] == "5" and flags["--limit"] == "20"
    assert (
        flags["--batch_size"] == "auto" and flags["--max_batch_size"] == "64" and flags["--device"] == "cuda"
    )
    assert flags["--seed"] == "0,1234,1234,1234" and flags["--gen_kwargs"] == "max_gen_toks=64"
    assert "--apply_chat_template" in flags and "--fewshot_as_multiturn" in flags and "--log_samples" in flags
    assert "--include_path" not in flags and recipe.setup is None
    assert any("100,000" in note and "1,000" in note for note in recipe.notes)


def test_the_projects_own_model_classes_become_lm_evals_with_a_note() -> None:
    recipe = _recipe(RunOptions(backend="hf-fast", bootstrap_iters=100_000))
    assert _flags(recipe.command)["--model"] == "hf"
    assert [note for note in recipe.notes if "fast path" in note] and not any(
        "100,000" in n for n in recipe.notes
    )


def test_an_include_folder_is_named_with_the_line_that_writes_it_or_a_placeholder() -> None:
    include = RecipeInclude(path="evalita-include/lm_eval_data_override", setup="python -c 'x'")
    written = _recipe(RunOptions(), include=include, uses_include=True)
    assert _flags(written.command)["--include_path"] == include.path and written.setup == "python -c 'x'"
    assert written.script.splitlines() == ["python -c 'x'", written.command]
    unknown = _recipe(RunOptions(), uses_include=True)
    assert _flags(unknown.command)["--include_path"] == INCLUDE_PLACEHOLDER and unknown.setup is None
    assert any(INCLUDE_PLACEHOLDER in note for note in unknown.notes)


def test_evalita_writes_its_include_folder_for_sample_and_local_data_only() -> None:
    assert recipe_include("hub", None) is None
    sample = recipe_include("sample", None)
    assert sample is not None and sample.path == "evalita-include/lm_eval_data_override"
    assert shlex.split(sample.setup)[:2] == ["python", "-c"]
    assert 'prepare_include_path("sample", Path("evalita-include"))' in sample.setup
    subset = recipe_include("local:my-data", ["evalita-mp_wic_prompt-1"])
    assert subset is not None and 'tasks=["evalita-mp_wic_prompt-1"]' in subset.setup


class _Request:
    def __init__(self, args: tuple, task: str) -> None:
        self.args = args
        self.task_name = task


def test_the_cost_splits_the_harness_call_by_the_trackers_stamps_and_counts_gpu_hours() -> None:
    from backend.progress import ProgressTracker
    from backend.recipe import run_cost
    from backend.runner import TokenCounter

    now = [100.0]
    tracker = ProgressTracker(interval_s=1e9, clock=lambda: now[0])
    setup_start = 100.0
    now[0] = 103.0  # tasks loaded, requests built
    tracker.start_phase("loglikelihood", [_Request(("ctx", " a"), "t1"), _Request(("ctx", " b"), "t1")])
    now[0] = 113.0
    tracker.start_phase("generate_until", [_Request(("ctx", {"max_gen_toks": 8}), "t2")])  # closes the first
    now[0] = 133.0
    tracker.close()
    evaluate_end = 140.0  # metrics and bootstrap after the last model call
    tokens = TokenCounter(forward_tokens=500, generated_tokens=16, generation_prompt_tokens=40)
    cost = run_cost(
        tracker,
        tokens,
        {"cb_generated_tokens": 4},
        setup_start=setup_start,
        evaluate_end=evaluate_end,
        duration_s=7200.0,
        gpus=1,
    )
    assert (cost.setup_s, cost.loglikelihood_s, cost.generation_s, cost.postprocess_s) == (
        3.0,
        10.0,
        20.0,
        7.0,
    )
    assert (cost.loglikelihood_requests, cost.generation_requests) == (2, 1)
    assert (cost.loglikelihood_tokens, cost.generation_prompt_tokens, cost.generated_tokens) == (500, 40, 20)
    assert cost.tokens == 560 and cost.gpus == 1 and cost.gpu_hours == 2.0
    on_cpu = run_cost(
        tracker,
        TokenCounter(),
        {},
        setup_start=setup_start,
        evaluate_end=evaluate_end,
        duration_s=60.0,
        gpus=0,
    )
    assert on_cpu.gpu_hours is None and on_cpu.tokens is None
