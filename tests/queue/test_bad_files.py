"""Malformed files in the queue are reported by name and skipped; the queue keeps working."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, Status, isoformat
from eval_queue.storage import Storage

GOOD = EvalRequest(
    model="org/good", revision="abc", submitted_time=isoformat(datetime(2026, 1, 1, tzinfo=UTC))
)


def valid_json(**changes: object) -> bytes:
    return json.dumps({**json.loads(GOOD.to_json()), **changes}).encode()


BAD_FILES = {
    "org/trunc_eval_request_abc_bfloat16_0shot.json": GOOD.to_json()[:40],
    "org/types_eval_request_abc_bfloat16_0shot.json": valid_json(model="org/types", attempts="many"),
    "org/future_eval_request_abc_bfloat16_0shot.json": valid_json(
        model="org/future", schema="evalita-llm-request/9"
    ),
    "org/moved_eval_request_abc_bfloat16_0shot.json": valid_json(model="org/elsewhere"),
    "org/list_eval_request_abc_bfloat16_0shot.json": b"[1, 2]",
    "stray/notes.txt": b"hello",
}
REASONS = {
    "trunc": "not valid JSON",
    "types": "field 'attempts'",
    "future": "unknown schema",
    "moved": "wrong place",
    "list": "not a JSON object",
    "notes": "not named like a request file",
}


@pytest.fixture
def queue(store: Storage) -> RequestQueue:
    queue = RequestQueue(store)
    queue.add(GOOD)
    for path, data in BAD_FILES.items():
        store.write(path, data)
    return queue


def test_each_bad_file_is_reported_by_name_and_skipped(queue: RequestQueue) -> None:
    listing = queue.listing()
    assert [r.model for r in listing.requests] == ["org/good"]
    reported = {p.path: p.reason for p in listing.problems}
    assert set(reported) == set(BAD_FILES)
    for path, reason in reported.items():
        key = path.split("/")[1].split("_")[0].removesuffix(".txt")
        assert REASONS[key] in reason, (path, reason)


def test_queue_keeps_working_around_bad_files(queue: RequestQueue) -> None:
    claimed = queue.claim_next("w1", lease_s=60)
    assert claimed is not None and claimed.model == "org/good"
    assert queue.finish(claimed.request_id, "w1", "r.json").status is Status.FINISHED
    assert queue.claim_next("w1", lease_s=60) is None
    assert len(queue.listing().problems) == len(BAD_FILES)


def test_a_fixed_file_is_read_again(queue: RequestQueue, store: Storage) -> None:
    path = "org/trunc_eval_request_abc_bfloat16_0shot.json"
    queue.listing()
    store.write(path, valid_json(model="org/trunc"))
    listing = queue.listing()
    assert path not in {p.path for p in listing.problems}
    assert "org/trunc" in {r.model for r in listing.requests}


def test_unknown_keys_are_kept_and_ignored(queue: RequestQueue, store: Storage) -> None:
    store.write(GOOD.path, valid_json(priority="high"))
    claimed = queue.claim_next("w1", lease_s=60)
    assert claimed is not None
    assert json.loads(store.read(GOOD.path))["priority"] == "high"
