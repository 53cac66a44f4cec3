"""Configuration, read once from the environment at an entry point and passed down.

No module reads ``os.environ`` on its own: entry points call :meth:`Settings.from_env`
and hand the frozen object to whatever needs it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_queue.errors import ConfigurationError

#: Seconds to open a connection to the Hub; a hub that cannot be reached fails this fast.
DEFAULT_HUB_CONNECT_TIMEOUT_S = 10.0
#: Seconds to wait for each read of an answer (and each write of a request body).  A
#: commit is answered once the Hub has stored it, which under load takes seconds, rarely
#: tens of seconds; a minute tells a slow hub from one that will not answer.
DEFAULT_HUB_READ_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class HubTimeouts:
    """How long any one hub call may wait (``EVALITA_HUB_CONNECT_TIMEOUT_S``, ``EVALITA_HUB_READ_TIMEOUT_S``).

    Applied to every request of the ``huggingface_hub`` client by
    :func:`eval_queue.hubclient.install_hub_timeouts`.  A call that times out raises
    ``TransientStorageError``: its effect is unknown, and the caller reads the state back.
    """

    connect_s: float = DEFAULT_HUB_CONNECT_TIMEOUT_S
    read_s: float = DEFAULT_HUB_READ_TIMEOUT_S


@dataclass(frozen=True)
class Settings:
    """Where the two repositories live and how to reach them.

    ``hf_token`` is excluded from ``repr`` so that it can never leak into a log line.
    """

    data_dir: Path = Path("eval-data")
    requests_repo: str | None = None
    results_repo: str | None = None
    hf_token: str | None = field(default=None, repr=False)
    # Maintainer switch: allow models whose code runs at load time.
    allow_remote_code: bool = False
    # Hub address for the hub backend and the model resolver (None: huggingface_hub's default).
    hf_endpoint: str | None = None
    # ``HF_HUB_OFFLINE``: resolve submitted models from the local cache only.
    hf_offline: bool = False
    # The Hugging Face hub cache (``models--org--name/…``), as huggingface_hub finds it.
    hf_hub_cache: Path = field(default_factory=lambda: hub_cache_dir({}))
    # At most ``submission_limit`` requests per submitter in any ``submission_period_s`` window.
    submission_limit: int = 10
    submission_period_s: float = 7 * 24 * 3600.0
    # The worker's data source when ``--data`` is not given: hub | sample | local:<dir>.
    eval_data: str = "sample"
    # How often an open page re-reads results and queue (seconds).
    refresh_s: float = 60.0
    # Web submitters without a sign-in are told apart by an HMAC of their address under
    # this salt; unset: one is generated and kept in the requests store (eval_queue.identity).
    submitter_salt: str | None = field(default=None, repr=False)
    # How many reverse proxies in front of the app append to X-Forwarded-For; 0: the header
    # is ignored and the direct peer address is used (a client can write any header).
    trusted_proxies: int = 0
    # The Space provides Hugging Face OAuth (``hf_oauth: true`` in the README's front matter
    # makes the Space set OAUTH_CLIENT_ID): the submission form shows a sign-in button.
    oauth: bool = False
    # Web submissions need a Hugging Face sign-in (the Space's OAuth); default: on when
    # the Space provides OAuth.
    require_signin: bool = False
    # Every hub call's connect and read timeouts (hub backend).
    hub_timeouts: HubTimeouts = field(default_factory=HubTimeouts)

    @property
    def use_hub(self) -> bool:
        """The hub backend is used only when both repos are configured (DESIGN.md)."""
        return bool(self.requests_repo and self.results_repo)

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values never to be logged or shown (masked by ``eval_queue.redact``)."""
        return tuple(s for s in (self.hf_token, self.submitter_salt) if s)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        return cls(
            data_dir=Path(env.get("EVALITA_DATA_DIR", "eval-data")),
            requests_repo=env.get("EVALITA_REQUESTS_REPO") or None,
            results_repo=env.get("EVALITA_RESULTS_REPO") or None,
            hf_token=env.get("HF_TOKEN") or None,
            allow_remote_code=_flag(env, "EVALITA_ALLOW_REMOTE_CODE"),
            hf_endpoint=env.get("HF_ENDPOINT") or None,
            hf_offline=_flag(env, "HF_HUB_OFFLINE") or _flag(env, "TRANSFORMERS_OFFLINE"),
            hf_hub_cache=hub_cache_dir(env),
            submission_limit=_number(env, "EVALITA_SUBMISSION_LIMIT", int, cls.submission_limit),
            submission_period_s=_number(env, "EVALITA_SUBMISSION_PERIOD_S", float, cls.submission_period_s),
            eval_data=env.get("EVALITA_EVAL_DATA") or cls.eval_data,
            refresh_s=_number(env, "EVALITA_REFRESH_S", float, cls.refresh_s),
            submitter_salt=env.get("EVALITA_SUBMITTER_SALT") or None,
            trusted_proxies=_number(env, "EVALITA_TRUSTED_PROXIES", int, 0, minimum=0),
            oauth=bool(env.get("OAUTH_CLIENT_ID")),
            hub_timeouts=HubTimeouts(
                connect_s=_number(env, "EVALITA_HUB_CONNECT_TIMEOUT_S", float, DEFAULT_HUB_CONNECT_TIMEOUT_S),
                read_s=_number(env, "EVALITA_HUB_READ_TIMEOUT_S", float, DEFAULT_HUB_READ_TIMEOUT_S),
            ),
            require_signin=(
                _flag(env, "EVALITA_REQUIRE_SIGNIN")
                if env.get("EVALITA_REQUIRE_SIGNIN", "").strip()
                else bool(env.get("OAUTH_CLIENT_ID"))
            ),
        )


def hub_cache_dir(env: Mapping[str, str]) -> Path:
    """Where huggingface_hub keeps its cache, by the same rules it uses.

    ``HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``,
    else ``~/.cache/huggingface/hub``.  Read from ``env`` rather than from
    ``huggingface_hub.constants`` because those are frozen when the client is imported.
    """
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):  # the second is the older spelling
        if env.get(name):
            return Path(env[name]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    cache_home = (
        Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    )
    return cache_home / "huggingface" / "hub"


def _flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _number(
    env: Mapping[str, str],
    name: str,
    kind: type[int] | type[float],
    default: float,
    *,
    minimum: float | None = None,
) -> Any:
    """A numeric variable; a value that is not a number stops the entry point with a clear message.

    Without ``minimum`` the value must be positive; with it, at least ``minimum``.
    """
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = kind(raw)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise ConfigurationError(f"{name} must be {what}, got {raw!r}") from None
    if minimum is None and value <= 0:
        raise ConfigurationError(f"{name} must be positive, got {raw!r}")
    if minimum is not None and value < minimum:
        raise ConfigurationError(f"{name} must be at least {minimum:g}, got {raw!r}")
    return value
