"""Fixtures of the long-context tests: the tiny random model (a plain folder), built once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tiny_model import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("lc-tiny-model") / "model")


# The worker end-to-end tests run the real ``python -m backend`` against a local deployment.
from tests.backend.conftest import datasets_cache, deployment, tiny_model  # noqa: E402, F401
