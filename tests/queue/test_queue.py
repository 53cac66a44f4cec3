"""RequestQueue behaviour on every backend, with a controllable clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from eval_queue.errors import AlreadyExistsError, InvalidTransitionError, LeaseLostError
from eval_queue.queue import RequestQueue, fair_order
from eval_queue.requests import EvalRequest, Status, isoformat, parse_request_path
from eval_queue.storage import Storage

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def make_request(model: str, *, by: str = "alice", minutes: int = 0, fewshot: int = 0) -> EvalRequest:
    return EvalRequest(
        model=model,
        revision="0123456789abcdef",
        num_fewshot=fewshot,
        submitted_by=by,
        submitted_time=isoformat(T0 + timedelta(minutes=minutes)),
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(store: Storage, clock: Clock) -> RequestQueue:
    return RequestQueue(store, max_attempts=2, clock=clock)


def test_added_request_is_listed_as_pending(queue: RequestQueue) -> None:
    added = queue.add(make_request("org/a"))
    listing = queue.listing()
    assert [r.request_id for r in listing.requests] == [added.request_id]
    assert listing.requests[0].status is Status.PENDING
    assert listing.problems == []
    assert queue.get(added.request_id) == added


def test_adding_the_same_request_twice_is_refused(queue: RequestQueue) -> None:
    queue.add(make_request("org/a"))
    with pytest.raises(AlreadyExistsError):
        queue.add(make_request("org/a"))


def test_claim_takes_the_oldest_and_records_worker_and_lease(queue: RequestQueue, clock: Clock) -> None:
    queue.add(make_request("org/new", minutes=5))
    queue.add(make_request("org/old", minutes=1))
    claimed = queue.claim_next("w1", lease_s=60)
    assert claimed is not None
    assert claimed.model == "org/old"
    assert claimed.status is Status.RUNNING
    assert claimed.claimed_by == "w1"
    assert claimed.lease_expires_at == clock.now + timedelta(seconds=60)
    assert claimed.history[-1]["status"] == "RUNNING"


def test_claim_on_an_empty_queue_returns_none(queue: RequestQueue) -> None:
    assert queue.claim_next("w1", lease_s=60) is None


def test_a_request_is_claimed_only_once(queue: RequestQueue) -> None:
    queue.add(make_request("org/a"))
    assert queue.claim_next("w1", lease_s=60) is not None
    assert queue.claim_next("w2", lease_s=60) is None


def test_finish_records_results_and_clears_the_lease(queue: RequestQueue) -> None:
    queue.add(make_request("org/a"))
    claimed = queue.claim_next("w1", lease_s=60)
    assert claimed is not None
    done = queue.finish(claimed.request_id, "w1", "org/a/results_x.json")
    assert done.status is Status.FINISHED
    assert done.results_path == "org/a/results_x.json"
    assert done.lease_expires is None


def test_fail_always_carries_an_error(queue: RequestQueue) -> None:
    queue.add(make_request("org/a"))
    claimed = queue.claim_next("w1", lease_s=60)
    assert claimed is not None
    failed = queue.fail(claimed.request_id, "w1", "  ")
    assert failed.status is Status.FAILED
    assert failed.error


def test_fail_masks_the_configured_token_and_token_shaped_strings(store: Storage, clock: Clock) -> None:
    configured = "plainSecret42"  # not shaped like a token: masked because it is configured
    stray = "hf_" + "AbCdEf123456"  # shorter than a real token on purpose
    queue = RequestQueue(store, clock=clock, secrets=[configured, None])
    queue.add(make_request("org/a"))
    claimed = queue.claim_next("w1", lease_s=60)
    assert claimed is not None

    failed = queue.fail(
        claimed.request_id, "w1", f"401 with {configured}\nlog: Authorization: Bearer {stray}"
    )

    stored = store.read(claimed.path).decode()
    assert configured not in stored and stray not in stored
    assert failed.error is not None and "***" in failed.error and "hf_***" in failed.error
    assert "401 with ***" in failed.history[-1]["note"]


def test_renew_extends_the_lease(queue: RequestQueue, clock: Clock) -> None:
    queue.add(make_request("org/a"))
    claimed = queue.claim_next("w1", lease_s=10)
    assert claimed is not None
    clock.advance(8)
    renewed = queue.renew(claimed.request_id, "w1", lease_s=10)
    assert renewed.lease_expires_at == clock.now + timedelta(seconds=10)
    clock.advance(8)
    assert queue.reap_expired() == []


def test_expired_lease_goes_back_to_pending_with_one_more_attempt(queue: RequestQueue, clock: Clock) -> None:
    queue.add(make_request("org/a"))
    claimed = queue.claim_next("w1", lease_s=10)
    assert claimed is not None
    queue.start(claimed.request_id, "w1", lease_s=10)  # a lost lease counts once the run started
    clock.advance(11)
    again = queue.claim_next("w2", lease_s=10)
    assert again is not None and again.request_id == claimed.request_id
    assert again.claimed_by == "w2"
    assert again.attempts == 1
    with pytest.raises(LeaseLostError):
        queue.renew(claimed.request_id, "w1", lease_s=10)
    with pytest.raises(LeaseLostError):
        queue.finish(claimed.request_id, "w1", "x.json")


def test_request_fails_readably_after_max_attempts(queue: RequestQueue, clock: Clock) -> None:
    queue.add(make_request("org/a"))
    for _ in range(2):
        claimed = queue.claim_next("w", lease_s=10)
        assert claimed is not None
        queue.start(claimed.request_id, "w", lease_s=10)
        clock.advance(11)
    reaped = queue.reap_expired()
    assert [r.status for r in reaped] == [Status.FAILED]
    assert reaped[0].attempts == 2
    assert "gave up after 2 attempts" in (reaped[0].error or "")
    assert queue.claim_next("w", lease_s=10) is None


def test_release_returns_to_pending_without_counting_an_attempt(queue: RequestQueue) -> None:
    queue.add(make_request("org/a"))
    claimed = queue.claim_next("w1", lease_s=60)
    assert claimed is not None
    released = queue.release(claimed.request_id, "w1", "SIGTERM")
    assert released.status is Status.PENDING
    assert released.attempts == 0
    assert released.claimed_by is None


def test_cancel_makes_the_worker_lose_its_lease(queue: RequestQueue) -> None:
    queue.add(make_request("org/a"))
    claimed = queue.claim_next("w1", lease_s=60)
    assert claimed is not None
    assert queue.cancel(claimed.request_id).status is Status.CANCELLED
    with pytest.raises(LeaseLostError):
        queue.renew(claimed.request_id, "w1", lease_s=60)
    with pytest.raises(InvalidTransitionError, match="already CANCELLED"):
        queue.cancel(claimed.request_id)


def test_requeue_resets_a_failed_request(queue: RequestQueue) -> None:
    queue.add(make_request("org/a"))
    claimed = queue.claim_next("w1", lease_s=60)
    assert claimed is not None
    queue.fail(claimed.request_id, "w1", "CUDA out of memory")
    requeued = queue.requeue(claimed.request_id)
    assert requeued.status is Status.PENDING
    assert requeued.error is None and requeued.attempts == 0
    assert [h["status"] for h in requeued.history] == ["RUNNING", "FAILED", "PENDING"]


def test_requeue_of_a_pending_request_is_refused(queue: RequestQueue) -> None:
    added = queue.add(make_request("org/a"))
    with pytest.raises(InvalidTransitionError, match="only FINISHED, FAILED or CANCELLED"):
        queue.requeue(added.request_id)


def test_fair_order_interleaves_submitters_by_their_oldest_request() -> None:
    flood = [make_request(f"bob/m{i}", by="bob", minutes=i) for i in range(5)]
    late = make_request("carol/m", by="carol", minutes=30)
    order = [r.model for r in fair_order([*flood, late])]
    assert order == ["bob/m0", "carol/m", "bob/m1", "bob/m2", "bob/m3", "bob/m4"]


def test_fair_order_counts_running_requests_against_their_submitter() -> None:
    running = make_request("bob/run", by="bob").model_copy(update={"status": Status.RUNNING})
    bob_next = make_request("bob/m1", by="bob", minutes=1)
    carol = make_request("carol/m", by="carol", minutes=9)
    assert [r.model for r in fair_order([running, bob_next, carol])] == ["carol/m", "bob/m1"]


@pytest.mark.parametrize("revision", ["main", "my_branch", "v1.0-rc_2", "0123456789abcdef0123"])
def test_request_path_round_trips_for_any_revision(revision: str) -> None:
    request = make_request("org/name_with_underscores").model_copy(update={"revision": revision})
    parsed = parse_request_path(request.path)
    assert (parsed.org, parsed.name, parsed.precision) == ("org", "name_with_underscores", "bfloat16")
    assert parsed.revision == revision[:12]
    assert EvalRequest.from_json(request.to_json(), request.path) == request


def test_a_long_failure_log_keeps_its_headline_and_its_end(queue: RequestQueue) -> None:
    queue.add(make_request("org/a"))
    claimed = queue.claim_next("w1", lease_s=60)
    assert claimed is not None
    log = "RuntimeError: CUDA out of memory\n" + "x" * 20_000 + "\nlast line"
    error = queue.fail(claimed.request_id, "w1", log).error or ""
    assert len(error) <= 8000
    assert error.startswith("RuntimeError: CUDA out of memory") and error.endswith("last line")


def test_claims_interleave_submitters(queue: RequestQueue) -> None:
    for i in range(3):
        queue.add(make_request(f"bob/m{i}", by="bob", minutes=i))
    queue.add(make_request("carol/m", by="carol", minutes=10))
    order = []
    while (claimed := queue.claim_next("w", lease_s=60)) is not None:
        order.append(claimed.model)
    assert order == ["bob/m0", "carol/m", "bob/m1", "bob/m2"]


def test_listing_from_several_threads_while_a_file_disappears_does_not_break(store: Storage) -> None:
    import contextlib
    import threading

    queue = RequestQueue(store)
    gone = queue.add(make_request("org/gone"))
    queue.add(make_request("org/kept", minutes=1))
    queue.listing()  # both cached
    store.delete(gone.path)
    both_pruning = threading.Barrier(2)

    class RacyCache(dict):  # type: ignore[type-arg]
        def keys(self):  # type: ignore[no-untyped-def]
            # Let both threads decide what to prune before either prunes.
            snapshot = set(super().keys())
            with contextlib.suppress(threading.BrokenBarrierError):
                both_pruning.wait(timeout=1)
            return snapshot

    queue._parsed = RacyCache(queue._parsed)
    errors: list[BaseException] = []

    def list_once() -> None:
        try:
            assert [r.model for r in queue.listing().requests] == ["org/kept"]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=list_once) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
