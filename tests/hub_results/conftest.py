from tests.queue.conftest import fake_hub, online_client  # noqa: F401  (fixtures)
