"""The README's Space front matter stays in step with the code it describes."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from leaderboard.tracks.evalita.definition import SUITE

ROOT = Path(__file__).resolve().parents[1]


def _front_matter() -> dict:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.match(r"\A---\n(.*?)\n---\n", text, re.S)
    assert match, "README.md must start with the Space front matter"
    return yaml.safe_load(match.group(1))


def test_space_front_matter_lists_every_suite_dataset() -> None:
    assert _front_matter()["datasets"] == [task.dataset.path for task in SUITE]


def test_space_sdk_version_is_the_pinned_gradio() -> None:
    pins = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    # ``gradio[oauth]``: the sign-in button needs the OAuth extras (authlib, itsdangerous).
    assert re.search(rf"^gradio(\[oauth\])?=={re.escape(str(_front_matter()['sdk_version']))}$", pins, re.M)
    assert _front_matter()["app_file"] == "app.py"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "scripts/test.sh" in ci and "scripts/test.sh" in readme


def test_every_evalita_setting_is_documented_in_the_readme_and_design() -> None:
    source = (ROOT / "eval_queue" / "settings.py").read_text(encoding="utf-8")
    names = set(re.findall(r'"(EVALITA_[A-Z_]+)"', source))
    assert {"EVALITA_SUBMITTER_SALT", "EVALITA_TRUSTED_PROXIES", "EVALITA_REQUIRE_SIGNIN"} <= names
    for page in ("README.md", "docs/DESIGN.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        missing = sorted(name for name in names if f"`{name}`" not in text)
        assert not missing, f"{page} does not document {missing}"
