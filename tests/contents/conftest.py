"""Fixtures: the store backends of the queue tests (local directory, and the fake hub over HTTP)."""

from tests.backend.conftest import datasets_cache, deployment, tiny_model  # noqa: F401  (the tiny model, a deployment)
from tests.queue.conftest import backend, fake_hub, online_client  # noqa: F401  (fixtures)
from tests.queue.test_concurrency import worker_env  # noqa: F401  (fixture: a store's environment)
from tests.reproduce.conftest import published_run  # noqa: F401  (the tiny model's run of four tasks, made once)
