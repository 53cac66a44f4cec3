"""The evaluation queue and the submission messages, as tables and Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

from eval_queue.queue import QueueListing, QueueState, fair_order
from eval_queue.requests import EvalRequest, RunPhase, Status, parse_time
from eval_queue.vocabulary import fewshot_label, short_revision
from leaderboard.views.common import MODEL, PRECISION, REVISION, TYPE, _frame, md_text


@dataclass(frozen=True)
class QueueView:
    pending: pd.DataFrame
    running: pd.DataFrame
    finished: pd.DataFrame
    failed: pd.DataFrame
    problems: str  # Markdown, escaped
    summary: str


def _age(since: str | None, now: datetime) -> str:
    if not since:
        return "—"
    try:
        seconds = int((now - parse_time(since)).total_seconds())
    except ValueError:
        return "—"
    if seconds < 0:
        return "0s"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


def _last_change(request: EvalRequest, status: Status) -> str | None:
    for entry in reversed(request.history):
        if entry.get("status") == status.value:
            return entry.get("time")
    return None


def running_stage(request: EvalRequest, state: QueueState) -> str:
    """What a RUNNING request is doing, in words: its phase, and whether its lease lapsed.

    A lapsed lease is said with what happens next, which depends on the phase (see
    :mod:`eval_queue.queue`): a run that was publishing is finished if its results are in
    the store, one that never started is queued again without counting an attempt.
    """
    match request.phase:
        case RunPhase.CLAIMED:
            stage, after = "starting", "back to the queue at the next claim (not counted)"
        case RunPhase.PUBLISHING:
            stage, after = "finishing: publishing results", "finished at the next claim if its results are in"
        case RunPhase.RUNNING | None:
            stage, after = "running", "back to the queue at the next claim (counted as an attempt)"
        case _:
            raise AssertionError(request.phase)
    if state is QueueState.EXPIRED:
        return f"{stage} — worker stopped renewing its lease; {after}"
    return stage


def _request_base(request: EvalRequest) -> dict[str, object]:
    return {
        MODEL: request.model,
        REVISION: short_revision(request.revision),
        PRECISION: request.precision.value,
        "Setting": fewshot_label(request.num_fewshot),
    }


def queue_view(listing: QueueListing, now: datetime) -> QueueView:
    """The queue by state: PENDING in worker order with positions, RUNNING with worker and age, …"""
    pending = [
        {
            "Position": i,
            **_request_base(r),
            TYPE: r.model_type.value,
            "Submitted by": r.submitted_by,
            "Submitted": r.submitted_time,
        }
        for i, r in enumerate(fair_order(listing.requests), start=1)
    ]
    running = [
        {
            **_request_base(r),
            "Worker": r.claimed_by or "—",
            "Stage": running_stage(r, listing.state(r)),
            "Age": _age(_last_change(r, Status.RUNNING) or r.submitted_time, now),
            "Lease expires": r.lease_expires or "—",
        }
        for r in listing.with_status(Status.RUNNING)
    ]
    finished = [
        {
            **_request_base(r),
            "Finished": _last_change(r, Status.FINISHED) or "—",
            "Results": r.results_path or "—",
        }
        for r in sorted(listing.with_status(Status.FINISHED), key=lambda r: r.submitted_time, reverse=True)
    ]
    failed = [
        {
            **_request_base(r),
            "Status": r.status.value,
            "Reason": (r.error or "cancelled").strip()[:500],
            "Attempts": r.attempts,
        }
        for r in sorted(
            listing.with_status(Status.FAILED, Status.CANCELLED), key=lambda r: r.submitted_time, reverse=True
        )
    ]
    problems = ""
    if listing.problems:
        lines = [f"- {md_text(p.path)}: {md_text(p.reason)}" for p in listing.problems]
        problems = "**Malformed request files (skipped):**\n" + "\n".join(lines)
    summary = (
        f"{len(pending)} pending · {len(running)} running · {len(finished)} finished · "
        f"{len(failed)} failed or cancelled"
        + (f" · {len(listing.problems)} malformed" if listing.problems else "")
    )
    return QueueView(
        pending=_frame(
            pending, ["Position", MODEL, REVISION, PRECISION, "Setting", TYPE, "Submitted by", "Submitted"]
        ),
        running=_frame(
            running, [MODEL, REVISION, PRECISION, "Setting", "Worker", "Stage", "Age", "Lease expires"]
        ),
        finished=_frame(finished, [MODEL, REVISION, PRECISION, "Setting", "Finished", "Results"]),
        failed=_frame(failed, [MODEL, REVISION, PRECISION, "Setting", "Status", "Reason", "Attempts"]),
        problems=problems,
        summary=summary,
    )


def submitted_markdown(requests: Sequence[EvalRequest]) -> str:
    lines = ["✅ **Submitted.** Created request(s):"]
    for r in requests:
        lines.append(
            f"- {md_text(r.request_id)} — {md_text(r.model)} @ {md_text(short_revision(r.revision))}, "
            f"{md_text(r.precision.value)}, {fewshot_label(r.num_fewshot)}, status {md_text(r.status.value)}"
        )
    return "\n".join(lines)


def rejected_markdown(message: str) -> str:
    return f"❌ **Submission refused.** {md_text(message)}"
