"""Who a web submission is recorded as: the sign-in, else a salted hash of the *direct* peer."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import gradio as gr
import pytest
from starlette.requests import Request

from eval_queue.errors import ConfigurationError, StoreUnavailableError, SubmissionRejected
from eval_queue.identity import (
    HF_PREFIX,
    SALT_PATH,
    UNKNOWN_ADDRESS,
    WEB_PREFIX,
    Caller,
    IdentityPolicy,
    SignInRequired,
    SubmitterIdentifier,
    caller_from_request,
    client_address,
    load_salt,
    signin_prompt,
    submitter_id,
)
from eval_queue.names import SUBMITTER_RE
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage

POLICY = IdentityPolicy(salt=b"test-salt")
WEB_ID = re.compile(rf"^{re.escape(WEB_PREFIX)}[0-9a-f]{{12}}$")


def web_request(peer: str | None, *forwarded: str, session: dict | None = None) -> gr.Request:
    """A real ``gr.Request`` around a real Starlette request (repeated header lines kept)."""
    scope: dict = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "query_string": b"",
        "headers": [(b"x-forwarded-for", value.encode()) for value in forwarded],
        "client": (peer, 5000) if peer else None,
    }
    if session is not None:
        scope["session"] = session
    return gr.Request(request=Request(scope))


def queued_request(peer: str, forwarded: str | None = None) -> gr.Request:
    """What Gradio hands a queued event: plain copies of the headers and client."""
    headers = {"x-forwarded-for": forwarded} if forwarded else {}
    return gr.Request(headers=headers, client={"host": peer, "port": 5000})


def who(request: gr.Request | None, policy: IdentityPolicy = POLICY, profile=None) -> str:
    return submitter_id(caller_from_request(request, profile), policy)


def profile(username: str) -> gr.OAuthProfile:
    return gr.OAuthProfile(
        {"name": "A Person", "preferred_username": username, "profile": "p", "picture": "q"}
    )


def test_the_signed_in_account_wins_over_the_address() -> None:
    assert who(web_request("203.0.113.7"), profile=profile("alice")) == f"{HF_PREFIX}alice"


def test_the_account_is_read_from_the_session_unless_expired() -> None:
    info = {"userinfo": {"preferred_username": "bob"}, "expires_at": time.time() + 3600}
    assert who(web_request("203.0.113.7", session={"oauth_info": info})) == f"{HF_PREFIX}bob"
    expired = {**info, "expires_at": time.time() - 1}
    assert WEB_ID.match(who(web_request("203.0.113.7", session={"oauth_info": expired})))


def test_the_address_is_a_salted_short_hash_never_the_raw_ip() -> None:
    one = who(web_request("203.0.113.7"))
    assert WEB_ID.match(one) and "203" not in one
    assert who(web_request("203.0.113.7"), IdentityPolicy(salt=b"other")) != one
    assert who(web_request("203.0.113.8")) != one
    assert who(queued_request("203.0.113.7")) == one


def test_without_trusted_proxies_a_forwarded_header_is_ignored() -> None:
    direct = who(web_request("203.0.113.7"))
    for spoofed in ("198.51.100.1", "198.51.100.2, 10.0.0.1", "garbage"):
        assert who(web_request("203.0.113.7", spoofed)) == direct
        assert who(queued_request("203.0.113.7", spoofed)) == direct


@pytest.mark.parametrize(
    ("proxies", "lines", "client"),
    [
        (1, ["198.51.100.23"], "198.51.100.23"),
        (1, ["6.6.6.6, 198.51.100.23"], "198.51.100.23"),  # the client wrote 6.6.6.6; the proxy appended
        (1, ["6.6.6.6", "198.51.100.23"], "198.51.100.23"),  # a second header line counts as later hops
        (2, ["6.6.6.6, 198.51.100.23, 10.0.0.2"], "198.51.100.23"),
        (3, ["198.51.100.23, 10.0.0.2"], "198.51.100.23"),  # fewer hops than proxies: the farthest seen
        (1, [], "10.0.0.1"),  # no header: the peer
    ],
)
def test_behind_n_proxies_the_client_is_n_hops_from_the_right(
    proxies: int, lines: list[str], client: str
) -> None:
    request = web_request("10.0.0.1", *lines)
    assert client_address(caller_from_request(request), proxies) == client
    policy = IdentityPolicy(trusted_proxies=proxies, salt=b"test-salt")
    assert who(request, policy) == who(web_request(client), POLICY)


def test_ipv6_counts_per_64_and_mapped_ipv4_as_ipv4() -> None:
    one = who(web_request("2001:db8:1:2::1"))
    assert one == who(web_request("2001:db8:1:2:ffff::9"))
    assert one != who(web_request("2001:db8:1:3::1"))
    assert who(web_request("::ffff:203.0.113.7")) == who(web_request("203.0.113.7"))


def test_no_request_or_no_address_is_a_fixed_id() -> None:
    assert who(None) == UNKNOWN_ADDRESS
    assert who(web_request(None)) == UNKNOWN_ADDRESS


def test_with_sign_in_required_an_anonymous_submission_is_refused() -> None:
    policy = IdentityPolicy(require_signin=True, salt=b"x")
    with pytest.raises(SignInRequired, match="sign in with your Hugging Face account"):
        who(web_request("203.0.113.7", "198.51.100.1"), policy)
    assert issubclass(SignInRequired, SubmissionRejected)
    assert who(web_request("203.0.113.7"), policy, profile("carol")) == f"{HF_PREFIX}carol"


@pytest.mark.parametrize("username", ["alice", "Some-Org_user.1", "weird name/with:chars", "x" * 500])
def test_every_id_passes_the_queues_submitter_rule(username: str) -> None:
    assert SUBMITTER_RE.match(who(None, profile=profile(username)))
    assert SUBMITTER_RE.match(who(web_request("203.0.113.7")))
    assert SUBMITTER_RE.match(who(None))


def test_the_signin_prompt_says_who_and_how() -> None:
    assert signin_prompt(True, None) == "Sign in with your Hugging Face account to submit a model."
    assert "recorded as hf-alice" in signin_prompt(True, "alice")
    assert "salted hash" in signin_prompt(False, None)


# -- the salt ---------------------------------------------------------------------------------


def test_a_configured_salt_is_used_and_nothing_is_written(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path / "requests")
    assert load_salt(store, "configured") == b"configured"
    assert not (tmp_path / "requests").exists()


def test_without_a_salt_one_is_created_once_in_the_store_and_reused_after_a_restart(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path / "requests")
    results: list[bytes] = []
    threads = [threading.Thread(target=lambda: results.append(load_salt(store, None))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(results)) == 1 and len(results[0]) == 64
    assert load_salt(LocalStorage(tmp_path / "requests"), None) == results[0]  # a new process
    assert store.list() == []  # hidden: never listed as a request


def test_an_unreadable_salt_refuses_anonymous_submissions_and_is_not_rewritten(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path / "requests")
    store.write(SALT_PATH, b'{"schema": "evalita-llm-salt/1", "salt": "short"}')
    identifier = SubmitterIdentifier(Settings(data_dir=tmp_path), store)
    with pytest.raises(SubmissionRejected, match="salt in the store is unreadable"):
        identifier(Caller(peer="203.0.113.7"))
    assert store.read(SALT_PATH) == b'{"schema": "evalita-llm-salt/1", "salt": "short"}'
    assert identifier(Caller(username="dana")) == f"{HF_PREFIX}dana"  # an account needs no salt


def test_a_store_that_cannot_be_written_is_reported_as_unavailable(tmp_path: Path) -> None:
    (tmp_path / "requests").write_text("a file where the store's folder should be")
    identifier = SubmitterIdentifier(Settings(data_dir=tmp_path), LocalStorage(tmp_path / "requests"))
    with pytest.raises(StoreUnavailableError, match="the queue could not be reached"):
        identifier(Caller(peer="203.0.113.7"))


# -- the settings -------------------------------------------------------------------------------


def test_identity_settings_come_from_the_environment() -> None:
    default = Settings.from_env({})
    assert (default.trusted_proxies, default.submitter_salt, default.require_signin) == (0, None, False)
    space = Settings.from_env({"OAUTH_CLIENT_ID": "abc", "EVALITA_TRUSTED_PROXIES": "1"})
    assert space.require_signin and space.trusted_proxies == 1
    assert not Settings.from_env({"OAUTH_CLIENT_ID": "abc", "EVALITA_REQUIRE_SIGNIN": "0"}).require_signin
    salted = Settings.from_env({"EVALITA_SUBMITTER_SALT": "s3cret"})
    assert salted.submitter_salt == "s3cret" and "s3cret" not in repr(salted)
    assert "s3cret" in salted.secrets
    for bad in ("-1", "two"):
        with pytest.raises(ConfigurationError, match="EVALITA_TRUSTED_PROXIES"):
            Settings.from_env({"EVALITA_TRUSTED_PROXIES": bad})
