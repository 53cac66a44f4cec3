"""Fixtures of the judge tests: the backend's tiny random model and datasets cache, shared."""

from __future__ import annotations

from tests.backend.conftest import datasets_cache, tiny_model

__all__ = ["datasets_cache", "tiny_model"]
