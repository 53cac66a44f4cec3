"""Fixtures: every storage test runs against the local directory and the hub backend.

The hub backend talks through the real ``huggingface_hub`` client over HTTP to
:mod:`tests.queue.fake_hub`, a small in-process Hub on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from eval_queue.storage import LocalStorage, Storage

BACKENDS = ["local"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def reopen_store(backend: str, tmp_path: Path) -> Callable[[], Storage]:
    """Opens a fresh handle on the same store (as another process would)."""

    def opener() -> Storage:
        return LocalStorage(tmp_path / "requests")

    return opener


@pytest.fixture
def store(reopen_store: Callable[[], Storage]) -> Iterator[Storage]:
    yield reopen_store()
