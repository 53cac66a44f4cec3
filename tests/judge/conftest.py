"""Fixtures of the judge tests: the backend's tiny random model, datasets cache and local deployment, shared."""

from __future__ import annotations

from tests.backend.conftest import datasets_cache, deployment, tiny_model

__all__ = ["datasets_cache", "deployment", "tiny_model"]
