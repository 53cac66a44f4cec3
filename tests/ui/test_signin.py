"""Sign-in: the Space's Hugging Face OAuth puts a sign-in button on the submission form."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import gradio as gr
import pytest
import yaml

from eval_queue.queue import RequestQueue
from eval_queue.settings import Settings
from eval_queue.storage import Stores
from eval_queue.storage.local import LocalStorage
from leaderboard.ui.context import AppContext
from leaderboard.ui.layout import build_app

REPO = Path(__file__).resolve().parents[2]


def _ctx(tmp_path: Path, env: dict[str, str]) -> AppContext:
    stores = Stores(
        requests=LocalStorage(tmp_path / "requests"),
        results=LocalStorage(tmp_path / "results"),
        details=LocalStorage(tmp_path / "details"),
    )
    settings = Settings.from_env({"EVALITA_DATA_DIR": str(tmp_path), **env})
    return AppContext(settings=settings, stores=stores, queue=RequestQueue(stores.requests))


def _components(demo: gr.Blocks, kind: type) -> list:
    return [block for block in demo.blocks.values() if isinstance(block, kind)]


def _as_a_space_with_oauth(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """What a Space with ``hf_oauth: true`` sets (gradio reads its OAuth variables at import)."""
    import gradio.oauth

    space = {
        "OAUTH_CLIENT_ID": "space-client",
        "OAUTH_CLIENT_SECRET": "space-secret",
        "OAUTH_SCOPES": "openid profile",
        "OPENID_PROVIDER_URL": "https://huggingface.co",
    }
    monkeypatch.setenv("SYSTEM", "spaces")
    monkeypatch.setenv("SPACE_ID", "evalita/leaderboard")
    for name, value in space.items():
        monkeypatch.setenv(name, value)
        monkeypatch.setattr(gradio.oauth, name, value)
    return space


def test_a_space_with_oauth_shows_the_sign_in_button_and_requires_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _ctx(tmp_path, _as_a_space_with_oauth(monkeypatch))
    assert ctx.settings.oauth and ctx.settings.require_signin
    demo = build_app(ctx)
    assert len(_components(demo, gr.LoginButton)) == 1
    notes = [m.value for m in _components(demo, gr.Markdown) if m.elem_id == "submit-signin-note"]
    assert notes and "Sign in with your Hugging Face account" in notes[0]


def test_a_local_run_has_no_sign_in_button_and_says_how_submitters_are_counted(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, {})
    assert not ctx.settings.oauth and not ctx.settings.require_signin
    demo = build_app(ctx)
    assert _components(demo, gr.LoginButton) == []
    notes = [m.value for m in _components(demo, gr.Markdown) if m.elem_id == "submit-signin-note"]
    assert notes and "network address" in notes[0]


def test_sign_in_can_be_required_without_the_button_only_by_setting_it(tmp_path: Path) -> None:
    settings = Settings.from_env({"EVALITA_REQUIRE_SIGNIN": "1"})
    assert settings.require_signin and not settings.oauth
    assert not replace(settings, require_signin=False).require_signin


def test_the_space_front_matter_turns_oauth_on() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(re.match(r"^---\n(.*?)\n---\n", text, re.S).group(1))
    assert front["hf_oauth"] is True
