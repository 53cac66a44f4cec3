"""The model page's "how to run it again" block and "what it cost" rows, from a run's ``run`` block.

Pure text and values (no gradio): :func:`recipe_script` is the shell script the page offers
to copy — the setup line that writes the include folder (sample or local data), the plain
``lm_eval`` command (``run.recipe``), the notes on where a plain run differs, and the
project's own ``reproduce`` command; :data:`COST_FIELDS` are the cost rows of the page's
"How it was run" table (``run.cost``: wall time per phase, tokens — also in / out / reasoning by
the run's tokenizer —, GPU-hours, the GPUs' energy or why it was not measured, Wh per 1,000
scored items) and the library versions.
"""

from __future__ import annotations

from collections.abc import Callable

from leaderboard.core.schema import RunCost, RunInfo

#: What ``reproduce`` re-runs by default (items per prompt).
REPRODUCE_LIMIT = 10


def recipe_script(info: RunInfo | None, results_path: str | None, model: str, setting: str) -> str:
    """The copyable script for one setting of a model (comment lines say what each line is)."""
    if info is None:
        return f"# No {setting} run of {model}."
    recipe = info.recipe
    lines = [f"# {model}, {setting}: how to run it again ({results_path or 'results file unknown'})"]
    if recipe is None:
        lines.append("# This run's results file predates recorded recipes; what it recorded:")
        lines.append(f"#   model_args: {info.model_args or 'unknown'}; harness: {info.harness or 'unknown'}")
        return "\n".join(lines)
    if recipe.setup:
        lines += [
            f"# 1. Write the include folder for the {info.data} data (this project on PYTHONPATH):",
            recipe.setup,
            "# 2. The plain lm-eval command:",
        ]
    else:
        lines.append("# The plain lm-eval command (official data from the Hugging Face Hub):")
    lines.append(recipe.command)
    lines += [f"# Note: {note}" for note in recipe.notes]
    if results_path:
        lines += [
            "# Or, from this project, re-run a slice and compare it with this run's answers:",
            f"python -m backend reproduce {results_path} --limit {REPRODUCE_LIMIT}",
        ]
    return "\n".join(lines)


def _seconds(value: float | None) -> str | None:
    return None if value is None else f"{value:,.1f}"


def _count(value: int | None) -> str | None:
    return None if value is None else f"{value:,}"


def _cost(pick: Callable[[RunCost], object]) -> Callable[[RunInfo], object]:
    return lambda info: pick(info.cost) if info.cost is not None else None


def _gpu_hours(cost: RunCost) -> str:
    return "0 (CPU)" if not cost.gpus else f"{cost.gpu_hours:.3f} on {cost.gpus} GPU(s)"


def _tokens(cost: RunCost) -> str | None:
    if cost.input_tokens is None:
        return None
    return f"{cost.input_tokens:,} / {cost.output_tokens or 0:,} / {cost.reasoning_tokens or 0:,}"


def _wh_per_thousand(cost: RunCost) -> str | None:
    value = cost.wh_per_thousand_items
    if value is None:
        return "not measured" if cost.energy is not None and not cost.energy.measured else None
    return f"{value:,.3f} ({cost.scored_items:,} items)"


def _versions(info: RunInfo) -> str | None:
    return ", ".join(f"{name} {version}" for name, version in info.versions.items()) or None


#: The cost rows of the "How it was run" table: label → its value from the run block (None: "—").
COST_FIELDS: tuple[tuple[str, Callable[[RunInfo], object]], ...] = (
    ("Wall time: model load (s)", lambda info: _seconds(info.model_load_s)),
    ("Wall time: tasks and requests (s)", _cost(lambda c: _seconds(c.setup_s))),
    ("Wall time: log-likelihood (s)", _cost(lambda c: _seconds(c.loglikelihood_s))),
    ("Wall time: generation (s)", _cost(lambda c: _seconds(c.generation_s))),
    ("Wall time: post-processing (s)", _cost(lambda c: _seconds(c.postprocess_s))),
    ("Tokens processed", _cost(lambda c: _count(c.tokens))),
    ("Tokens generated", _cost(lambda c: _count(c.generated_tokens))),
    ("Tokens in / out / reasoning (the run's tokenizer)", _cost(_tokens)),
    ("GPU-hours", _cost(_gpu_hours)),
    (
        "Energy, GPUs (NVML counter, idle subtracted)",
        lambda info: info.cost.energy_text if info.cost else None,
    ),
    ("Energy per 1,000 scored items (Wh)", _cost(_wh_per_thousand)),
    ("Versions", _versions),
)
