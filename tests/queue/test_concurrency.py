"""Several real processes racing over one queue, on both backends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, Status, isoformat
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from tests.queue.conftest import FAKE_TOKEN, REQUESTS_REPO, RESULTS_REPO

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 8
REQUESTS = 50


@pytest.fixture
def worker_env(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment a worker process gets: the same store as ``queue`` below."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALITA_", "HF_"))}
    env.update(EVALITA_DATA_DIR=str(tmp_path), PYTHONPATH=str(ROOT), HF_HUB_DISABLE_TELEMETRY="1")
    if backend == "hub":
        hub = request.getfixturevalue("fake_hub")
        env.update(
            EVALITA_REQUESTS_REPO=REQUESTS_REPO,
            EVALITA_RESULTS_REPO=RESULTS_REPO,
            HF_TOKEN=FAKE_TOKEN,
            HF_ENDPOINT=hub.url,
            HF_HUB_OFFLINE="0",  # the endpoint is the fake hub on 127.0.0.1
        )
    else:
        env["HF_HUB_OFFLINE"] = "1"
    return env


@pytest.fixture
def queue(worker_env: dict[str, str]) -> RequestQueue:
    return RequestQueue(open_stores(Settings.from_env(worker_env)).requests)


def fill(queue: RequestQueue, count: int) -> set[str]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    ids = set()
    for i in range(count):
        request = EvalRequest(
            model=f"org{i % 5}/model-{i}",
            revision="abc123",
            submitted_by=f"user{i % 5}",
            submitted_time=isoformat(start + timedelta(seconds=i)),
        )
        ids.add(queue.add(request).request_id)
    return ids


def claimer(env: dict[str, str], mode: str, worker: str, lease: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.queue.claimer", mode, "--worker", worker, "--lease", str(lease)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_racing_workers_claim_every_request_exactly_once(
    queue: RequestQueue, worker_env: dict[str, str]
) -> None:
    ids = fill(queue, REQUESTS)
    procs = [claimer(worker_env, "drain", f"w{n}", 60) for n in range(WORKERS)]
    for proc in procs:  # wait until every worker has started up, then release them at once
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    started = time.monotonic()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.close()
    claims: Counter[str] = Counter()
    by_worker: dict[str, str] = {}
    for n, proc in enumerate(procs):
        assert proc.stdout is not None and proc.stderr is not None
        proc.wait(timeout=90)
        out, err = proc.stdout.read(), proc.stderr.read()
        assert proc.returncode == 0, err
        for line in out.splitlines():
            request_id = line.removeprefix("claimed ")
            claims[request_id] += 1
            by_worker[request_id] = f"w{n}"
    elapsed = time.monotonic() - started
    assert set(claims) == ids
    assert len(set(by_worker.values())) > 1, "only one worker got to claim anything"
    assert max(claims.values()) == 1
    listing = queue.listing()
    assert all(r.status is Status.FINISHED for r in listing.requests)
    assert {r.request_id: r.claimed_by for r in listing.requests} == by_worker
    assert elapsed < 60, f"took {elapsed:.1f}s"
    per_worker = sorted(Counter(by_worker.values()).values(), reverse=True)
    print(f"{WORKERS} workers drained {REQUESTS} requests in {elapsed:.1f}s; claims per worker {per_worker}")


def test_request_of_a_killed_worker_is_claimable_after_its_lease_and_completes(
    queue: RequestQueue, worker_env: dict[str, str]
) -> None:
    (request_id,) = fill(queue, 1)
    lease = 4.0  # long enough that a loaded machine still checks "held" before it ends
    proc = claimer(worker_env, "hold", "doomed", lease)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the claim is recorded
    assert line.strip() == f"claimed {request_id}", proc.stderr.read() if proc.stderr else ""
    time.sleep(1.5)  # mid-run, after the first heartbeat (every lease/3) is due
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    orphan = queue.get(request_id)
    assert orphan.status is Status.RUNNING and orphan.claimed_by == "doomed"
    assert queue.claim_next("rescuer", lease_s=30) is None  # the lease still holds

    deadline = time.monotonic() + 10 * lease
    claimed = None
    while claimed is None and time.monotonic() < deadline:
        time.sleep(0.2)
        claimed = queue.claim_next("rescuer", lease_s=30)
    assert claimed is not None and claimed.request_id == request_id
    assert claimed.attempts == 1
    done = queue.finish(request_id, "rescuer", "org0/model-0/results.json")
    assert done.status is Status.FINISHED
    assert [h["status"] for h in done.history] == ["RUNNING", "PENDING", "RUNNING", "FINISHED"]
