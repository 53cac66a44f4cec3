"""What the run block records of how to run a run again, and of what it cost.

:func:`lm_eval_recipe` writes the equivalent plain ``lm_eval`` command line of one harness
call (:class:`~leaderboard.core.schema.Recipe`): the same model class and arguments, tasks,
include folder, few-shot count, limit, batch size, device, seeds, chat template and answer
cap; where a plain ``lm_eval`` run cannot do exactly what the worker did, a note says so
(its bootstrap draws, the project's own model classes).  :func:`task_hashes` are lm-eval's
per-task hashes (what ``EvaluationTracker`` writes into its own results files), computed from
the same per-sample hashes, so a re-run on other data or prompts shows at a glance.

:func:`run_cost` turns the progress tracker's stamps and the token counters into
:class:`~leaderboard.core.schema.RunCost`: wall time per phase as ``bench/bench_speed.py``
splits it, tokens, GPU-hours.

Imported by :mod:`backend.runner` only (lm-eval's hash function is imported when used).
"""

from __future__ import annotations

import functools
import subprocess
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from leaderboard.core.schema import Recipe, RunCost, RunEnergy

if TYPE_CHECKING:
    from backend.options import RecipeInclude, RunOptions
    from backend.progress import ProgressTracker
    from backend.runner import TokenCounter
    from backend.tokens import TokenTally

#: The project's entry in ``run.versions``.
PROJECT = "evalita-llm-leaderboard"
_ROOT = Path(__file__).resolve().parent.parent
#: The include path a recipe names when the track's runner gave no way to write it.
INCLUDE_PLACEHOLDER = "RUN_TASK_FOLDER"
#: lm-eval's own bootstrap draws when run from its command line (it has no flag to change them).
LM_EVAL_CLI_BOOTSTRAP = 100_000
#: Model classes this project registers in lm-eval, and the stock class a plain run uses instead.
PROJECT_MODEL_CLASSES = {
    "hf-fast": (
        "hf",
        "the worker ran the fast path (hf-fast), which computes the same requests as hf "
        "(identical per-sample predictions on CPU in float32); a plain lm_eval runs hf",
    ),
    "hf-book-cache": (
        "hf",
        "the worker ran the book-cache model (hf-book-cache: each book's prefix "
        "computed once); a plain lm_eval runs hf, which recomputes it for every question",
    ),
}


@functools.cache
def project_version() -> str:
    """``0.1.0+g<commit>`` (``-dirty`` with local changes); the version alone outside a git checkout."""
    version = tomllib.loads((_ROOT / "pyproject.toml").read_text())["project"]["version"]
    try:
        commit = subprocess.run(
            ["git", "-C", str(_ROOT), "describe", "--always", "--dirty", "--abbrev=12", "--exclude=*"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return str(version)
    return f"{version}+g{commit}" if commit else str(version)


def task_hashes(samples: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, str]:
    """lm-eval's hash of each task: of its samples' document, prompt and target hashes, in order.

    The same computation as ``lm_eval.loggers.EvaluationTracker.save_results_aggregated``.
    """
    from lm_eval.utils import hash_string

    hashes = {}
    for task, records in samples.items():
        parts = [
            f"{r.get('doc_hash', '')}{r.get('prompt_hash', '')}{r.get('target_hash', '')}" for r in records
        ]
        hashes[str(task)] = hash_string("".join(parts))
    return dict(sorted(hashes.items()))


def lm_eval_recipe(
    model_class: str,
    model_args: str,
    task_names: Sequence[str],
    num_fewshot: int,
    options: RunOptions,
    batch_size: str | int,
    device: str,
    *,
    seeds: Mapping[str, int],
    include: RecipeInclude | None,
    task_hashes: Mapping[str, str],
    uses_include: bool = False,
) -> Recipe:
    """The plain ``lm_eval run`` command of one harness call, and the notes on where it differs.

    ``uses_include``: the call read its tasks from an include folder; ``include`` says how the
    command names it and the line that writes it.  A track that gives none (its runner writes
    a folder of its own for each run) gets a placeholder path and a note saying so.
    """
    stock, class_note = PROJECT_MODEL_CLASSES.get(model_class, (model_class, None))
    args = ["--model", stock, "--model_args", model_args, "--tasks", ",".join(task_names)]
    args += ["--num_fewshot", str(num_fewshot), "--batch_size", str(batch_size)]
    if str(batch_size).startswith("auto"):
        args += ["--max_batch_size", str(options.max_batch_size)]
    args += ["--device", device]
    args += ["--seed", ",".join(str(seeds[k]) for k in ("random", "numpy", "torch", "fewshot"))]
    if options.limit is not None:
        args += ["--limit", str(options.limit)]
    if options.max_gen_toks is not None:
        args += ["--gen_kwargs", f"max_gen_toks={options.max_gen_toks}"]
    if options.apply_chat_template:
        args += ["--apply_chat_template", "--fewshot_as_multiturn"]
    notes = []
    if include is not None:
        args += ["--include_path", include.path]
    elif uses_include:
        args += ["--include_path", INCLUDE_PLACEHOLDER]
        notes.append(
            f"{INCLUDE_PLACEHOLDER} stands for the task folder the worker wrote for this run (its "
            "track's task configs and data, not kept): the track's runner writes it"
        )
    if options.bootstrap_iters != LM_EVAL_CLI_BOOTSTRAP:
        notes.append(
            f"the worker bootstrapped each stderr with {options.bootstrap_iters:,} draws; the lm_eval "
            f"command line always uses {LM_EVAL_CLI_BOOTSTRAP:,} (scores are the same, stderrs differ)"
        )
    if class_note:
        notes.append(class_note)
    args += ["--log_samples", "--output_path", "lm-eval-output"]
    return Recipe(
        lm_eval_args=args,
        setup=include.setup if include is not None else None,
        harness_tasks=list(task_names),
        task_hashes=dict(task_hashes),
        notes=notes,
    )


def run_cost(
    tracker: ProgressTracker,
    tokens: TokenCounter,
    fastpath: Mapping[str, Any],
    *,
    setup_start: float,
    evaluate_end: float,
    duration_s: float,
    gpus: int,
    tally: TokenTally | None = None,
    energy: RunEnergy | None = None,
    scored_items: int | None = None,
) -> RunCost:
    """Wall time per phase (the tracker's clock), tokens through the model, GPU-hours.

    The fast path counts its own tokens (``fastpath``: its prefix-tree forwards and
    continuous-batching generation); the reference path's are counted on its model calls.
    """
    phases = tracker.phase_seconds
    requests = tracker.phase_requests
    first = tracker.first_phase_start
    last = tracker.last_phase_end
    loglikelihood = sum(phases.get(k, 0.0) for k in ("loglikelihood", "loglikelihood_rolling"))
    loglikelihood_tokens = tokens.forward_tokens + int(fastpath.get("tree_padded_tokens", 0))
    prompt_tokens = tokens.generation_prompt_tokens + int(fastpath.get("cb_prompt_tokens", 0))
    generated = tokens.generated_tokens + int(fastpath.get("cb_generated_tokens", 0))
    return RunCost(
        setup_s=round((first if first is not None else evaluate_end) - setup_start, 3),
        loglikelihood_s=round(loglikelihood, 3),
        generation_s=round(phases.get("generate_until", 0.0), 3),
        postprocess_s=round(evaluate_end - (last if last is not None else evaluate_end), 3),
        loglikelihood_requests=sum(requests.get(k, 0) for k in ("loglikelihood", "loglikelihood_rolling")),
        generation_requests=requests.get("generate_until", 0),
        loglikelihood_tokens=loglikelihood_tokens or None,
        generation_prompt_tokens=prompt_tokens or None,
        generated_tokens=generated or None,
        gpus=gpus,
        gpu_hours=round(duration_s * gpus / 3600.0, 6) if gpus else None,
        input_tokens=tally.totals[0] if tally is not None else None,
        output_tokens=tally.totals[1] if tally is not None else None,
        reasoning_tokens=tally.totals[2] if tally is not None else None,
        task_tokens=tally.per_task() if tally is not None else None,
        energy=energy,
        scored_items=scored_items,
    )
