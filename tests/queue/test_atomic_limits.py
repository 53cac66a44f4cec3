"""The rate limit holds under concurrency: N simultaneous submissions at limit L accept exactly L.

Run on the local store and on the hub double (the real ``huggingface_hub`` client against
``FakeHub``), through ``submit()`` and through the app's ``AppContext.submit``; the spoofed
``X-Forwarded-For`` variant goes through the app's identity too.  Each test runs several
rounds and prints ``N, L, accepted`` per round (``pytest -s``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import gradio as gr
import pytest
from huggingface_hub import HfApi

from eval_queue.errors import StoreUnavailableError, SubmissionRejected
from eval_queue.ledger import Ledger, ledger_path
from eval_queue.queue import RequestQueue, submitter_key
from eval_queue.resolver import CacheModelResolver
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage, Stores
from eval_queue.storage.hub import HubRepo, HubStorage, RetryPolicy
from eval_queue.submission import SubmissionForm, submit
from leaderboard.ui.context import AppContext
from tests.queue.conftest import FAKE_TOKEN, REQUESTS_REPO, RESULTS_REPO
from tests.queue.hf_cache import make_cache_entry

N = 8
LIMIT = 3
ROUNDS = 3
NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@dataclass
class Deployment:
    stores: Stores
    settings: Settings
    label: str


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    cache = tmp_path / "hf-cache"
    for i in range(N * ROUNDS):
        make_cache_entry(cache, f"org/model-{i}")
    return cache


@pytest.fixture
def deployment(backend: str, tmp_path: Path, cache: Path, request: pytest.FixtureRequest) -> Deployment:
    settings = Settings(
        data_dir=tmp_path / "data", hf_hub_cache=cache, hf_offline=True, submission_limit=LIMIT
    )
    if backend == "local":
        root = settings.data_dir
        stores = Stores(
            LocalStorage(root / "requests"), LocalStorage(root / "results"), LocalStorage(root / "details")
        )
    else:
        hub = request.getfixturevalue("fake_hub")
        api = HfApi(endpoint=hub.url, token=FAKE_TOKEN)

        def repo(name: str) -> HubRepo:
            return HubRepo(
                api, name, token=FAKE_TOKEN, cache_dir=tmp_path / "hub-cache", retry=RetryPolicy(base_s=0.01)
            )

        results = repo(RESULTS_REPO)
        stores = Stores(
            HubStorage(repo(REQUESTS_REPO)),
            HubStorage(results, exclude=("details/",)),
            HubStorage(results, folder="details/"),
        )
    return Deployment(stores, settings, backend)


def race(count: int, attempt: Callable[[int], object]) -> tuple[int, list[str]]:
    """Run ``attempt(i)`` for ``i < count`` in threads released together; (accepted, refusals)."""
    barrier = threading.Barrier(count)
    accepted: list[int] = []
    refusals: list[str] = []
    lock = threading.Lock()

    def run(i: int) -> None:
        barrier.wait()
        try:
            attempt(i)
        except SubmissionRejected as exc:
            with lock:
                refusals.append(exc.message)
        else:
            with lock:
                accepted.append(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return len(accepted), refusals


def stored_requests_of(queue: RequestQueue, who: str) -> int:
    return sum(submitter_key(r.submitted_by) == submitter_key(who) for r in queue.listing().requests)


def test_concurrent_submissions_through_submit_accept_exactly_the_limit(deployment: Deployment) -> None:
    queue = RequestQueue(deployment.stores.requests)
    resolver = CacheModelResolver(deployment.settings.hf_hub_cache)
    for round_ in range(ROUNDS):
        who = f"mallory{round_}"

        def attempt(i: int, who: str = who, round_: int = round_) -> None:
            form = SubmissionForm(f"org/model-{round_ * N + i}", submitted_by=who)
            submit(queue, form, resolver=resolver, settings=deployment.settings, now=NOW)

        accepted, refusals = race(N, attempt)
        print(f"{deployment.label} submit() round {round_}: N={N} L={LIMIT} accepted={accepted}")
        assert accepted == LIMIT
        assert all(message.startswith(f"rate limit: {who} has submitted") for message in refusals)
        assert stored_requests_of(queue, who) == LIMIT
        ledger = Ledger.from_json(deployment.stores.requests.read(ledger_path(who)), "ledger")
        assert len(ledger.entries) == LIMIT


def test_concurrent_submissions_through_the_app_accept_exactly_the_limit_whatever_the_headers(
    deployment: Deployment,
) -> None:
    ctx = AppContext(deployment.settings, deployment.stores, RequestQueue(deployment.stores.requests))
    for round_ in range(ROUNDS):
        peer = f"203.0.113.{round_ + 1}"

        def attempt(i: int, peer: str = peer, round_: int = round_) -> None:
            # Every submission spoofs a different forwarded address: with no trusted proxy
            # configured, the direct peer decides who submits.
            request = gr.Request(headers={"x-forwarded-for": f"198.51.100.{i}"}, client={"host": peer})
            ctx.submit(
                model=f"org/model-{round_ * N + i}",
                revision="main",
                precision="bfloat16",
                fewshot=[0],
                model_type=None,
                submitted_by=ctx.submitter(request, None),
            )

        accepted, refusals = race(N, attempt)
        print(f"{deployment.label} AppContext.submit round {round_}: N={N} L={LIMIT} accepted={accepted}")
        assert accepted == LIMIT
        assert all(message.startswith("rate limit: web-") for message in refusals)


def test_a_submission_asking_for_more_than_the_limit_is_refused_whole(deployment: Deployment) -> None:
    queue = RequestQueue(deployment.stores.requests)
    settings = Settings(
        data_dir=deployment.settings.data_dir,
        hf_hub_cache=deployment.settings.hf_hub_cache,
        submission_limit=1,
    )
    with pytest.raises(SubmissionRejected, match="asks for 2 evaluations but the limit is 1"):
        submit(
            queue,
            SubmissionForm("org/model-0", num_fewshot=(0, 5)),
            resolver=CacheModelResolver(settings.hf_hub_cache),
            settings=settings,
        )
    assert queue.listing().requests == []


def test_a_lost_duplicate_race_gives_the_reservation_back(deployment: Deployment) -> None:
    queue = RequestQueue(deployment.stores.requests)
    resolver = CacheModelResolver(deployment.settings.hf_hub_cache)

    def attempt(i: int) -> None:  # everyone submits the same model
        submit(
            queue,
            SubmissionForm("org/model-0", submitted_by="zed"),
            resolver=resolver,
            settings=deployment.settings,
            now=NOW,
        )

    accepted, refusals = race(4, attempt)
    assert accepted == 1
    # Four racers, a limit of three: while the other three hold their reservations a fourth may
    # be refused by the limit instead (a reservation counts until it is given back); never more.
    duplicates = [m for m in refusals if m.startswith("duplicate:")]
    by_limit = [m for m in refusals if "the limit is 3" in m]
    assert len(duplicates) + len(by_limit) == len(refusals) == 3 and len(by_limit) <= 1, refusals
    ledger = Ledger.from_json(deployment.stores.requests.read(ledger_path("zed")), "ledger")
    assert [e.request for e in ledger.entries] == [r.request_id for r in queue.listing().requests]


def test_when_the_store_is_down_the_app_says_why_and_writes_nothing(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "requests").write_text("a file where the queue's folder should be")
    settings = Settings(data_dir=tmp_path / "data", hf_hub_cache=cache, hf_offline=True, submitter_salt="s")
    root = settings.data_dir
    stores = Stores(
        LocalStorage(root / "requests"), LocalStorage(root / "results"), LocalStorage(root / "details")
    )
    ctx = AppContext(settings, stores, RequestQueue(stores.requests))
    with pytest.raises(StoreUnavailableError) as info:
        ctx.submit(
            model="org/model-0",
            revision="main",
            precision="bfloat16",
            fewshot=[0],
            model_type=None,
            submitted_by="amy",
        )
    assert info.value.message.startswith("the queue could not be reached, so nothing was submitted (")
    assert info.value.message.endswith("please try again later.")
