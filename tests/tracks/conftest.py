"""The tracks' tests use the backend's local deployment (a tiny model in a temp HF cache)."""

from tests.backend.conftest import datasets_cache, deployment, tiny_model  # noqa: F401 (fixtures)
