"""A real run of the tiny random model, published by the real worker, for the rescore tests.

The worker runs once per session (``python -m backend --once`` on the bundled sample, 2 items
per prompt, answers capped at 8 tokens); each test gets its own copy of the store.
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
from tests.backend.conftest import REPO_ROOT, worker_env
from tests.support.tiny_model import TinyModel, install_tiny_model

FAST = ("--limit", "2", "--max-gen-toks", "8", "--bootstrap-iters", "0")


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
        return subprocess.run(
            [sys.executable, "-m", "backend", "rescore", *args],
            cwd=REPO_ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )


@pytest.fixture(scope="session")
def rescore_model(tmp_path_factory: pytest.TempPathFactory) -> TinyModel:
    return install_tiny_model(tmp_path_factory.mktemp("rescore-model"))


@pytest.fixture(scope="session")
def rescore_datasets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rescore-datasets")


@pytest.fixture(scope="session")
def published_store(
    tmp_path_factory: pytest.TempPathFactory, rescore_model: TinyModel, rescore_datasets: Path
) -> Path:
    """The data dir of a store where the worker published one zero-shot run of the tiny model."""
    data_dir = tmp_path_factory.mktemp("rescore-store") / "eval-data"
    env = worker_env(rescore_model.cache_dir, rescore_datasets, data_dir)

    def run(*args: str) -> None:
        done = subprocess.run(
            [sys.executable, *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-3000:]

    run("-m", "eval_queue", "submit", rescore_model.model_id, "--revision", rescore_model.revision)
    run("-m", "backend", "--once", *FAST)
    return data_dir


@pytest.fixture
def real_run(
    published_store: Path, tmp_path: Path, rescore_model: TinyModel, rescore_datasets: Path
) -> RealRun:
    data_dir = tmp_path / "eval-data"
    shutil.copytree(published_store, data_dir)
    stores = open_stores(Settings(data_dir=data_dir))
    [path] = [p for p in stores.results.list() if p.endswith(".json")]
    return RealRun(data_dir, stores, path, worker_env(rescore_model.cache_dir, rescore_datasets, data_dir))
