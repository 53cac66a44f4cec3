"""The queue tab says truthfully what a RUNNING request is doing, finishing included."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from eval_queue.queue import QueueListing
from eval_queue.requests import EvalRequest, RunPhase, Status, isoformat_ms
from leaderboard.views.queue import queue_view

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _running(model: str, phase: RunPhase | None, *, expired: bool = False) -> EvalRequest:
    lease = NOW + timedelta(seconds=-5 if expired else 300)
    return EvalRequest(
        model=model,
        revision="a" * 40,
        submitted_time="2026-03-01T10:00:00Z",
        status=Status.RUNNING,
        claimed_by="gpu-1",
        lease_expires=isoformat_ms(lease),
        phase=phase,
        results_path="org/p/results.json" if phase is RunPhase.PUBLISHING else None,
    )


def test_running_requests_show_their_stage_and_what_a_lapsed_lease_leads_to() -> None:
    requests = [
        _running("org/c", RunPhase.CLAIMED),
        _running("org/o", None),  # written before phases existed
        _running("org/p", RunPhase.PUBLISHING),
        _running("org/q", RunPhase.PUBLISHING, expired=True),
        _running("org/r", RunPhase.RUNNING, expired=True),
    ]
    view = queue_view(QueueListing(requests, [], NOW), NOW)
    stages = dict(zip(view.running["Model"], view.running["Stage"], strict=True))
    assert stages["org/c"] == "starting"
    assert stages["org/o"] == "running"
    assert stages["org/p"] == "finishing: publishing results"
    assert stages["org/q"].startswith("finishing: publishing results — worker stopped renewing its lease")
    assert "finished at the next claim if its results are in" in stages["org/q"]
    assert "counted as an attempt" in stages["org/r"]
