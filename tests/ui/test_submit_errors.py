"""A submission the store cannot take is refused with the reason, never a generic error."""

from __future__ import annotations

from types import SimpleNamespace

from eval_queue.errors import StorageError, SubmissionRejected
from leaderboard.ui import submit


def _ctx(error: Exception) -> SimpleNamespace:
    def refuse(**_kwargs):
        raise error

    return SimpleNamespace(
        submit=refuse,
        submitter=lambda request, profile=None: "web-0123456789ab",
        settings=SimpleNamespace(submission_limit=4, submission_period_s=86400.0),
    )


def test_a_store_that_cannot_be_written_is_named_to_the_submitter(monkeypatch) -> None:
    monkeypatch.setattr(submit, "render_queue", lambda ctx: {"summary": "queue"})
    shown = submit.do_submit(
        _ctx(StorageError("hub answered 503")), "org/model", "main", "bfloat16", ["0"], None
    )
    assert shown["result"].startswith("❌") and "could not be written" in shown["result"]
    assert "503" in shown["result"] and shown["summary"] == "queue"


def test_a_refusal_is_shown_as_the_validator_wrote_it(monkeypatch) -> None:
    monkeypatch.setattr(submit, "render_queue", lambda ctx: {})
    shown = submit.do_submit(
        _ctx(SubmissionRejected("Add a licence")), "org/model", "main", "bfloat16", ["0"], None
    )
    assert shown["result"] == "❌ **Submission refused.** Add a licence"


def test_reading_an_absent_request_part_is_a_named_error_not_a_bare_except() -> None:
    import inspect

    assert "except Exception" not in inspect.getsource(submit)
