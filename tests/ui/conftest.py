"""UI test fixtures: a tmp store, and the real app served from it in a subprocess."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ui.store import build_store

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Served:
    url: str
    data_dir: Path
    hf_cache: Path
    log: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``python app.py`` on a free port, over a store built by :func:`tests.ui.store.build_store`."""
    root = tmp_path_factory.mktemp("ui-app")
    data, cache = build_store(root)
    # The new results test waits for the timer: 3 s, not a minute.
    with serve_app(root, data, cache, refresh_s=3) as app:
        yield app


@contextmanager
def serve_app(root: Path, data: Path, cache: Path, *, refresh_s: float = 60.0) -> Iterator[Served]:
    """``python app.py`` on a free port over the store ``data`` (and hub cache ``cache``), logging to ``root``.

    ``refresh_s``: the page's timer (``EVALITA_REFRESH_S``), which re-reads the store on every open
    page; the app's default unless a test waits for new results to appear."""
    port = _free_port()
    env = {
        **os.environ,
        "EVALITA_DATA_DIR": str(data),
        "HF_HUB_CACHE": str(cache),
        "HF_HUB_OFFLINE": "1",
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "EVALITA_REFRESH_S": str(refresh_s),
    }
    log = root / "app.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "app.py"], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 90
        while b"Running on" not in log.read_bytes():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the app did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield Served(url=url, data_dir=data, hf_cache=cache, log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Keep each phase's report on the test item (the browser fixture screenshots failures)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report
