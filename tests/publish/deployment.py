"""A deployment for the publish tests: stores (local or on the faulty hub), a fake run, recovery, invariants.

The worker is the real one (:func:`backend.worker.run_once`) with a fake runner
(:func:`fake_evaluate`: no model, always succeeds), short leases and short retry pauses.
A *round* is one ``run_once`` on freshly opened stores, like one ``--once`` process.
Between rounds the queue's clock jumps past every lease (:class:`Deployment` keeps the
offset), which stands for "wait until the lease expires" without waiting.

:func:`violations` checks the invariants every scenario must end with; it returns
readable strings (empty: none), so a parametrized test can report every broken one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from huggingface_hub import HfApi

from backend.config import Outcome, WorkerConfig
from backend.provenance import Publication, stamp_request
from backend.tracks import Evaluation, RunContext
from backend.worker import run_once
from eval_queue import doctor
from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, Status, isoformat, utc_now
from eval_queue.retry import StoreRetry
from eval_queue.storage import LocalStorage, Stores
from eval_queue.storage.hub import DETAILS_FOLDER, HubRepo, HubStorage, RetryPolicy
from eval_queue.storage.local import _TEMP_RE, _sweep_temps_of
from leaderboard.core.contents import CONTENTS_PATH
from leaderboard.core.schema import RunInfo
from leaderboard.store import is_results_file
from leaderboard.tracks.evalita.schema import PromptScore, ResultsFile, TaskResult
from tests.publish.faulty_hub import FaultyHub
from tests.publish.faulty_store import StoreFault, faulty

TOKEN = "hf_FAKEtokenForPublishTests"
LEASE_S = 30.0
#: Rounds of recovery after which a scenario that has not settled is a violation.
MAX_ROUNDS = 8
#: A round that takes longer than this was blocked: far beyond any timeout and retry here.
BLOCKED_ROUND_S = 60.0
#: Retries with pauses short enough for tests (the policy is the real one).
FAST_RETRY = StoreRetry(attempts=4, base_s=0.001, max_s=0.01)


def config(worker_id: str = "w1", *, heartbeat_s: float = 30.0, blocked_s: float = 600.0) -> WorkerConfig:
    """A worker whose heartbeat, unless asked, never beats within a round (the call sequence is fixed)."""
    return WorkerConfig(
        worker_id=worker_id,
        lease_s=LEASE_S,
        heartbeat_every_s=heartbeat_s,
        blocked_s=blocked_s,
        store_retry=FAST_RETRY,
    )


def fake_evaluation(request: EvalRequest) -> Publication:
    """Two details files and a results file, stamped as the worker stamps them (the real path rule)."""
    return stamp_request(request, "fake", fake_run(request))


def fake_run(request: EvalRequest) -> Evaluation:
    """What a runner hands the worker: a run block, a body, two details files by name."""
    line = b'{"doc_id": 0, "input": "x", "answer": "y", "target": "y", "score": 1.0}\n'
    return Evaluation(
        RunInfo(num_fewshot=request.num_fewshot, data="sample", finished_at=isoformat(utc_now())),
        {"tasks": {"te": TaskResult(metric="acc", prompts={"p1": PromptScore(score=0.5, n=1)})}},
        {"te_p1.jsonl": line, "te_p2.jsonl": line},
    )


def fake_evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
    context.progress.beat("fake run")
    return fake_run(request)


@dataclass
class Deployment:
    """One deployment's stores; ``open_stores()`` gives a fresh view (a new process)."""

    open_stores: Callable[[], Stores]
    backend: str
    root: Path
    fault: StoreFault = field(default_factory=StoreFault)
    clock_offset_s: float = 0.0
    rounds: list[tuple[str, Outcome, float]] = field(default_factory=list)
    #: Reads a request file without going through any fault (the test's own eyes).
    peek_file: Callable[[str], bytes] | None = None

    def peek(self, request_id: str) -> EvalRequest:
        assert self.peek_file is not None
        path = f"{request_id}.json"
        return EvalRequest.from_json(self.peek_file(path), path)

    def clock(self) -> datetime:
        return utc_now() + timedelta(seconds=self.clock_offset_s)

    def queue(self, stores: Stores) -> RequestQueue:
        return RequestQueue(stores.requests, clock=self.clock, results=stores.results)

    def submit(self, count: int = 1) -> list[str]:
        stores = self.open_stores()
        queue = self.queue(stores)
        ids = []
        for i in range(count):
            request = EvalRequest(
                model=f"org/model-{i}",
                revision=f"{i:040x}",
                submitted_by=f"user{i}",
                submitted_time=isoformat(utc_now() - timedelta(seconds=count - i)),
            )
            ids.append(queue.add(request).request_id)
        return ids

    def run_round(
        self,
        worker: WorkerConfig,
        evaluate: Callable[[EvalRequest, WorkerConfig, RunContext], Evaluation] = fake_evaluate,
        *,
        stores: Stores | None = None,
    ) -> Outcome:
        stores = stores or self.open_stores()
        started = time.monotonic()
        outcome = run_once(stores, self.queue(stores), worker, evaluate)
        self.rounds.append((worker.worker_id, outcome, time.monotonic() - started))
        return outcome

    def expire_leases(self) -> None:
        """Every lease given so far has lapsed (the time a dead worker's lease takes)."""
        self.clock_offset_s += LEASE_S + 1

    def recover(self, worker_id: str = "rescuer") -> None:
        """Run fault-free rounds (leases expiring between them) until nothing is active."""
        self.fault.armed = False
        for _ in range(MAX_ROUNDS):
            self.expire_leases()
            stores = self.open_stores()
            listing = self.queue(stores).listing()
            if not any(r.status in (Status.PENDING, Status.RUNNING) for r in listing.requests):
                return
            self.run_round(config(worker_id), stores=stores)


def local_deployment(root: Path, fault: StoreFault | None = None) -> Deployment:
    """A local deployment under ``root`` whose stores ask ``fault`` before every call."""
    fault = fault or StoreFault()

    def open_stores() -> Stores:
        return faulty(
            Stores(
                requests=LocalStorage(root / "requests", lock_timeout_s=5),
                results=LocalStorage(root / "results", lock_timeout_s=5),
                details=LocalStorage(root / "details", lock_timeout_s=5),
            ),
            fault,
        )

    return Deployment(open_stores, "local", root, fault, peek_file=LocalStorage(root / "requests").read)


_REPO_NUMBER = iter(range(1_000_000))
_REPO_LOCK = threading.Lock()


def hub_deployment(hub: FaultyHub, root: Path) -> Deployment:
    """Two fresh repos on ``hub``; every store opened talks to it through the real client."""
    with _REPO_LOCK:
        number = next(_REPO_NUMBER)
    requests_repo, results_repo = f"t{number}/requests", f"t{number}/results"
    hub.add_repo("datasets", requests_repo)
    hub.add_repo("datasets", results_repo)
    caches = iter(range(1_000_000))

    def open_stores() -> Stores:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        cache = root / f"hub-cache-{next(caches)}"
        # Short pauses between lost races; the 12 attempts are the real budget.
        cas = RetryPolicy(base_s=0.001, max_s=0.005)
        requests = HubRepo(api, requests_repo, token=TOKEN, cache_dir=cache, retry=cas)
        results = HubRepo(api, results_repo, token=TOKEN, cache_dir=cache, retry=cas, max_staleness_s=5.0)
        return Stores(
            requests=HubStorage(requests),
            results=HubStorage(results, exclude=(DETAILS_FOLDER,)),
            details=HubStorage(results, folder=DETAILS_FOLDER),
        )

    repo = hub.repos[("datasets", requests_repo)]

    def peek_file(path: str) -> bytes:
        with hub.lock:
            return repo.files[path]

    return Deployment(open_stores, "hub", root, peek_file=peek_file)


def violations(deployment: Deployment, request_ids: list[str], *, max_attempts: int = 0) -> list[str]:
    """The invariants after recovery; each broken one as a line naming the request."""
    found: list[str] = []
    deployment.fault.armed = False
    stores = deployment.open_stores()
    queue = deployment.queue(stores)
    listing = queue.listing()
    by_id = {r.request_id: r for r in listing.requests}
    results_files: dict[str, list[str]] = {}
    for path in filter(is_results_file, stores.results.list()):  # not contents.parquet beside them
        results = ResultsFile.from_json(stores.results.read(path), path)
        results_files.setdefault(results.run.request_id or "?", []).append(path)
    for rid in request_ids:
        request = by_id.get(rid)
        if request is None:
            found.append(f"{rid}: request missing or unreadable")
            continue
        if request.status is not Status.FINISHED:
            found.append(
                f"{rid}: {request.status.value}, not FINISHED ({request.error or request.history[-1:]})"
            )
        if request.attempts > max_attempts:
            found.append(f"{rid}: {request.attempts} attempts counted")
        files = results_files.get(rid, [])
        if len(files) != 1:
            found.append(f"{rid}: {len(files)} results files {files}")
        if request.status is Status.FINISHED and request.results_path not in files:
            found.append(f"{rid}: FINISHED without its results ({request.results_path})")
    findings = doctor.examine(stores, queue)
    found += [f"unreferenced details folder {folder}" for folder in findings.orphan_details]
    if deployment.backend == "local":
        # A worker killed while writing the contents table leaves its temporary file until the
        # table's next write — any later publish —, which removes it (``_sweep_temps_of``, as for
        # every path): what that write does is done here, and anything else left is debris.
        _sweep_temps_of(deployment.root / "results" / CONTENTS_PATH)
        found += [f"temporary file left: {path}" for path in hidden_temp_files(deployment.root)]
    found += [
        f"round of {who} blocked for {took:.0f} s ({outcome.name})"
        for who, outcome, took in deployment.rounds
        if took > BLOCKED_ROUND_S
    ]
    return found


def hidden_temp_files(root: Path) -> list[str]:
    return sorted(
        str(p.relative_to(root)) for p in root.rglob(".*") if p.is_file() and _TEMP_RE.match(p.name)
    )
