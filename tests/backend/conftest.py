"""Fixtures for the backend tests: a tiny random model in a temp HF cache, a local deployment.

The slow tests run the real worker as ``python -m backend`` in a subprocess whose
environment points the hub cache at the tiny model's cache and the stores at ``tmp_path``.
:func:`suite_run` is one such run of every task, made once per test run and read by the
worker's end-to-end test and the rescore tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, ModelType, Precision, RunPhase, Status, isoformat, utc_now
from eval_queue.settings import Settings
from eval_queue.storage import Stores, open_stores
from tests.support import preforked
from tests.support.entry_point import run_main
from tests.support.shared import built_once
from tests.support.tiny_model import TinyModel, install_tiny_model

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> TinyModel:
    """The tiny random Llama, filed in its own hub cache (built once per session)."""
    return install_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def datasets_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One datasets cache for every subprocess of the session (JSON → Arrow once)."""
    return tmp_path_factory.mktemp("hf-datasets")


@dataclass
class Deployment:
    """A local deployment under ``tmp_path`` and how to run the worker against it."""

    root: Path
    stores: Stores
    queue: RequestQueue
    env: dict[str, str]

    def submit(
        self, model: str, revision: str, *, num_fewshot: int = 0, precision: Precision = Precision.BFLOAT16
    ) -> EvalRequest:
        request = EvalRequest(
            model=model,
            revision=revision,
            precision=precision,
            num_fewshot=num_fewshot,
            model_type=ModelType.PRETRAINED,
            license="apache-2.0",
            submitted_by="tests",
            submitted_time=isoformat(utc_now()),
        )
        return self.queue.add(request)

    def status(self, request: EvalRequest) -> EvalRequest:
        return self.queue.get(request.request_id)

    def submit_cli(self, model: str, revision: str, *extra: str) -> subprocess.CompletedProcess[str]:
        """``python -m eval_queue submit MODEL --revision REV [extra…]`` against this deployment: its
        ``main`` in this process (the command line's own process is tests/queue/test_cli.py's)."""
        from eval_queue.cli import main  # what eval_queue/__main__.py runs

        return run_main(main, ["submit", model, "--revision", revision, *extra], self.env)

    def export(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``python -m leaderboard export ARGS`` on this deployment's store, its ``main`` in this process."""
        from leaderboard.__main__ import main

        return run_main(main, ["export", *args], self.env)

    def worker(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        """``python -m backend ARGS`` run to its end, in a process of its own (tests/support/preforked.py)."""
        return preforked.run_module("backend", args, env=self.env, cwd=REPO_ROOT, timeout=timeout)

    def start_worker(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "backend", *args],
            cwd=REPO_ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )


def worker_env(hub_cache: Path, datasets_cache: Path, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALITA_", "HF_"))}
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_EVALUATE_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_CACHE=str(hub_cache),
        HF_DATASETS_CACHE=str(datasets_cache),
        EVALITA_DATA_DIR=str(data_dir),
        TOKENIZERS_PARALLELISM="false",
        PYTHONPATH=str(REPO_ROOT),
    )
    return env


def open_deployment(data_dir: Path, model: TinyModel, datasets: Path) -> Deployment:
    """A deployment whose stores are under ``data_dir``; its worker loads ``model`` from its cache."""
    stores = open_stores(Settings(data_dir=data_dir))
    return Deployment(
        root=data_dir,
        stores=stores,
        queue=RequestQueue(stores.requests),
        env=worker_env(model.cache_dir, datasets, data_dir),
    )


@pytest.fixture
def deployment(tmp_path: Path, tiny_model: TinyModel, datasets_cache: Path) -> Deployment:
    return open_deployment(tmp_path / "eval-data", tiny_model, datasets_cache)


#: The worker options of :func:`suite_run`: every task and prompt, 2 items each, answers capped at
#: 8 tokens, no bootstrap — seconds of harness time.
SUITE_RUN_OPTIONS = ("--limit", "2", "--max-gen-toks", "8", "--bootstrap-iters", "0", "--progress-s", "5")


@dataclass(frozen=True)
class SuiteRun:
    """The tiny model submitted with ``python -m eval_queue submit`` and run by ``python -m backend --once``.

    ``deployment``'s store is shared by every test that reads the run: read it, never write it
    (a test that changes it copies ``deployment.root`` first).  ``submitted`` and ``worker`` are
    the two commands' exit status and output.
    """

    deployment: Deployment
    submitted: subprocess.CompletedProcess[str]
    worker: subprocess.CompletedProcess[str]


def _completed(path: Path) -> subprocess.CompletedProcess[str]:
    saved = json.loads(path.read_text(encoding="utf-8"))
    return subprocess.CompletedProcess(saved["args"], saved["returncode"], saved["stdout"], saved["stderr"])


def _save(path: Path, done: subprocess.CompletedProcess[str]) -> None:
    saved = {"args": done.args, "returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
    path.write_text(json.dumps(saved), encoding="utf-8")


@pytest.fixture(scope="session")
def suite_run(
    tmp_path_factory: pytest.TempPathFactory, tiny_model: TinyModel, datasets_cache: Path
) -> SuiteRun:
    """One worker run of every task on the bundled sample, once per test run (tests/support/shared.py).

    A real run costs a subprocess start, the harness's imports and every task's data: the worker's
    end-to-end test checks what it published, the rescore tests rescore copies of its store.  The
    commands' outputs are kept beside the store, so the test that checks them reads them whichever
    xdist worker made the run (the tiny model's revision is the same in every worker).
    """

    def run(folder: Path) -> None:
        made = open_deployment(folder / "eval-data", tiny_model, datasets_cache)
        submitted = made.submit_cli(tiny_model.model_id, tiny_model.revision)
        _save(folder / "submit.json", submitted)
        if submitted.returncode == 0:
            _save(folder / "worker.json", made.worker("--once", *SUITE_RUN_OPTIONS))

    folder = built_once(tmp_path_factory, "suite-run", run)
    submitted = _completed(folder / "submit.json")
    assert submitted.returncode == 0, submitted.stderr
    return SuiteRun(
        open_deployment(folder / "eval-data", tiny_model, datasets_cache),
        submitted,
        _completed(folder / "worker.json"),
    )


def wait_for(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def read_lines_until(process: subprocess.Popen[str], needle: str, timeout: float) -> list[str]:
    """Read the worker's output until a line contains ``needle`` (a sign of where it is)."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if needle in line:
            return seen
    raise AssertionError(f"worker never logged {needle!r}; output:\n{''.join(seen[-40:])}")


def run_started(deployment: Deployment, request: EvalRequest) -> Callable[[], bool]:
    """The worker has started the run (phase ``running``): from now on a lost lease counts as an attempt."""

    def started() -> bool:
        now = deployment.status(request)
        return now.status is Status.RUNNING and now.phase is RunPhase.RUNNING

    return started


@pytest.fixture
def cleanup_processes() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test started; killed (by their own id) if still running at the end."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
