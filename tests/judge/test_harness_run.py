"""End to end, offline: a judge runs through lm-evaluation-harness on the bundled sample and on a SUM run.

The tiny random model writes no JSON: every answer must be recorded as unparsed — in the
results (unparsed rate 1, figures "not enough data") and in the details (raw answer kept) —
never as a score.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from eval_queue.requests import EvalRequest, ModelType, Precision, Status, isoformat, utc_now
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from eval_queue.vocabulary import Track
from leaderboard.tracks.judge.app.tables import OVERALL, JudgeRun, TableFigure, judges_table, stat_column
from leaderboard.tracks.judge.definition import CRITERIA, RUBRIC_VERSION, JudgeMode
from leaderboard.tracks.judge.parse import ParseStatus
from leaderboard.tracks.judge.schema import GenerationsBody, JudgeDetail, JudgeResultsFile, MetaBody
from tests.backend.conftest import REPO_ROOT, Deployment, worker_env
from tests.judge.test_items import _publish_sum_run
from tests.support.tiny_model import TinyModel

pytestmark = pytest.mark.slow

LIMIT = 2
MAX_GEN = 12


def _judge(
    tiny_model: TinyModel, datasets_cache: Path, data_dir: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "backend.tracks.judge", tiny_model.model_id,
        "--revision", tiny_model.revision, "--precision", "float32",
        "--data-dir", str(data_dir), "--limit", str(LIMIT), "--max-gen-toks", str(MAX_GEN), *args,
    ]  # fmt: skip
    env = worker_env(tiny_model.cache_dir, datasets_cache, data_dir)
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900)


def _submit_judge(deployment: Deployment, tiny_model: TinyModel, target: str | None = None) -> EvalRequest:
    request = EvalRequest(
        model=tiny_model.model_id,
        revision=tiny_model.revision,
        precision=Precision.FLOAT32,
        model_type=ModelType.PRETRAINED,
        submitted_by="tests",
        submitted_time=isoformat(utc_now()),
        track=Track.JUDGE,
        judge_mode=JudgeMode.GENERATIONS if target else None,
        judge_target=target,
    )
    return deployment.queue.add(request)


def test_the_worker_runs_a_tiny_judge_on_the_sample_to_five_criteria_all_unparsed(
    deployment: Deployment, tiny_model: TinyModel
) -> None:
    request = _submit_judge(deployment, tiny_model)

    done = deployment.worker(
        "--once", "--data", "sample", "--limit", str(LIMIT), "--max-gen-toks", str(MAX_GEN)
    )

    assert done.returncode == 0, done.stderr[-3000:]
    finished = deployment.status(request)
    assert finished.status is Status.FINISHED, finished.error
    stores, path = deployment.stores, finished.results_path
    assert path is not None and path.endswith("_float32_judge.json")
    results = JudgeResultsFile.from_json(stores.results.read(path), path)
    body = results.judge
    assert isinstance(body, MetaBody) and body.mode is JudgeMode.META and body.rubric == RUBRIC_VERSION
    assert (results.model.id, results.run.data, results.run.limit) == (tiny_model.model_id, "sample", LIMIT)
    assert results.run.request_id == request.request_id
    assert list(body.criteria) == list(CRITERIA)
    for block in (*body.criteria.values(), body.overall):
        assert block.n_items == (LIMIT if block is not body.overall else LIMIT * len(CRITERIA))
        assert block.unparsed_rate == 1.0 and block.n_scored == 0
        assert block.rho is None and block.mae is None and "0 scored items" in block.not_enough_data["rho"]
    assert all(item.judge is None and item.status is not ParseStatus.PARSED for item in body.items)

    details = sorted(stores.details.list())
    assert [Path(p).name for p in details] == sorted(f"{c.value}.jsonl" for c in CRITERIA)
    assert all(p.startswith(results.run.details_path + "/") for p in details)
    lines = [
        JudgeDetail.model_validate_json(line)
        for line in stores.details.read(details[0]).decode().splitlines()
    ]
    assert len(lines) == LIMIT and all(line.score is None and line.human is not None for line in lines)

    table = judges_table([JudgeRun(path, results)], include_noncomparable=True)
    assert table.loc[0, stat_column(OVERALL, TableFigure.UNPARSED)] == 1.0
    assert table.loc[0, stat_column(OVERALL, TableFigure.RHO)] is pd.NA


def test_the_tiny_judge_scores_a_published_sum_run_as_unparsed(
    tiny_model: TinyModel, datasets_cache: Path, tmp_path: Path
) -> None:
    stores = open_stores(Settings(data_dir=tmp_path))
    target = _publish_sum_run(stores)

    done = _judge(tiny_model, datasets_cache, tmp_path, "--mode", "generations", "--target", target)

    assert done.returncode == 0, done.stderr[-3000:]
    path = done.stdout.strip()
    assert "_float32_judge-gen-" in path
    results = JudgeResultsFile.from_json(stores.results.read(path), path)
    body = results.judge
    assert isinstance(body, GenerationsBody) and body.task == "sum"
    assert (body.target.model, body.target.results_path) == ("org/model", target)
    assert results.run.data == "sample"  # the judged run's data
    assert list(body.criteria) == list(CRITERIA)
    assert all(
        b.mean is None and b.unparsed_rate == 1.0 and b.n_items == LIMIT for b in body.criteria.values()
    )
    assert all(item.score is None for item in body.items)


def test_a_bad_annotated_set_stops_before_any_model_is_loaded(
    tiny_model: TinyModel, datasets_cache: Path, tmp_path: Path
) -> None:
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "annotated.jsonl").write_text('{"doc_id": "d"}\n', encoding="utf-8")

    done = _judge(tiny_model, datasets_cache, tmp_path / "store", "--data", f"local:{tmp_path / 'set'}")

    assert done.returncode == 2
    assert "annotated set" in done.stderr and "line 1" in done.stderr
    assert "loading" not in done.stderr
    assert not (tmp_path / "store" / "results").exists() or not any(
        (tmp_path / "store" / "results").rglob("*.json")
    )


def test_a_judge_of_a_run_that_is_not_in_the_store_fails_with_a_clear_reason(
    deployment: Deployment, tiny_model: TinyModel
) -> None:
    request = _submit_judge(
        deployment, tiny_model, target="org/none/results_2026-01-01T00-00-00Z_bfloat16_0shot.json"
    )

    done = deployment.worker("--once", "--data", "sample")

    assert done.returncode == 1
    failed = deployment.status(request)
    assert failed.status is Status.FAILED
    assert failed.error is not None and failed.error.startswith("reading what to judge")
    assert "is not in the results store" in failed.error
    assert deployment.stores.results.list() == []
