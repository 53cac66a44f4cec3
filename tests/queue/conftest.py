"""Fixtures: every storage and queue test runs against the local directory and the hub backend.

The hub backend talks through the real ``huggingface_hub`` client over HTTP to
:class:`tests.queue.fake_hub.FakeHub`, a small in-process Hub on 127.0.0.1.  The
test-wide ``HF_HUB_OFFLINE=1`` makes the client refuse every request, so the hub
fixtures switch offline mode off for the client only; the endpoint is always the
fake hub, passed explicitly, so nothing can reach the real Hub.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from huggingface_hub import HfApi, constants

from eval_queue.storage import LocalStorage, Storage
from eval_queue.storage.hub import HubRepo, HubStorage, RetryPolicy
from tests.queue.fake_hub import FakeHub

FAKE_TOKEN = "hf_FAKEtokenForTests123"  # shorter than a real token on purpose
REQUESTS_REPO = "evalita/requests"
RESULTS_REPO = "evalita/results"


@pytest.fixture
def online_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the hub client make HTTP requests (to the fake hub only) in this process."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


@pytest.fixture
def fake_hub(online_client: None) -> Iterator[FakeHub]:
    with FakeHub(token=FAKE_TOKEN) as hub:
        hub.add_repo("datasets", REQUESTS_REPO)
        hub.add_repo("datasets", RESULTS_REPO)
        yield hub


@pytest.fixture(params=["local", "hub"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def reopen_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[], Storage]:
    """Opens a fresh handle on the same store (as another process would)."""
    if backend == "local":
        return lambda: LocalStorage(tmp_path / "requests")
    hub: FakeHub = request.getfixturevalue("fake_hub")

    def opener() -> Storage:
        api = HfApi(endpoint=hub.url, token=FAKE_TOKEN)
        repo = HubRepo(
            api,
            REQUESTS_REPO,
            token=FAKE_TOKEN,
            cache_dir=tmp_path / "hub-cache",
            retry=RetryPolicy(base_s=0.01),
        )
        return HubStorage(repo)

    return opener


@pytest.fixture
def store(reopen_store: Callable[[], Storage]) -> Storage:
    return reopen_store()
