"""Who is submitting from the web form: the signed-in account, else a salted hash of the address.

The submitter id is what request files record (they are public), what the rate limit
counts and what fair order groups by:

* ``hf-<user>`` — the Hugging Face account signed in through the Space's OAuth
  (``hf_oauth: true``; Gradio's ``gr.LoginButton``).  With ``require_signin`` (the
  default whenever the Space provides OAuth) an anonymous submission is refused with
  a message asking to sign in.
* ``web-<12 hex>`` — without a sign-in, an HMAC-SHA256 of the client address under a
  secret salt, so the raw address never appears (IPv6 counts per /64, what one host
  usually gets; an IPv4-mapped address as IPv4).

The client address is the **direct peer** of the connection.  ``X-Forwarded-For`` is
written by the client too, so it is trusted only behind ``trusted_proxies`` reverse
proxies (a setting, default 0 = ignored): each of them appends the address it received
the request from, so the client is the entry that many hops from the right; anything
left of it is whatever the client sent and is never used.

The salt is ``EVALITA_SUBMITTER_SALT`` when set; otherwise one is generated once and kept
in the requests store (``.identity/submitter-salt.json``, created by compare-and-swap, so
concurrent first submissions agree on it), and reused after a restart.  On the hub that
repo is usually public, and a public salt lets anyone test addresses against the ids: set
the variable (as a Space secret) there.

Everything here but :func:`caller_from_request` (which reads a ``gr.Request`` by duck
typing, without importing gradio) is pure or takes the store explicitly.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eval_queue.errors import (
    AlreadyExistsError,
    MalformedFileError,
    NotFoundError,
    StorageError,
    StoreUnavailableError,
    SubmissionRejected,
)
from eval_queue.safe_json import REQUEST_LIMITS, read_object
from eval_queue.settings import Settings
from eval_queue.storage.base import Storage

logger = logging.getLogger(__name__)

# "hf-alice" (a Hugging Face sign-in) and "web-0123456789ab" (a salted hash of the address):
# the prefixes keep signed-in and anonymous submitters apart, and both pass the queue's
# submitter rule (eval_queue.names.SUBMITTER_RE), which a test checks.
HF_PREFIX = "hf-"
WEB_PREFIX = "web-"
UNKNOWN_ADDRESS = WEB_PREFIX + "unknown"
SALT_PATH = ".identity/submitter-salt.json"
SALT_SCHEMA = "evalita-llm-salt/1"
_HASH_HEX = 12
_SALT_HEX = re.compile(r"^[0-9a-f]{64}\Z")
SIGN_IN_MESSAGE = (
    "sign in with your Hugging Face account (the button above the form) to submit: "
    "each account may submit a limited number of evaluations per period."
)


class SignInRequired(SubmissionRejected):
    """An anonymous web submission while sign-in is required."""


@dataclass(frozen=True)
class Caller:
    """What the web layer knows about a submitter.

    ``username``: the signed-in Hugging Face account, if any; ``peer``: the address of the
    connection's direct peer; ``forwarded_for``: the ``X-Forwarded-For`` header lines as
    received (each a comma-separated list of addresses, oldest hop first).
    """

    username: str | None = None
    peer: str | None = None
    forwarded_for: tuple[str, ...] = ()


@dataclass(frozen=True)
class IdentityPolicy:
    """How callers become submitter ids (see the module docstring)."""

    require_signin: bool = False
    trusted_proxies: int = 0
    salt: bytes = field(default=b"", repr=False)


def submitter_id(caller: Caller, policy: IdentityPolicy) -> str:
    """The submitter id of ``caller``; ``SignInRequired`` if anonymous while sign-in is required."""
    if caller.username and caller.username.strip():
        return HF_PREFIX + re.sub(r"[^A-Za-z0-9._-]", "_", caller.username.strip())[:90]
    if policy.require_signin:
        raise SignInRequired(SIGN_IN_MESSAGE)
    address = client_address(caller, policy.trusted_proxies)
    if address is None:
        return UNKNOWN_ADDRESS
    digest = hmac.new(policy.salt, normalise_address(address).encode("utf-8"), hashlib.sha256)
    return WEB_PREFIX + digest.hexdigest()[:_HASH_HEX]


def client_address(caller: Caller, trusted_proxies: int) -> str | None:
    """The client's address: the direct peer, or behind ``trusted_proxies`` proxies the
    ``X-Forwarded-For`` entry that many hops from the right (never a client-written one)."""
    if trusted_proxies <= 0:
        return caller.peer
    entries = [entry.strip() for line in caller.forwarded_for for entry in line.split(",")]
    entries = [entry for entry in entries if entry]
    if not entries:
        return caller.peer
    # Fewer entries than proxies: every entry was appended by one of ours; the leftmost
    # is the farthest hop they saw.
    return entries[max(len(entries) - trusted_proxies, 0)]


def normalise_address(raw: str) -> str:
    """An IP address in canonical form; IPv6 as its /64, IPv4-mapped IPv6 as IPv4."""
    try:
        ip = ipaddress.ip_address(raw.strip().strip("[]"))
    except ValueError:
        return raw.strip().lower()  # not an address (a hostname, "testclient"): hashed as given
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip)


def signin_prompt(require_signin: bool, username: str | None) -> str:
    """The line the submission tab shows beside the sign-in button (plain text: escape it)."""
    if username and username.strip():
        who = submitter_id(Caller(username=username), IdentityPolicy())
        return f"Signed in as {username.strip()}: your submissions are recorded as {who}."
    if require_signin:
        return "Sign in with your Hugging Face account to submit a model."
    return "Not signed in: submissions are counted by your network address (stored only as a salted hash)."


# -- the salt ------------------------------------------------------------------------------


def load_salt(storage: Storage, configured: str | None) -> bytes:
    """The configured salt, else the one kept in ``storage`` (created once if missing).

    Raises ``StorageError`` if the store cannot be used and ``MalformedFileError`` if the
    kept salt is unreadable (it is never overwritten: ids would change under everyone).
    """
    if configured:
        return configured.encode("utf-8")
    try:
        return _stored_salt(storage)
    except NotFoundError:
        pass
    fresh = {"schema": SALT_SCHEMA, "salt": secrets.token_hex(32)}
    try:
        storage.create(SALT_PATH, json.dumps(fresh).encode(), message="Submitter salt")
    except AlreadyExistsError:  # a concurrent first submission created it: use theirs
        return _stored_salt(storage)
    logger.warning(
        "EVALITA_SUBMITTER_SALT is not set: generated one and kept it in %r (%s); "
        "if that store is public, set EVALITA_SUBMITTER_SALT as a secret instead",
        storage,
        SALT_PATH,
    )
    return fresh["salt"].encode("ascii")


def _stored_salt(storage: Storage) -> bytes:
    raw = read_object(storage, SALT_PATH, REQUEST_LIMITS)
    salt = raw.get("salt")
    if raw.get("schema") != SALT_SCHEMA or not isinstance(salt, str) or not _SALT_HEX.match(salt):
        raise MalformedFileError(SALT_PATH, "not a submitter salt (expected 64 hex digits)")
    return salt.encode("ascii")


class SubmitterIdentifier:
    """Turns callers into submitter ids for one app; loads the salt on first use (thread-safe)."""

    def __init__(self, settings: Settings, storage: Storage) -> None:
        self._settings = settings
        self._storage = storage
        self._policy: IdentityPolicy | None = None
        self._lock = threading.Lock()

    def policy(self) -> IdentityPolicy:
        """The policy, with the salt read (or created) in the store the first time."""
        with self._lock:
            if self._policy is None:
                salt = b"" if self._settings.require_signin else self._salt()
                self._policy = IdentityPolicy(
                    require_signin=self._settings.require_signin,
                    trusted_proxies=self._settings.trusted_proxies,
                    salt=salt,
                )
            return self._policy

    def __call__(self, caller: Caller) -> str:
        """``caller``'s submitter id; ``SignInRequired``, ``SubmissionRejected`` (unreadable salt)
        or ``StoreUnavailableError`` (the salt could not be read or created)."""
        if caller.username and caller.username.strip():
            return submitter_id(caller, IdentityPolicy())  # no salt needed for an account
        return submitter_id(caller, self.policy())

    def _salt(self) -> bytes:
        try:
            return load_salt(self._storage, self._settings.submitter_salt)
        except MalformedFileError as exc:  # first: an unreadable entry is also a StorageError
            raise SubmissionRejected(
                f"the submitter salt in the store is unreadable ({exc.reason}); ask a maintainer."
            ) from None
        except StorageError as exc:
            raise StoreUnavailableError.because(exc) from exc


# -- reading a gr.Request (duck-typed: eval_queue does not import gradio) -------------------


def caller_from_request(request: Any, profile: Any = None) -> Caller:
    """A :class:`Caller` from a ``gr.Request`` and an optional ``gr.OAuthProfile``.

    The account comes from ``profile`` (injected by Gradio into handlers that declare it),
    else from the OAuth info Gradio keeps in the session, unless it has expired.
    """
    username = _username(profile) or _username(_session_userinfo(request))
    if request is None:
        return Caller(username=username)
    return Caller(username=username, peer=_peer(request), forwarded_for=_forwarded_for(request))


def _username(profile: Any) -> str | None:
    if profile is None:
        return None
    username = getattr(profile, "username", None)
    if username is None and isinstance(profile, Mapping):
        username = profile.get("preferred_username")
    return (username.strip() or None) if isinstance(username, str) else None


def _session_userinfo(request: Any) -> Mapping[str, Any] | None:
    # The Starlette request's scope holds the session only when the session middleware
    # runs (OAuth on); ``request.session`` itself would assert otherwise.
    underlying = getattr(request, "request", None)
    scope = getattr(underlying, "scope", None)
    session = scope.get("session") if isinstance(scope, Mapping) else None
    info = session.get("oauth_info") if isinstance(session, Mapping) else None
    if not isinstance(info, Mapping):
        return None
    expires_at = info.get("expires_at")
    if isinstance(expires_at, int | float) and expires_at < time.time():
        return None
    userinfo = info.get("userinfo")
    return userinfo if isinstance(userinfo, Mapping) else None


def _peer(request: Any) -> str | None:
    client = getattr(request, "client", None)
    host = client.get("host") if isinstance(client, Mapping) else getattr(client, "host", None)
    return host if isinstance(host, str) and host else None


def _forwarded_for(request: Any) -> tuple[str, ...]:
    headers = getattr(request, "headers", None)
    if headers is None:
        return ()
    getlist = getattr(headers, "getlist", None)  # Starlette's Headers keeps repeated lines
    if callable(getlist):
        values = getlist("x-forwarded-for")
    else:  # a plain mapping (Gradio's copy of the headers in a queued event)
        values = [v for k, v in headers.items() if str(k).lower() == "x-forwarded-for"]
    return tuple(v for v in values if isinstance(v, str))
