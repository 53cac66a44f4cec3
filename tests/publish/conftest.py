"""Fixtures: the faulty hub (real ``huggingface_hub`` client over HTTP, short timeouts) and deployments.

The test-wide ``HF_HUB_OFFLINE=1`` makes the client refuse every request, so the hub
fixtures switch offline mode off for the client only; the endpoint is always the
in-process fake hub, so nothing can reach the real Hub.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from huggingface_hub import constants
from huggingface_hub.utils import _http as hub_http

from eval_queue.hubclient import install_hub_timeouts, reset_hub_client
from eval_queue.settings import HubTimeouts
from tests.publish.deployment import TOKEN, Deployment, hub_deployment, local_deployment
from tests.publish.faulty_hub import FaultyHub

#: Short enough that a held answer costs a test half a second; the fake hub answers in
#: milliseconds, and a spurious timeout on a busy machine is one more fault the code absorbs.
TEST_TIMEOUTS = HubTimeouts(connect_s=2.0, read_s=0.5)


@pytest.fixture
def hub_client(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The hub client as the stores set it up (timeouts installed), online, with quick retries.

    ``huggingface_hub`` retries some calls itself (the pre-upload, tree pages) after 1, 2,
    4… seconds; its defaults are shortened here so that a fault on such a call costs
    milliseconds.  What it retries, and how often, is unchanged.
    """
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    defaults = dict(hub_http.http_backoff.__kwdefaults__ or {})
    monkeypatch.setattr(
        hub_http.http_backoff, "__kwdefaults__", {**defaults, "base_wait_time": 0.01, "max_wait_time": 0.02}
    )
    install_hub_timeouts(TEST_TIMEOUTS)
    yield
    reset_hub_client()


@pytest.fixture
def faulty_hub(hub_client: None) -> Iterator[FaultyHub]:
    with FaultyHub(token=TOKEN) as hub:
        yield hub


@pytest.fixture(params=["local", "hub"])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Deployment:
    if request.param == "local":
        return local_deployment(tmp_path)
    return hub_deployment(request.getfixturevalue("faulty_hub"), tmp_path)
