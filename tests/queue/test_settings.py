"""Settings read once from the environment; the token never shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_queue.errors import ConfigurationError
from eval_queue.resolver import CacheModelResolver, FallbackResolver, resolver_for
from eval_queue.settings import Settings


def test_hub_backend_needs_both_repos() -> None:
    assert not Settings.from_env({"EVALITA_REQUESTS_REPO": "a/b"}).use_hub
    assert Settings.from_env({"EVALITA_REQUESTS_REPO": "a/b", "EVALITA_RESULTS_REPO": "a/c"}).use_hub


def test_token_is_not_in_the_repr() -> None:
    settings = Settings.from_env({"HF_TOKEN": "hf_SECRETfortests"})
    assert settings.hf_token == "hf_SECRETfortests"
    assert "SECRET" not in repr(settings)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"HF_HUB_CACHE": "/c"}, Path("/c")),
        ({"HUGGINGFACE_HUB_CACHE": "/old"}, Path("/old")),
        ({"HF_HOME": "/h", "XDG_CACHE_HOME": "/x"}, Path("/h/hub")),
        ({"XDG_CACHE_HOME": "/x"}, Path("/x/huggingface/hub")),
    ],
)
def test_hf_cache_is_found_like_huggingface_hub_does(env: dict[str, str], expected: Path) -> None:
    assert Settings.from_env(env).hf_hub_cache == expected


def test_rate_limit_is_configurable_and_checked() -> None:
    settings = Settings.from_env({"EVALITA_SUBMISSION_LIMIT": "2", "EVALITA_SUBMISSION_PERIOD_S": "3600"})
    assert (settings.submission_limit, settings.submission_period_s) == (2, 3600.0)
    with pytest.raises(ConfigurationError, match="EVALITA_SUBMISSION_LIMIT must be a whole number"):
        Settings.from_env({"EVALITA_SUBMISSION_LIMIT": "lots"})
    with pytest.raises(ConfigurationError, match="must be positive"):
        Settings.from_env({"EVALITA_SUBMISSION_PERIOD_S": "0"})


def test_offline_settings_resolve_from_the_cache_only() -> None:
    assert isinstance(resolver_for(Settings.from_env({"HF_HUB_OFFLINE": "1"})), CacheModelResolver)
    assert isinstance(resolver_for(Settings.from_env({})), FallbackResolver)
