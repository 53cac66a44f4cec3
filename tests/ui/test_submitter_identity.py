"""Who a web submission is recorded as: the Hub login, else a salted hash of the client address."""

from __future__ import annotations

import re
import time
from types import SimpleNamespace

import gradio as gr
import pytest

from eval_queue.submission import SUBMITTER_RE
from leaderboard.ui import submit
from leaderboard.ui.submit import HF_PREFIX, WEB_PREFIX, submitter_identity

SALT = "test-salt"
WEB_ID = re.compile(rf"^{re.escape(WEB_PREFIX)}[0-9a-f]{{12}}$")


def _request(host: str | None = "203.0.113.7", headers: dict | None = None, session: dict | None = None):
    """A stand-in for ``gr.Request`` with what the helper reads."""
    client = SimpleNamespace(host=host, port=5000) if host is not None else None
    return SimpleNamespace(headers=headers or {}, client=client, request=None, session=session)


def _profile(username: str) -> gr.OAuthProfile:
    return gr.OAuthProfile(
        {"name": "A Person", "preferred_username": username, "profile": "p", "picture": "q"}
    )


def test_oauth_username_wins_over_the_address() -> None:
    who = submitter_identity(
        _profile("alice"), _request(headers={"X-Forwarded-For": "198.51.100.1"}), salt=SALT
    )
    assert who == f"{HF_PREFIX}alice"


def test_oauth_profile_is_read_from_the_session_when_not_injected() -> None:
    info = {"userinfo": {"preferred_username": "bob"}, "expires_at": time.time() + 3600}
    assert submitter_identity(None, _request(session={"oauth_info": info}), salt=SALT) == f"{HF_PREFIX}bob"
    expired = {**info, "expires_at": time.time() - 1}
    assert WEB_ID.match(submitter_identity(None, _request(session={"oauth_info": expired}), salt=SALT))


def test_address_is_a_salted_short_hash_never_the_raw_ip() -> None:
    who = submitter_identity(None, _request("203.0.113.7"), salt=SALT)
    assert WEB_ID.match(who)
    assert "203" not in who and "113" not in who
    assert submitter_identity(None, _request("203.0.113.7"), salt="other salt") != who


def test_same_ip_same_id_and_different_ips_different_ids() -> None:
    a1 = submitter_identity(None, _request("203.0.113.7"), salt=SALT)
    a2 = submitter_identity(None, _request("203.0.113.7", headers={"user-agent": "x"}), salt=SALT)
    b = submitter_identity(None, _request("203.0.113.8"), salt=SALT)
    assert a1 == a2
    assert a1 != b


def test_first_forwarded_for_entry_is_the_client() -> None:
    proxied = _request("10.0.0.1", headers={"x-forwarded-for": " 198.51.100.23 , 10.0.0.9, 10.0.0.1"})
    direct = _request("198.51.100.23")
    same_proxy_other_user = _request("10.0.0.1", headers={"X-Forwarded-For": "198.51.100.99, 10.0.0.1"})
    who = submitter_identity(None, proxied, salt=SALT)
    assert who == submitter_identity(None, direct, salt=SALT)
    assert who != submitter_identity(None, same_proxy_other_user, salt=SALT)
    assert "198.51" not in who


def test_ipv6_counts_per_64_and_mapped_ipv4_as_ipv4() -> None:
    one = submitter_identity(None, _request("2001:db8:1:2::1"), salt=SALT)
    assert one == submitter_identity(None, _request("2001:db8:1:2:ffff::9"), salt=SALT)
    assert one != submitter_identity(None, _request("2001:db8:1:3::1"), salt=SALT)
    v4 = submitter_identity(None, _request("203.0.113.7"), salt=SALT)
    assert submitter_identity(None, _request("::ffff:203.0.113.7"), salt=SALT) == v4


def test_no_request_or_no_address_is_a_fixed_id() -> None:
    assert submitter_identity(None, None) == f"{WEB_PREFIX}unknown"
    assert submitter_identity(None, _request(None)) == f"{WEB_PREFIX}unknown"


def test_salt_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(submit.SALT_ENV, SALT)
    assert submitter_identity(None, _request()) == submitter_identity(None, _request(), salt=SALT)
    monkeypatch.delenv(submit.SALT_ENV)
    unsalted = submitter_identity(None, _request())
    assert WEB_ID.match(unsalted) and unsalted == submitter_identity(None, _request())


@pytest.mark.parametrize("username", ["alice", "Some-Org_user.1", "weird name/with:chars"])
def test_every_id_passes_the_queues_submitter_rule(username: str) -> None:
    assert SUBMITTER_RE.match(submitter_identity(_profile(username), None))
    assert SUBMITTER_RE.match(submitter_identity(None, _request(), salt=SALT))
    assert SUBMITTER_RE.match(submitter_identity(None, None))


def test_do_submit_records_the_identity_and_shows_it_with_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict = {}

    def fake_submit(**kwargs):
        seen.update(kwargs)
        return []

    ctx = SimpleNamespace(
        submit=fake_submit, settings=SimpleNamespace(submission_limit=4, submission_period_s=86400.0)
    )
    monkeypatch.setattr(submit, "render_queue", lambda ctx: {})
    monkeypatch.setenv(submit.SALT_ENV, SALT)
    request = _request("203.0.113.7")
    message = submit.do_submit(ctx, "org/model", "main", "bfloat16", ["0"], submit.AUTO_TYPE, request)[
        "result"
    ]
    who = submitter_identity(None, request, salt=SALT)
    assert seen["submitted_by"] == who
    assert f"Queued as {submit.views.md_text(who)}; limit 4 per 1 day." in message
    assert "203.0.113.7" not in message

    message = submit.do_submit(ctx, "org/model", "main", "bfloat16", ["0"], None, request, _profile("carol"))[
        "result"
    ]
    assert seen["submitted_by"] == f"{HF_PREFIX}carol"
