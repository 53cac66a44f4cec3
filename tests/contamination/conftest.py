"""Fixtures of the contamination tests: the backend's tiny random model, datasets cache and local deployment."""

from __future__ import annotations

from tests.backend.conftest import datasets_cache, deployment, tiny_model

__all__ = ["datasets_cache", "deployment", "tiny_model"]
