"""A run's recipe is a plain ``lm_eval`` command that runs the same documents, prompts and targets again."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.tracks.evalita.schema import parse_details
from tests.backend.conftest import REPO_ROOT
from tests.reproduce.conftest import LIMIT, PublishedRun
from tests.support import preforked

HARNESS_TASK = "evalita-mp_te_prompt-1"  # one prompt of the recipe's tasks: no bootstrapped F1, seconds


def _here(command: list[str]) -> list[str]:
    """A recipe's ``python …`` line with this environment's interpreter."""
    assert command[0] == "python"
    return [sys.executable, *command[1:]]


@pytest.mark.slow
def test_the_recipes_lm_eval_command_runs_the_same_items_with_the_same_answers(
    published_run: PublishedRun, tmp_path: Path
) -> None:
    recipe = published_run.results.run.recipe
    assert recipe is not None and recipe.setup is not None
    assert HARNESS_TASK in recipe.harness_tasks and len(recipe.task_hashes) == len(recipe.harness_tasks)
    args = list(recipe.lm_eval_args)
    args[args.index("--tasks") + 1] = HARNESS_TASK
    assert args[args.index("--limit") + 1] == str(LIMIT)
    env = {**published_run.deployment.env, "PYTHONPATH": str(REPO_ROOT)}
    setup = subprocess.run(
        _here(shlex.split(recipe.setup)), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert setup.returncode == 0, setup.stderr[-3000:]
    # The recipe's `lm_eval run …` as `python -m lm_eval run …`, forked from an
    # interpreter that imported lm-eval and nothing of this repository (tests/support/preforked.py).
    done = preforked.run_module("lm_eval", ["run", *args], env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]

    [results_file] = (tmp_path / "lm-eval-output").rglob("results_*.json")
    assert json.loads(results_file.read_text())["task_hashes"] == {
        HARNESS_TASK: recipe.task_hashes[HARNESS_TASK]
    }
    [samples_file] = (tmp_path / "lm-eval-output").rglob(f"samples_{HARNESS_TASK}_*.jsonl")
    samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
    folder = published_run.results.run.details_path
    details = parse_details(published_run.deployment.stores.details.read(f"{folder}/te_p1.jsonl"), "te_p1")
    assert len(samples) == len(details) == LIMIT
    for sample, record in zip(sorted(samples, key=lambda s: s["doc_id"]), details, strict=True):
        loglikelihoods = [float(resp[0]) for resp in sample["filtered_resps"]]
        assert loglikelihoods == pytest.approx(record.loglikelihoods, abs=1e-4)
        assert max(range(len(loglikelihoods)), key=loglikelihoods.__getitem__) == record.choices.index(
            record.answer
        )
