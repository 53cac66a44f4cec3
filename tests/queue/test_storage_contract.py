"""One behaviour contract, run against every storage backend (see ``conftest.store``)."""

from __future__ import annotations

import json
import threading

import pytest

from eval_queue.errors import (
    AlreadyExistsError,
    InvalidTransitionError,
    NotFoundError,
    StorageError,
    UnreadableFileError,
)
from eval_queue.storage import Storage


def test_store_satisfies_the_protocol(store: Storage) -> None:
    assert isinstance(store, Storage)


def test_empty_store_lists_nothing(store: Storage) -> None:
    assert store.list() == []
    assert store.versions() == {}


def test_written_file_reads_back_and_is_listed(store: Storage) -> None:
    store.write("org/a.json", b'{"x": 1}')
    store.write("org/sub/b.json", b"{}")
    assert store.read("org/a.json") == b'{"x": 1}'
    assert store.list() == ["org/a.json", "org/sub/b.json"]
    assert store.list("org/sub") == ["org/sub/b.json"]
    assert store.list("other") == []


def test_reading_a_missing_file_raises_not_found(store: Storage) -> None:
    with pytest.raises(NotFoundError):
        store.read("org/missing.json")


def test_a_file_over_the_readers_cap_is_refused_and_named(store: Storage, reopen_store) -> None:
    store.write("org/big.json", b"x" * 1000)
    fresh = reopen_store()  # a reader that has never seen the bytes (hub: refused from the tree's size)
    with pytest.raises(UnreadableFileError) as info:
        fresh.read("org/big.json", max_bytes=999)
    assert info.value.path == "org/big.json" and "1,000 bytes; the limit is 999" in info.value.reason
    assert fresh.read("org/big.json", max_bytes=1000) == b"x" * 1000


def test_create_refuses_an_existing_file(store: Storage) -> None:
    store.create("org/a.json", b"1")
    with pytest.raises(AlreadyExistsError):
        store.create("org/a.json", b"2")
    assert store.read("org/a.json") == b"1"


def test_version_changes_when_content_changes(store: Storage) -> None:
    store.write("org/a.json", b"1")
    before = store.versions()["org/a.json"]
    store.write("org/a.json", b"22")
    assert store.versions()["org/a.json"] != before


def test_update_applies_the_transform(store: Storage) -> None:
    store.write("org/a.json", b'{"n": 1}')

    def bump(data: bytes) -> bytes:
        return json.dumps({"n": json.loads(data)["n"] + 1}).encode()

    assert store.update("org/a.json", bump) == b'{"n": 2}'
    assert json.loads(store.read("org/a.json")) == {"n": 2}


def test_update_whose_transform_raises_writes_nothing(store: Storage) -> None:
    store.write("org/a.json", b"1")

    def refuse(data: bytes) -> bytes:
        raise InvalidTransitionError("no")

    with pytest.raises(InvalidTransitionError):
        store.update("org/a.json", refuse)
    assert store.read("org/a.json") == b"1"


def test_update_of_a_missing_file_raises_not_found(store: Storage) -> None:
    with pytest.raises(NotFoundError):
        store.update("org/missing.json", lambda data: data)


def test_delete_removes_and_then_raises_not_found(store: Storage) -> None:
    store.write("org/a.json", b"1")
    store.delete("org/a.json")
    assert store.list() == []
    with pytest.raises(NotFoundError):
        store.delete("org/a.json")


@pytest.mark.parametrize("bad", ["../escape.json", "/abs.json", "a//b.json", ""])
def test_paths_outside_the_store_are_refused(store: Storage, bad: str) -> None:
    with pytest.raises(StorageError):
        store.write(bad, b"1")


def test_a_second_handle_sees_changes_made_by_the_first(store: Storage, reopen_store) -> None:
    other: Storage = reopen_store()
    store.write("org/a.json", b"1")
    assert other.read("org/a.json") == b"1"
    other.update("org/a.json", lambda data: b"2")
    assert store.read("org/a.json") == b"2"
    assert store.list() == ["org/a.json"]


def test_racing_creators_exactly_one_wins(reopen_store) -> None:
    handles: list[Storage] = [reopen_store() for _ in range(6)]
    outcomes: list[str] = []

    def create(n: int) -> None:
        try:
            handles[n].create("org/race.json", f"writer {n}".encode())
            outcomes.append("won")
        except AlreadyExistsError:
            outcomes.append("lost")

    run_threads(create, len(handles))
    assert sorted(outcomes) == ["lost"] * 5 + ["won"]


def test_racing_updates_lose_nothing(reopen_store) -> None:
    handles: list[Storage] = [reopen_store() for _ in range(4)]
    handles[0].write("org/counter.json", b"0")

    def increment(n: int) -> None:
        for _ in range(5):
            handles[n].update("org/counter.json", lambda data: str(int(data) + 1).encode())

    run_threads(increment, len(handles))
    assert handles[0].read("org/counter.json") == b"20"


def run_threads(target, count: int) -> None:
    threads = [threading.Thread(target=target, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)


def test_hidden_files_are_never_listed(store: Storage) -> None:
    store.write(".gitattributes", b"*.json -filter")
    store.write("org/.draft.json", b"{}")
    store.write("org/a.json", b"{}")
    assert store.list() == ["org/a.json"]
    assert set(store.versions()) == {"org/a.json"}


def test_versions_filter_by_prefix(store: Storage) -> None:
    store.write("org1/a.json", b"1")
    store.write("org2/a.json", b"2")
    assert set(store.versions("org1/")) == {"org1/a.json"}
    assert set(store.versions("org")) == {"org1/a.json", "org2/a.json"}
