"""The queue's side of publishing: run phases, expired leases judged by phase, changes that accept their own result."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from eval_queue.errors import LeaseLostError, MalformedFileError, StorageError, TransientStorageError
from eval_queue.publication import details_prefix, run_stamp
from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, RunPhase, Status, isoformat, utc_now
from eval_queue.storage import LocalStorage
from eval_queue.storage.base import Storage, Transform
from tests.publish.faulty_store import FaultyStorage, StoreFault, StoreFaultKind

T0 = datetime(2026, 3, 1, 9, 0, 0, tzinfo=utc_now().tzinfo)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def results(tmp_path: Path) -> LocalStorage:
    return LocalStorage(tmp_path / "results")


@pytest.fixture
def queue(tmp_path: Path, clock: Clock, results: LocalStorage) -> RequestQueue:
    return RequestQueue(LocalStorage(tmp_path / "requests"), clock=clock, results=results)


def _add(queue: RequestQueue, model: str = "org/m") -> str:
    request = EvalRequest(model=model, revision="a" * 40, submitted_time=isoformat(T0 - timedelta(hours=1)))
    return queue.add(request).request_id


def _claimed(queue: RequestQueue, worker: str = "w1") -> EvalRequest:
    claimed = queue.claim_next(worker, lease_s=10)
    assert claimed is not None
    return claimed


def test_a_claim_records_its_phase_and_names_the_run_after_the_first_claim(queue: RequestQueue) -> None:
    rid = _add(queue)
    claimed = _claimed(queue)
    assert claimed.phase is RunPhase.CLAIMED
    assert claimed.run_stamp == "2026-03-01T09:00:00Z"
    assert run_stamp(claimed) == "2026-03-01T09:00:00Z"
    assert details_prefix(claimed) == "org/m/2026-03-01T09-00-00Z_"
    assert queue.start(rid, "w1", lease_s=10).phase is RunPhase.RUNNING


def test_a_lease_lost_before_the_run_started_is_not_counted_however_often(
    queue: RequestQueue, clock: Clock
) -> None:
    # The claim's answer lost three times (or the worker dying right after claiming):
    # before, the third reap made it FAILED "the run probably crashes the worker".
    rid = _add(queue)
    for attempt in range(4):
        _claimed(queue, f"w{attempt}")
        clock.advance(11)
        (reaped,) = queue.reap_expired()
        assert reaped.status is Status.PENDING and reaped.attempts == 0
        assert "before it started the run" in reaped.history[-1]["note"]
    assert queue.get(rid).error is None


def test_a_rerun_after_a_lost_lease_keeps_the_run_stamp_and_a_requeue_starts_a_new_one(
    queue: RequestQueue, clock: Clock
) -> None:
    rid = _add(queue)
    first = _claimed(queue)
    queue.start(rid, "w1", lease_s=10)
    clock.advance(3600)
    again = _claimed(queue, "w2")  # reaped first: the lost run counted once
    assert again.attempts == 1 and again.run_stamp == first.run_stamp
    queue.release(rid, "w2", "SIGTERM")
    assert _claimed(queue, "w3").run_stamp == first.run_stamp
    queue.finish(rid, "w3", "org/m/results.json")
    assert queue.requeue(rid).run_stamp is None
    clock.advance(60)
    assert _claimed(queue, "w4").run_stamp == "2026-03-01T10:01:00Z"


def test_a_publishing_run_whose_results_are_in_is_finished_when_its_lease_expires(
    queue: RequestQueue, clock: Clock, results: LocalStorage
) -> None:
    rid = _add(queue)
    _claimed(queue)
    queue.start(rid, "w1", lease_s=10)
    queue.begin_publishing(rid, "w1", 10, "org/m/results_x.json")
    results.write("org/m/results_x.json", b"{}")
    clock.advance(11)
    (finished,) = queue.reap_expired()
    assert finished.status is Status.FINISHED and finished.attempts == 0
    assert finished.results_path == "org/m/results_x.json" and finished.phase is None
    assert "results found in org/m/results_x.json" in finished.history[-1]["note"]
    # The worker that was publishing comes back: its finish is already done.
    assert queue.finish(rid, "w1", "org/m/results_x.json").status is Status.FINISHED


def test_a_publishing_run_without_its_results_goes_back_uncounted(queue: RequestQueue, clock: Clock) -> None:
    rid = _add(queue)
    _claimed(queue)
    queue.start(rid, "w1", lease_s=10)
    queue.begin_publishing(rid, "w1", 10, "org/m/results_x.json")
    clock.advance(11)
    (back,) = queue.reap_expired()
    assert back.status is Status.PENDING and back.attempts == 0
    assert back.results_path is None and back.phase is None
    assert queue.get(rid).run_stamp is not None  # the rerun writes the same paths


def test_an_expired_publishing_run_is_left_alone_while_the_results_store_cannot_say(
    tmp_path: Path, clock: Clock
) -> None:
    fault = StoreFault(StoreFaultKind.UNAVAILABLE, at=0, armed=True)
    results = FaultyStorage(LocalStorage(tmp_path / "results"), fault, "results")
    queue = RequestQueue(LocalStorage(tmp_path / "requests"), clock=clock, results=results)
    rid = _add(queue)
    _claimed(queue)
    queue.start(rid, "w1", lease_s=10)
    queue.begin_publishing(rid, "w1", 10, "org/m/results_x.json")
    clock.advance(11)
    assert queue.reap_expired() == []
    assert queue.get(rid).phase is RunPhase.PUBLISHING
    assert [r.status for r in queue.reap_expired()] == [Status.PENDING]  # the store answers again


def test_worker_changes_accept_their_own_earlier_result(queue: RequestQueue) -> None:
    rid = _add(queue)
    _claimed(queue)
    for _ in range(2):  # each twice: the second as after a lost answer
        assert queue.start(rid, "w1", lease_s=10).phase is RunPhase.RUNNING
    for _ in range(2):
        assert queue.begin_publishing(rid, "w1", 10, "p.json").phase is RunPhase.PUBLISHING
    first = queue.finish(rid, "w1", "p.json")
    assert queue.finish(rid, "w1", "p.json") == first
    with pytest.raises(LeaseLostError):
        queue.finish(rid, "w1", "another.json")
    with pytest.raises(LeaseLostError):
        queue.start(rid, "w1", lease_s=10)


def test_fail_and_release_accept_their_own_earlier_result_but_not_another_workers(
    queue: RequestQueue,
) -> None:
    failing, releasing = _add(queue, "org/a"), _add(queue, "org/b")
    _claimed(queue, "w1")
    _claimed(queue, "w2")
    assert queue.fail(failing, "w1", "boom").status is Status.FAILED
    assert queue.fail(failing, "w1", "boom").status is Status.FAILED
    with pytest.raises(LeaseLostError):
        queue.fail(failing, "w2", "boom")
    assert queue.release(releasing, "w2", "stop").status is Status.PENDING
    assert queue.release(releasing, "w2", "stop").status is Status.PENDING
    with pytest.raises(LeaseLostError):
        queue.release(releasing, "w1", "stop")


class _ClaimAppliedAnswerLost(FaultyStorage):
    """The first update is applied and its answer lost; so, optionally, is the read back."""

    def __init__(self, inner: Storage, *, read_back_fails: bool = False) -> None:
        super().__init__(inner, StoreFault(), "requests")
        self.updates = 0
        self.read_back_fails = read_back_fails

    def update(self, path: str, transform: Transform, *, message: str = "") -> bytes:
        self.updates += 1
        written = self.inner.update(path, transform, message=message)
        if self.updates == 1:
            raise TransientStorageError("injected: timed out")
        return written

    def read(self, path: str, *, max_bytes: int | None = None) -> bytes:
        if self.updates and self.read_back_fails:
            raise TransientStorageError("injected: still down")
        return self.inner.read(path, max_bytes=max_bytes)


def test_a_claim_whose_answer_was_lost_is_read_back_and_run(tmp_path: Path, clock: Clock) -> None:
    store = _ClaimAppliedAnswerLost(LocalStorage(tmp_path / "requests"))
    queue = RequestQueue(store, clock=clock)
    rid = _add(queue)
    claimed = queue.claim_next("w1", lease_s=10)
    assert claimed is not None and claimed.request_id == rid and claimed.claimed_by == "w1"


def test_a_claim_that_cannot_be_read_back_reports_the_store_and_is_not_counted_later(
    tmp_path: Path, clock: Clock
) -> None:
    store = _ClaimAppliedAnswerLost(LocalStorage(tmp_path / "requests"), read_back_fails=True)
    queue = RequestQueue(store, clock=clock)
    rid = _add(queue)
    with pytest.raises(TransientStorageError):
        queue.claim_next("w1", lease_s=10)
    store.read_back_fails = False
    clock.advance(11)
    assert [(r.status, r.attempts) for r in queue.reap_expired()] == [(Status.PENDING, 0)]
    assert queue.get(rid).status is Status.PENDING


def test_a_run_stamp_that_is_not_a_time_makes_the_request_malformed(queue: RequestQueue) -> None:
    # It names files: a crafted one must never reach a path.
    rid = _add(queue)
    raw = json.loads(queue.get(rid).to_json())
    queue.storage.write(f"{rid}.json", json.dumps(raw | {"run_stamp": "../../etc"}).encode())
    with pytest.raises(MalformedFileError):
        queue.get(rid)


def test_the_max_attempts_reason_speaks_of_runs_that_were_under_way(
    queue: RequestQueue, clock: Clock
) -> None:
    queue.max_attempts = 2
    rid = _add(queue)
    for worker in ("w1", "w2"):
        _claimed(queue, worker)
        queue.start(rid, worker, lease_s=10)
        clock.advance(11)
        queue.reap_expired()
    failed = queue.get(rid)
    assert failed.status is Status.FAILED
    assert "expired lease during the run" in (failed.error or "")


def test_storage_errors_say_whether_trying_again_may_help() -> None:
    from eval_queue.errors import AlreadyExistsError, ConflictError
    from eval_queue.retry import is_transient

    assert is_transient(TransientStorageError("503")) and is_transient(ConflictError("busy"))
    assert not is_transient(AlreadyExistsError("there")) and not is_transient(StorageError("403"))


def test_the_worker_names_every_runs_outputs_after_the_request_run_stamp() -> None:
    # One place stamps every track's outputs (backend.provenance): the run stamp, not the finish time.
    from backend.provenance import stamp_request
    from backend.tracks import Evaluation
    from leaderboard.core.schema import RunInfo
    from leaderboard.tracks.evalita.schema import PromptScore, TaskResult

    evaluation = Evaluation(
        RunInfo(num_fewshot=0, data="sample", finished_at="2026-03-01T11:00:00Z"),
        {"tasks": {"te": TaskResult(metric="acc", prompts={"p1": PromptScore(score=0.5, n=4)})}},
        {"te_p1.jsonl": b"{}\n"},
    )
    claimed = EvalRequest(
        model="org/m",
        revision="c" * 40,
        submitted_time="2026-03-01T08:00:00Z",
        run_stamp="2026-03-01T09:30:00Z",
    )
    published = stamp_request(claimed, "w1", evaluation)
    assert "2026-03-01T09-30-00Z" in published.results_path
    assert all(path.startswith("org/m/2026-03-01T09-30-00Z_") for path in published.details)
    never_claimed = claimed.model_copy(update={"run_stamp": None})
    assert "2026-03-01T08-00-00Z" in stamp_request(never_claimed, "w1", evaluation).results_path


def test_a_crafted_results_path_is_never_taken_for_published_results(
    queue: RequestQueue, clock: Clock
) -> None:
    rid = _add(queue)
    _claimed(queue)
    queue.start(rid, "w1", lease_s=10)
    queue.begin_publishing(rid, "w1", 10, "../../etc/passwd")
    clock.advance(11)
    (back,) = queue.reap_expired()
    assert back.status is Status.PENDING and back.results_path is None
