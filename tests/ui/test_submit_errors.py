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


def test_the_form_sends_only_the_chosen_tracks_fields() -> None:
    assert submit.track_fields("evalita", ["0", "5"], {"context": ["10k"], "judge_target": "x.json"}) == {
        "track": "evalita",
        "fewshot": [0, 5],
    }
    assert submit.track_fields(
        "long-context", ["0", "5"], {"context": ["10k", "full"], "judge_target": "x.json"}
    ) == {
        "track": "long-context",
        "fewshot": [0],
        "options": {"context_settings": ["10k", "full"]},
    }
    assert submit.track_fields("judge", ["5"], {"context": ["10k"], "judge_target": "  "}) == {
        "track": "judge",
        "fewshot": [0],
    }
    fields = submit.track_fields("judge", [], {"context": [], "judge_target": " a/b/results_x.json "})
    assert fields["options"] == {"judge_target": "a/b/results_x.json"}


def test_a_long_context_submission_with_no_setting_ticked_is_refused_before_the_store(monkeypatch) -> None:
    monkeypatch.setattr(submit, "render_queue", lambda ctx: {})
    ctx = _ctx(AssertionError("the store must not be reached"))
    shown = submit.do_submit(
        ctx, "org/model", "main", "bfloat16", ["0"], None, track="long-context", context=[], judge_target=""
    )
    assert shown["result"].startswith("❌") and "context setting" in shown["result"]


def test_an_unknown_track_reaches_the_submissions_own_check(monkeypatch) -> None:
    from eval_queue.submission import SubmissionForm, _check_track

    seen = {}

    def check(**kwargs):
        seen.update(kwargs)
        _check_track(SubmissionForm(model="m", track=kwargs["track"]).track)

    monkeypatch.setattr(submit, "render_queue", lambda ctx: {})
    ctx = _ctx(AssertionError())
    ctx.submit = check
    shown = submit.do_submit(ctx, "org/model", "main", "bfloat16", ["0"], None, track="<b>x</b>")
    assert (
        shown["result"].startswith("❌")
        and "unknown track" in shown["result"]
        and "<b>" not in shown["result"]
    )
