"""The worker's publish step puts the run's rows into the contents table; a failure there never fails the run."""

from __future__ import annotations

import logging
from pathlib import Path

import datasets
import pytest

from backend.config import Outcome
from eval_queue.errors import StorageError
from eval_queue.requests import Status
from eval_queue.storage import Stores
from leaderboard.core.contents import CONTENTS_PATH
from leaderboard.core.contents_io import read_contents
from leaderboard.tracks.evalita.definition import SUITE, TaskKind, all_harness_tasks
from leaderboard.tracks.evalita.metrics import score_task
from leaderboard.tracks.evalita.schema import ResultsFile
from tests.publish.deployment import config, local_deployment
from tests.publish.faulty_store import FaultyStorage
from tests.reproduce.conftest import LIMIT as REPRODUCE_LIMIT
from tests.reproduce.conftest import TASKS as REPRODUCE_TASKS
from tests.reproduce.conftest import PublishedRun


def test_a_published_run_has_its_row_in_the_contents_table(tmp_path: Path) -> None:
    local = local_deployment(tmp_path)
    (rid,) = local.submit(1)
    assert local.run_round(config()) is Outcome.FINISHED
    path = local.peek(rid).results_path
    table = read_contents(local.open_stores().results)
    assert table is not None and table.column("results_path").to_pylist() == [path]


def test_an_unusable_contents_file_is_logged_and_the_run_still_finishes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    local = local_deployment(tmp_path)
    local.open_stores().results.write(CONTENTS_PATH, b"garbage")
    (rid,) = local.submit(1)
    with caplog.at_level(logging.WARNING):
        assert local.run_round(config()) is Outcome.FINISHED
    assert local.peek(rid).status is Status.FINISHED
    assert "the contents table was not updated" in caplog.text and "rebuild-contents" in caplog.text
    assert local.open_stores().results.read(CONTENTS_PATH) == b"garbage"  # never overwritten


def test_a_store_refusing_the_contents_file_never_fails_the_run(tmp_path: Path) -> None:
    local = local_deployment(tmp_path)
    (rid,) = local.submit(1)

    class NoContents(FaultyStorage):
        def create(self, path, data, *, message=""):  # type: ignore[no-untyped-def]
            if path == CONTENTS_PATH:
                raise StorageError("injected: 403 on contents.parquet")
            return super().create(path, data, message=message)

    stores = local.open_stores()
    stores = Stores(stores.requests, NoContents(stores.results, local.fault, "results"), stores.details)
    assert local.run_round(config(), stores=stores) is Outcome.FINISHED
    assert local.peek(rid).status is Status.FINISHED


@pytest.mark.slow
def test_after_a_worker_publishes_load_dataset_returns_its_row_with_the_cps_of_its_json(
    published_run: PublishedRun, tmp_path: Path
) -> None:
    # The reproduce tests' run, made once per test run (tests/reproduce/conftest.py): the tiny model
    # submitted for four tasks with the command line, published by ``python -m backend --once``.
    deployment = published_run.deployment
    [request] = deployment.queue.listing().requests
    assert request.status is Status.FINISHED and request.results_path == published_run.results_path
    results = ResultsFile.from_json(
        deployment.stores.results.read(request.results_path), request.results_path
    )

    table = datasets.load_dataset(
        "parquet",
        data_files=str(deployment.root / "results" / CONTENTS_PATH),
        split="train",
        cache_dir=str(tmp_path / "datasets-cache"),
    )
    [row] = table.to_list()
    assert row["results_path"] == request.results_path and row["variant"] == REPRODUCE_TASKS.replace(",", "-")
    checked = 0
    for task in SUITE:
        if task.id not in results.tasks:
            assert row[f"{task.id}_cps"] is None
            continue
        scores = {p: s.score for p, s in results.tasks[task.id].prompts.items()}
        assert row[f"{task.id}_cps"] == score_task(task, scores).cps
        checked += 1
    assert checked == len(REPRODUCE_TASKS.split(",")) and row["avg_cps"] is None  # a subset: no overall score
    # What it cost and how to run it again, as the run measured and recorded them.
    run = results.run
    assert run.cost is not None and run.recipe is not None
    assert row["loglikelihood_s"] == run.cost.loglikelihood_s > 0
    assert row["generation_s"] == run.cost.generation_s > 0
    assert row["tokens"] == run.cost.tokens > 0 and row["gpus"] == 0 and row["gpu_hours"] is None
    assert row["lm_eval_command"] == run.recipe.command and row["lm_eval_version"] == "0.4.13"
    generative = [t for t in SUITE if t.id in results.tasks and t.kind is TaskKind.GENERATIVE]
    assert run.limit == REPRODUCE_LIMIT
    # NER: one harness task per domain per prompt.
    assert run.cost.generation_requests == len(all_harness_tasks(generative)) * REPRODUCE_LIMIT
