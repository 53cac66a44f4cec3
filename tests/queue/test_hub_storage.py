"""Hub-only behaviour: conditional commits, incremental reads, sanitized errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from huggingface_hub import HfApi, constants

from eval_queue.errors import AlreadyExistsError, StorageError
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from eval_queue.storage.hub import HubRepo, HubStorage, RetryPolicy
from tests.queue.conftest import FAKE_TOKEN, REQUESTS_REPO, RESULTS_REPO
from tests.queue.fake_hub import FakeHub


def hub_store(
    hub: FakeHub, tmp_path: Path, *, token: str = FAKE_TOKEN, repo: str = REQUESTS_REPO
) -> HubStorage:
    api = HfApi(endpoint=hub.url, token=token)
    return HubStorage(
        HubRepo(api, repo, token=token, cache_dir=tmp_path / "cache", retry=RetryPolicy(base_s=0.01))
    )


def test_every_write_is_a_commit_on_the_head_seen(fake_hub: FakeHub, tmp_path: Path) -> None:
    store = hub_store(fake_hub, tmp_path)
    store.write("a.json", b"1")
    store.update("a.json", lambda data: b"2")
    repo = fake_hub.repos[("datasets", REQUESTS_REPO)]
    assert repo.files == {"a.json": b"2"}
    assert fake_hub.requests_seen["POST commit"] == 2
    assert fake_hub.conflicts == 0


def test_update_that_loses_a_race_rereads_and_applies_on_the_new_content(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    slow, fast = hub_store(fake_hub, tmp_path), hub_store(fake_hub, tmp_path)
    slow.write("n.txt", b"0")
    raced = False

    def add_one(data: bytes) -> bytes:
        nonlocal raced
        if not raced:  # another writer commits between our read and our commit
            raced = True
            fast.update("n.txt", lambda d: str(int(d) + 10).encode())
        return str(int(data) + 1).encode()

    assert slow.update("n.txt", add_one) == b"11"
    assert fake_hub.repos[("datasets", REQUESTS_REPO)].files["n.txt"] == b"11"
    assert fake_hub.conflicts == 1


def test_create_that_loses_a_race_reports_already_exists(fake_hub: FakeHub, tmp_path: Path) -> None:
    first, second = hub_store(fake_hub, tmp_path), hub_store(fake_hub, tmp_path)
    second.list()  # second's view predates first's create
    first.create("a.json", b"first")
    with pytest.raises(AlreadyExistsError):
        second.create("a.json", b"second")
    with pytest.raises(AlreadyExistsError):
        second.create("a.json", b"first")  # even with identical bytes
    assert second.read("a.json") == b"first"


def test_reading_again_downloads_only_changed_files(fake_hub: FakeHub, tmp_path: Path) -> None:
    writer, reader = hub_store(fake_hub, tmp_path), hub_store(fake_hub, tmp_path / "r")
    for i in range(5):
        writer.write(f"f{i}.json", str(i).encode())
    assert [reader.read(p) for p in reader.list()] == [b"0", b"1", b"2", b"3", b"4"]
    downloads = fake_hub.requests_seen["GET resolve"]
    assert downloads == 5
    writer.update("f3.json", lambda data: b"33")
    assert [reader.read(p) for p in reader.list()] == [b"0", b"1", b"2", b"33", b"4"]
    assert fake_hub.requests_seen["GET resolve"] == downloads + 1


def test_results_and_details_share_one_repo_without_mixing(fake_hub: FakeHub, tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        requests_repo=REQUESTS_REPO,
        results_repo=RESULTS_REPO,
        hf_token=FAKE_TOKEN,
        hf_endpoint=fake_hub.url,
    )
    stores = open_stores(settings)
    stores.results.write("org/m/results_1.json", b"{}")
    stores.details.write("org/m/run/te_p1.jsonl", b"")
    assert stores.results.list() == ["org/m/results_1.json"]
    assert stores.details.list() == ["org/m/run/te_p1.jsonl"]
    assert set(fake_hub.repos[("datasets", RESULTS_REPO)].files) == {
        "org/m/results_1.json",
        "details/org/m/run/te_p1.jsonl",
    }
    assert stores.requests.list() == []


def test_token_never_appears_in_errors_or_logs(
    fake_hub: FakeHub, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "hf_WRONGtokenForTests99"
    caplog.set_level(logging.DEBUG)
    failures: list[StorageError] = []
    for store in (
        hub_store(fake_hub, tmp_path, token=wrong),
        hub_store(fake_hub, tmp_path, repo="no/such-repo"),
    ):
        with pytest.raises(StorageError) as info:
            store.write("a.json", b"1")
        failures.append(info.value)
    assert "not authorized" in str(failures[0])
    assert "does not exist" in str(failures[1])
    for failure in failures:
        assert failure.__cause__ is None and failure.__suppress_context__
        text = f"{failure!s} {failure!r}"
        assert wrong not in text and FAKE_TOKEN not in text
    assert wrong not in caplog.text and FAKE_TOKEN not in caplog.text
    assert "hf_" not in repr(hub_store(fake_hub, tmp_path).repo)


def test_offline_mode_is_reported_as_a_storage_error(
    fake_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = hub_store(fake_hub, tmp_path)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(StorageError, match="offline"):
        store.list()


def test_the_blob_cache_keeps_only_the_contents_of_the_current_tree(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    writer, reader = hub_store(fake_hub, tmp_path), hub_store(fake_hub, tmp_path)
    for version in range(5):
        writer.write("a.json", b"v%d" % version)
        writer.write(f"old{version}.json", b"gone")
        writer.delete(f"old{version}.json")
        assert reader.read("a.json") == b"v%d" % version
    assert list(reader.repo._blobs.values()) == [b"v4"]
    assert list(writer.repo._blobs.values()) == [b"v4"]
