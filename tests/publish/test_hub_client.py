"""Every hub call has a timeout, and hub errors say whether trying again may help."""

from __future__ import annotations

import random
import socket
import time
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from eval_queue.errors import ConfigurationError, NotFoundError, StorageError, TransientStorageError
from eval_queue.settings import HubTimeouts, Settings
from eval_queue.storage.hub import HubRepo, HubStorage, RetryPolicy
from tests.publish.conftest import TEST_TIMEOUTS
from tests.publish.deployment import TOKEN
from tests.publish.faulty_hub import FaultKind, FaultyHub, HubFault

REPO = "org/store"


def _store(hub: FaultyHub, tmp_path: Path, token: str = TOKEN) -> HubStorage:
    api = HfApi(endpoint=hub.url, token=token)
    return HubStorage(
        HubRepo(api, REPO, token=token, cache_dir=tmp_path, retry=RetryPolicy(base_s=0.001, max_s=0.005))
    )


@pytest.fixture
def store(faulty_hub: FaultyHub, tmp_path: Path) -> HubStorage:
    faulty_hub.add_repo("datasets", REPO, {"a.json": b"1"})
    return _store(faulty_hub, tmp_path)


def _hold_everything(hub: FaultyHub) -> None:
    hub.fault = HubFault(rate=1.0, rng=random.Random(0), kinds=(FaultKind.HOLD,), hold_s=30, armed=True)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda s: s.list(), id="repo_info and list_repo_tree"),
        pytest.param(lambda s: s.write("b.json", b"2"), id="create_commit"),
        pytest.param(lambda s: s.update("a.json", lambda d: d + b"1"), id="update"),
    ],
)
def test_a_hub_that_holds_its_answers_times_out_instead_of_blocking(
    call: object, faulty_hub: FaultyHub, store: HubStorage
) -> None:
    store.list()  # a snapshot to start from
    _hold_everything(faulty_hub)
    started = time.monotonic()
    with pytest.raises(TransientStorageError):
        call(store)  # type: ignore[operator]
    # Generous: the client retries some calls itself, each bounded by the read timeout.
    assert time.monotonic() - started < 20 * TEST_TIMEOUTS.read_s
    faulty_hub.fault.armed = False


@pytest.mark.parametrize("kind", [FaultKind.UNAVAILABLE, FaultKind.DROP, FaultKind.APPLIED_500])
def test_no_answer_and_server_errors_are_transient(
    kind: FaultKind, faulty_hub: FaultyHub, store: HubStorage
) -> None:
    store.list()
    faulty_hub.fault = HubFault(kind, at=0 if kind.commits_only else 1, armed=True)  # 0: the preupload
    with pytest.raises(TransientStorageError):
        store.write("b.json", b"2")


def test_a_refused_token_is_not_transient(faulty_hub: FaultyHub, store: HubStorage, tmp_path: Path) -> None:
    intruder = _store(faulty_hub, tmp_path / "other", token="hf_wrongTokenForTheseTests")
    with pytest.raises(StorageError) as refused:
        intruder.write("b.json", b"2")
    assert not isinstance(refused.value, TransientStorageError)
    with pytest.raises(NotFoundError):
        store.read("missing.json")


def test_a_hub_nobody_listens_on_is_transient(tmp_path: Path, hub_client: None) -> None:
    with socket.socket() as probe:  # a port with nothing behind it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    api = HfApi(endpoint=f"http://127.0.0.1:{port}", token=TOKEN)
    with pytest.raises(TransientStorageError):
        HubStorage(HubRepo(api, REPO, token=TOKEN, cache_dir=tmp_path)).list()


def test_the_timeouts_are_read_from_the_environment() -> None:
    assert Settings.from_env({}).hub_timeouts == HubTimeouts(connect_s=10.0, read_s=60.0)
    env = {"EVALITA_HUB_CONNECT_TIMEOUT_S": "3", "EVALITA_HUB_READ_TIMEOUT_S": "90"}
    assert Settings.from_env(env).hub_timeouts == HubTimeouts(connect_s=3.0, read_s=90.0)
    with pytest.raises(ConfigurationError, match="EVALITA_HUB_READ_TIMEOUT_S"):
        Settings.from_env({"EVALITA_HUB_READ_TIMEOUT_S": "0"})
