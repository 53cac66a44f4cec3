"""The model page shows a run's recipe (a copyable script) and what it cost, from its run block."""

from __future__ import annotations

from pathlib import Path

from eval_queue.storage import LocalStorage
from eval_queue.vocabulary import RunRef
from leaderboard.core.schema import Recipe, RunCost
from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.evalita.app.records import load_results
from tests.contents.store import evalita_file

RECIPE = Recipe(
    lm_eval_args=["--model", "hf", "--model_args", "pretrained=org/a,revision=aaa", "--tasks", "t1,t2"],
    setup="python -c 'prepare()'",
    harness_tasks=["t1", "t2"],
    task_hashes={"t1": "h1", "t2": "h2"},
    notes=["the worker bootstrapped each stderr with 1,000 draws"],
)


def _board(tmp_path: Path, **run_fields: object) -> tuple[views.Board, str]:
    store = LocalStorage(tmp_path / "results")
    path, results = evalita_file("org/a")
    results = results.model_copy(update={"run": results.run.model_copy(update=run_fields)})
    store.write(path, results.to_json())
    return views.Board(load_results(store)), path


def test_the_recipe_block_is_the_setup_the_command_the_notes_and_the_reproduce_line(tmp_path: Path) -> None:
    board, path = _board(tmp_path, recipe=RECIPE, data="sample")
    run = RunRef("org/a", "a" * 40, "bfloat16")
    script = views.model_recipe(board, run, 0)
    lines = script.splitlines()
    assert lines[0] == f"# org/a, 0-shot: how to run it again ({path})"
    assert "python -c 'prepare()'" in lines and RECIPE.command in lines
    assert RECIPE.command.startswith("lm_eval run --model hf --model_args pretrained=org/a,revision=aaa")
    assert "# Note: the worker bootstrapped each stderr with 1,000 draws" in lines
    assert lines[-1] == f"python -m backend reproduce {path} --limit 10"
    assert views.model_recipe(board, run, 5) == "# No 5-shot run of org/a."


def test_a_run_recorded_before_recipes_says_so_with_what_it_recorded(tmp_path: Path) -> None:
    board, _ = _board(tmp_path, model_args="pretrained=org/a,dtype=bfloat16", harness="lm-eval 0.4.13")
    script = views.model_recipe(board, RunRef("org/a", "a" * 40, "bfloat16"), 0)
    assert "predates recorded recipes" in script and "pretrained=org/a,dtype=bfloat16" in script


def test_the_cost_rows_show_wall_time_per_phase_tokens_gpu_hours_and_versions(tmp_path: Path) -> None:
    cost = RunCost(
        setup_s=2.0,
        loglikelihood_s=1234.5,
        generation_s=3000.25,
        postprocess_s=60.0,
        loglikelihood_tokens=1_000_000,
        generation_prompt_tokens=200_000,
        generated_tokens=50_000,
        gpus=1,
        gpu_hours=1.25,
    )
    board, _ = _board(
        tmp_path, cost=cost, model_load_s=30.0, versions={"lm_eval": "0.4.13", "torch": "2.13.0"}
    )
    shown = views.run_metadata_view(board, RunRef("org/a", "a" * 40, "bfloat16")).set_index("Field")["0-shot"]
    assert shown["Wall time: model load (s)"] == "30.0"
    assert shown["Wall time: log-likelihood (s)"] == "1,234.5"
    assert shown["Wall time: generation (s)"] == "3,000.2"
    assert shown["Wall time: post-processing (s)"] == "60.0"
    assert shown["Tokens processed"] == "1,250,000" and shown["Tokens generated"] == "50,000"
    assert shown["GPU-hours"] == "1.250 on 1 GPU(s)"
    assert shown["Versions"] == "lm_eval 0.4.13, torch 2.13.0"
