"""Fixtures shared by the foundation tests: a results store filled with the paper's dev LLMs."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_queue.storage.local import LocalStorage
from tests.paper_tables import write_paper_store


@pytest.fixture
def paper_store(tmp_path: Path) -> LocalStorage:
    """A local results store with the 12 runs of Tables A1–A10 (6 LLMs × zero/few-shot)."""
    root = tmp_path / "results"
    write_paper_store(root)
    return LocalStorage(root)
