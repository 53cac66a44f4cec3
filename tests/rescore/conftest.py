"""A real run of the tiny random model, published by the real worker, for the rescore tests.

The worker runs once per test run (``python -m backend --once`` on the bundled sample, 2 items
per prompt, answers capped at 8 tokens, no bootstrap): the run the worker's end-to-end test checks
(``suite_run``, tests/backend/conftest.py); each test gets its own copy of its store.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from eval_queue.settings import Settings
from eval_queue.storage import Stores, open_stores
from tests.backend.conftest import (  # noqa: F401  (session fixtures used here)
    REPO_ROOT,
    SUITE_RUN_OPTIONS,
    SuiteRun,
    datasets_cache,
    suite_run,
    tiny_model,
    worker_env,
)
from tests.support.entry_point import run_main
from tests.support.tiny_model import TinyModel

FAST = SUITE_RUN_OPTIONS


@dataclass
class RealRun:
    """A copy of the store holding one published run: its results path and how to run commands."""

    data_dir: Path
    stores: Stores
    results_path: str
    env: dict[str, str]

    @property
    def results_file(self) -> Path:
        return self.data_dir / "results" / self.results_path

    def details_folder(self) -> Path:
        import json

        return self.data_dir / "details" / json.loads(self.results_file.read_text())["run"]["details_path"]

    def rescore(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``python -m backend rescore ARGS``'s ``main`` in this process (an interpreter start and its
        imports less per call; the same arguments, environment, output and exit code)."""
        from backend.__main__ import main

        return run_main(main, ["rescore", *args], self.env)

    def rescore_process(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``python -m backend rescore ARGS`` as a maintainer types it."""
        return subprocess.run(
            [sys.executable, "-m", "backend", "rescore", *args],
            cwd=REPO_ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )


@pytest.fixture(scope="session")
def rescore_model(tiny_model: TinyModel) -> TinyModel:  # noqa: F811
    return tiny_model


@pytest.fixture(scope="session")
def rescore_datasets(datasets_cache: Path) -> Path:  # noqa: F811
    return datasets_cache


@pytest.fixture(scope="session")
def published_store(suite_run: SuiteRun) -> Path:  # noqa: F811
    """The data dir of a store where the worker published one zero-shot run of the tiny model (read only)."""
    assert suite_run.worker.returncode == 0, suite_run.worker.stderr[-3000:]
    return suite_run.deployment.root


@pytest.fixture
def real_run(
    published_store: Path, tmp_path: Path, rescore_model: TinyModel, rescore_datasets: Path
) -> RealRun:
    data_dir = tmp_path / "eval-data"
    shutil.copytree(published_store, data_dir)
    stores = open_stores(Settings(data_dir=data_dir))
    [path] = [p for p in stores.results.list() if p.endswith(".json")]
    return RealRun(data_dir, stores, path, worker_env(rescore_model.cache_dir, rescore_datasets, data_dir))
