"""The runner computes what the plain ``lm_eval`` command line computes.

Same tiny model (a local folder), same sample data (the data layer's include path),
same options: the runner's per-prompt scores — and its generated answers — must equal
those of ``python -m lm_eval --model hf … --include_path …``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.tracks.evalita.data import prepare_include_path
from leaderboard.tracks.evalita.definition import harness_index
from tests.backend.conftest import REPO_ROOT, worker_env
from tests.support import preforked
from tests.support.tiny_model import TinyModel

pytestmark = pytest.mark.slow

# Multiple choice with accuracy and with F1, and two generative tasks.
TASKS = (
    "evalita-mp_te_prompt-1",
    "evalita-mp_sa_prompt-3",
    "evalita-mp_ls_prompt-1",
    "evalita-mp_re_prompt-2",
)
LIMIT = 3
BATCH = 4
MAX_GEN = 8


def _cli_run(
    tiny_model: TinyModel, include_path: Path, out: Path, datasets_cache: Path
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    arguments = [
        "--model", "hf",
        "--model_args", f"pretrained={tiny_model.folder},dtype=float32",
        "--tasks", ",".join(TASKS),
        "--include_path", str(include_path),
        "--num_fewshot", "0",
        "--limit", str(LIMIT),
        "--batch_size", str(BATCH),
        "--device", "cpu",
        "--gen_kwargs", f"max_gen_toks={MAX_GEN}",
        "--log_samples",
        "--output_path", str(out),
    ]  # fmt: skip
    env = worker_env(tiny_model.cache_dir, datasets_cache, out / "unused")
    # `python -m lm_eval …` in a process of its own; forked from an interpreter that imported
    # lm-eval and nothing of this repository (tests/support/preforked.py): lm-eval as shipped.
    done = preforked.run_module("lm_eval", arguments, env=env, cwd=REPO_ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    [results_file] = out.rglob("results_*.json")
    samples = {
        task: [
            json.loads(line) for line in next(out.rglob(f"samples_{task}_*.jsonl")).read_text().splitlines()
        ]
        for task in TASKS
    }
    return json.loads(results_file.read_text())["results"], samples


def _outputs(samples: list[dict[str, Any]]) -> list[Any]:
    """Per document: the generated text, or the log-likelihood of each option.

    (The command line writes samples through JSON, tuples as lists of strings.)
    """
    outputs: list[Any] = []
    for sample in sorted(samples, key=lambda s: s["doc_id"]):
        responses = sample["filtered_resps"]
        if isinstance(responses[0], str):
            outputs.append(responses[0])
        else:
            outputs.append([float(r[0]) for r in responses])
    return outputs


def test_runner_scores_equal_the_lm_eval_command_line(
    tiny_model: TinyModel, tmp_path: Path, datasets_cache: Path
) -> None:
    from backend.runner import ModelRef, RunOptions, run_harness

    override = prepare_include_path("sample", tmp_path / "work")
    options = RunOptions(
        device="cpu",
        batch_size=BATCH,
        bootstrap_iters=0,
        limit=LIMIT,
        max_gen_toks=MAX_GEN,
        progress_interval_s=60,
    )
    ours = run_harness(
        ModelRef(str(tiny_model.folder), "main", "float32"),
        TASKS,
        0,
        options,
        task_manager_kwargs=override.task_manager_kwargs(),
    )
    theirs, their_samples = _cli_run(tiny_model, override.include_path, tmp_path / "cli", datasets_cache)

    index = harness_index()
    checked = 0
    for name in TASKS:
        ref = index[name]
        key = f"{ref.task.metric},none"
        assert ours.results[name][key] == pytest.approx(theirs[name][key], abs=1e-9), name
        assert ours.n_samples[name]["effective"] == LIMIT
        assert _outputs(ours.samples[name]) == _outputs(their_samples[name]), name
        checked += 1
    assert checked == len(TASKS)
