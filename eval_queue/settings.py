"""Configuration, read once from the environment at an entry point and passed down.

No module reads ``os.environ`` on its own: entry points call :meth:`Settings.from_env`
and hand the frozen object to whatever needs it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


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

    @property
    def use_hub(self) -> bool:
        """The hub backend is used only when both repos are configured (DESIGN.md)."""
        return bool(self.requests_repo and self.results_repo)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        return cls(
            data_dir=Path(env.get("EVALITA_DATA_DIR", "eval-data")),
            requests_repo=env.get("EVALITA_REQUESTS_REPO") or None,
            results_repo=env.get("EVALITA_RESULTS_REPO") or None,
            hf_token=env.get("HF_TOKEN") or None,
            allow_remote_code=env.get("EVALITA_ALLOW_REMOTE_CODE", "").lower() in {"1", "true", "yes"},
        )
