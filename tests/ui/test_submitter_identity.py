"""The web form records the submitter the app context identifies, and shows every refusal's reason.

The identity rules themselves are pinned in ``tests/queue/test_identity.py``.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest

from eval_queue.errors import StoreUnavailableError
from eval_queue.identity import HF_PREFIX, Caller, SubmitterIdentifier, caller_from_request
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage
from leaderboard.ui import submit


def _request(host: str = "203.0.113.7", forwarded: str | None = None) -> gr.Request:
    return gr.Request(headers={"x-forwarded-for": forwarded} if forwarded else {}, client={"host": host})


def _profile(username: str) -> gr.OAuthProfile:
    return gr.OAuthProfile(
        {"name": "A Person", "preferred_username": username, "profile": "p", "picture": "q"}
    )


def _context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, require_signin: bool = False):
    settings = Settings(
        data_dir=tmp_path, submission_limit=4, submission_period_s=86400.0, require_signin=require_signin
    )
    identifier = SubmitterIdentifier(settings, LocalStorage(tmp_path / "requests"))
    seen: dict = {}

    def fake_submit(**kwargs):
        seen.update(kwargs)
        return []

    ctx = SimpleNamespace(
        submit=fake_submit,
        settings=settings,
        submitter=lambda request, profile=None: identifier(caller_from_request(request, profile)),
    )
    monkeypatch.setattr(submit, "render_queue", lambda ctx: {})
    return ctx, seen, identifier


def test_do_submit_records_the_identity_and_shows_it_with_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx, seen, identifier = _context(tmp_path, monkeypatch)
    request = _request()
    message = submit.do_submit(
        ctx, "org/model", "main", "bfloat16", ["0"], submit.AUTO_TYPE, request=request
    )["result"]
    who = identifier(Caller(peer="203.0.113.7"))
    assert seen["submitted_by"] == who
    assert f"Queued as {submit.common.md_text(who)}; limit 4 per 1 day." in message
    assert "203.0.113.7" not in message

    submit.do_submit(
        ctx, "org/model", "main", "bfloat16", ["0"], None, request=request, profile=_profile("carol")
    )
    assert seen["submitted_by"] == f"{HF_PREFIX}carol"


def test_a_spoofed_forwarded_header_does_not_change_who_submits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx, seen, _ = _context(tmp_path, monkeypatch)
    ids = set()
    for spoof in ("198.51.100.1", "198.51.100.2", "1.2.3.4, 5.6.7.8"):
        submit.do_submit(ctx, "org/model", "main", "bfloat16", ["0"], None, request=_request(forwarded=spoof))
        ids.add(seen["submitted_by"])
    assert len(ids) == 1


def test_an_anonymous_submission_is_refused_when_sign_in_is_required(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx, seen, _ = _context(tmp_path, monkeypatch, require_signin=True)
    message = submit.do_submit(ctx, "org/model", "main", "bfloat16", ["0"], None, request=_request())[
        "result"
    ]
    assert message.startswith("❌ **Submission refused.** sign in with your Hugging Face account")
    assert seen == {}  # nothing was submitted
    submit.do_submit(
        ctx, "org/model", "main", "bfloat16", ["0"], None, request=_request(), profile=_profile("erin")
    )
    assert seen["submitted_by"] == f"{HF_PREFIX}erin"


def test_when_the_store_is_down_the_submitter_sees_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx, _, _ = _context(tmp_path, monkeypatch)

    reason = "the queue could not be reached, so nothing was submitted (hub repo x: HTTP 503)"

    def down(**kwargs):
        raise StoreUnavailableError(reason)

    ctx.submit = down
    message = submit.do_submit(ctx, "org/model", "main", "bfloat16", ["0"], None, request=_request())[
        "result"
    ]
    assert message == submit.queue_views.rejected_markdown(reason)
    assert "HTTP 503" in message
