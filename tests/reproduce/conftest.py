"""One published run of the tiny model (a subset of tasks, 3 items per prompt) for the reproduce tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from backend.config import ExitCode
from eval_queue.queue import RequestQueue
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.tracks.evalita.schema import ResultsFile
from tests.backend.conftest import Deployment, datasets_cache, tiny_model, worker_env  # noqa: F401
from tests.support.shared import built_once
from tests.support.tiny_model import TinyModel

#: MC tasks with F1 and accuracy, NER (three domains per prompt), SUM (ROUGE): every kind of scoring.
TASKS = "wic,te,ner,sum"
LIMIT = 3


@dataclass(frozen=True)
class PublishedRun:
    deployment: Deployment
    results_path: str
    results: ResultsFile


@pytest.fixture(scope="session")
def published_run(
    tmp_path_factory: pytest.TempPathFactory,
    tiny_model: TinyModel,  # noqa: F811
    datasets_cache: Path,  # noqa: F811
) -> PublishedRun:
    """The worker (``python -m backend --once``) ran the tiny model on the sample data and published it.

    Run once per test run (tests/support/shared.py): ``test_reproduce.py`` and ``test_recipe.py``
    may sit on different xdist workers; the tests only read the store (one that tampers copies it).
    """

    def publish(folder: Path) -> None:
        deployment = _deployment(folder / "eval-data", tiny_model, datasets_cache)
        done = deployment.submit_cli(tiny_model.model_id, tiny_model.revision, "--tasks", TASKS)
        assert done.returncode == 0, done.stderr
        worker = deployment.worker("--once", "--limit", str(LIMIT), "--max-gen-toks", "8", "--tasks", TASKS)
        assert worker.returncode == ExitCode.OK, worker.stderr[-3000:]

    # This worker's own tiny model and datasets cache: the model's revision is the same in every worker.
    deployment = _deployment(
        built_once(tmp_path_factory, "reproduce", publish) / "eval-data", tiny_model, datasets_cache
    )
    [request] = deployment.queue.listing().requests
    path = request.results_path
    assert path
    return PublishedRun(deployment, path, ResultsFile.from_json(deployment.stores.results.read(path), path))


def _deployment(data_dir: Path, model: TinyModel, datasets: Path) -> Deployment:
    stores = open_stores(Settings(data_dir=data_dir))
    return Deployment(
        data_dir,
        stores,
        RequestQueue(stores.requests),
        worker_env(model.cache_dir, datasets, data_dir),
    )
