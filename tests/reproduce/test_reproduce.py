"""``python -m backend reproduce``: a slice of a published run, run again here, compared prompt by prompt."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from backend.config import ExitCode
from backend.tracks.evalita.reproduce import ReproduceError, data_source, read_run, slice_limit
from eval_queue.storage import LocalStorage, Stores
from leaderboard.tracks.evalita.schema import ResultsFile
from tests.backend.conftest import REPO_ROOT, Deployment
from tests.contents.store import evalita_file
from tests.long_context.store import write_long_context_runs
from tests.reproduce.conftest import LIMIT, PublishedRun
from tests.support import preforked


def _reproduce(
    run: PublishedRun, tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp_path / "reproduction.json"
    done = preforked.run_module(
        "backend",
        ["reproduce", run.results_path, "--json", str(out), *args],
        env=run.deployment.env,
        cwd=REPO_ROOT,
        timeout=300,
    )
    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    return done, json.loads(out.read_text())


@pytest.mark.slow
def test_the_tiny_models_run_reproduces_on_cpu_with_identical_predictions_and_no_difference(
    published_run: PublishedRun, tmp_path: Path
) -> None:
    done, found = _reproduce(published_run, tmp_path, "--limit", str(LIMIT))
    prompts = found["prompts"]
    assert len(prompts) == 6 + 6 + 2 + 2
    assert found["items"] == (12 + 2) * LIMIT + 2 * 3 * LIMIT  # NER: three domains per prompt
    assert found["identical"] == found["items"]
    assert found["max_abs_difference_points"] == 0.0
    assert found["task_hashes_match"] is True and found["device"] == "cpu"
    # The slice is the whole run: lm-eval's rescoring of the recorded answers is the recorded score.
    recorded = published_run.results.tasks
    for p in prompts:
        assert p["original"] == recorded[p["task"]].prompts[p["prompt"]].score == p["reproduced"]
        if p["task"] in ("wic", "te"):
            assert p["max_loglikelihood_diff"] == 0.0
    items = found["items"]
    assert f"{items}/{items} per-sample predictions identical (100.0 %)" in done.stdout
    assert "lm-eval task hashes match" in done.stdout


@pytest.mark.slow
def test_a_smaller_slice_of_some_tasks_is_compared_on_its_own_items(
    published_run: PublishedRun, tmp_path: Path
) -> None:
    _, found = _reproduce(published_run, tmp_path, "--limit", "2", "--tasks", "te,ner")
    assert {p["task"] for p in found["prompts"]} == {"te", "ner"}
    assert found["items"] == 6 * 2 + 2 * 3 * 2 and found["identical"] == found["items"]
    assert found["max_abs_difference_points"] == 0.0
    assert found["task_hashes_match"] is None  # two of three items: not the run's hashes


@pytest.mark.slow
def test_a_changed_prediction_is_found_and_moves_the_score(
    published_run: PublishedRun, tmp_path: Path
) -> None:
    # A copy of the store whose te/p1 details say the model picked the other answer for item 0.
    copy = tmp_path / "eval-data"
    shutil.copytree(published_run.deployment.root, copy)
    details = LocalStorage(copy / "details")
    path = f"{published_run.results.run.details_path}/te_p1.jsonl"
    lines = [json.loads(line) for line in details.read(path).splitlines()]
    first = lines[0]
    assert len(first["choices"]) == 2  # TE: entailment or not
    other = 1 - first["choices"].index(first["answer"])
    first["loglikelihoods"][other] = max(first["loglikelihoods"]) + 1.0
    first["answer"] = first["choices"][other]
    details.write(path, ("\n".join(json.dumps(line) for line in lines) + "\n").encode())
    tampered = PublishedRun(
        Deployment(
            copy,
            published_run.deployment.stores,
            published_run.deployment.queue,
            {**published_run.deployment.env, "EVALITA_DATA_DIR": str(copy)},
        ),
        published_run.results_path,
        published_run.results,
    )

    _, found = _reproduce(tampered, tmp_path, "--limit", str(LIMIT), "--tasks", "te")

    te_p1 = next(p for p in found["prompts"] if p["prompt"] == "p1")
    assert te_p1["identical"] == LIMIT - 1 and te_p1["max_loglikelihood_diff"] > 0
    assert abs(te_p1["reproduced"] - te_p1["original"]) * 100 == pytest.approx(100 / LIMIT)
    assert found["max_abs_difference_points"] == pytest.approx(100 / LIMIT)
    assert all(p["identical"] == p["items"] for p in found["prompts"] if p["prompt"] != "p1")


def _stores(root: Path) -> Stores:
    return Stores(
        LocalStorage(root / "requests"), LocalStorage(root / "results"), LocalStorage(root / "details")
    )


def test_reproduce_refuses_what_it_cannot_reproduce_with_a_reason(tmp_path: Path) -> None:
    stores = _stores(tmp_path)
    with pytest.raises(ReproduceError, match="no results file"):
        read_run("org/model/results_missing.json", stores)
    [long_context, *_] = write_long_context_runs(tmp_path / "results", tmp_path / "details")
    with pytest.raises(ReproduceError, match="long-context run: reproduce runs Evalita runs"):
        read_run(long_context, stores)
    _, local_run = evalita_file("org/a")
    local_run = ResultsFile.model_validate(
        {**local_run.model_dump(), "run": {**local_run.run.model_dump(), "data": "local:my-evalita"}}
    )
    with pytest.raises(ReproduceError, match="pass --data local:DIR"):
        data_source(local_run, None)
    assert data_source(local_run, "sample") == "sample"


def test_the_slice_is_at_most_what_the_run_had() -> None:
    _, results = evalita_file("org/a")
    assert slice_limit(results, None) == 10 and slice_limit(results, 50) == 50
    limited = results.model_copy(update={"run": results.run.model_copy(update={"limit": 4})})
    assert slice_limit(limited, 50) == 4 and slice_limit(limited, 2) == 2


def test_the_command_line_names_a_missing_results_file(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "backend", "reproduce", "org/none/results_x.json"],
        cwd=REPO_ROOT,
        env={"PATH": "/usr/bin:/bin", "EVALITA_DATA_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == ExitCode.USAGE
    assert "no results file 'org/none/results_x.json'" in done.stderr
