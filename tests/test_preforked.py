"""tests/support/preforked.py: a command forked from the fork server is the process a fresh interpreter would be."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import preforked

REPO = Path(__file__).resolve().parents[1]
PROBE = "tests.support.preforked_probe"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hub cache of this file's commands: one server for all of them (its imports cost seconds)."""
    return tmp_path_factory.mktemp("hub")


def _env(hub: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "EVALITA_"))}
    return env | {"HF_HUB_CACHE": str(hub), "PYTHONPATH": str(REPO), **extra}


def _fresh(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", PROBE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("args", [[], ["3"], ["raise"]])
def test_a_forked_command_sees_and_answers_what_a_fresh_interpreter_does(
    hub: Path, tmp_path: Path, args: list[str]
) -> None:
    env = _env(hub, EVALITA_DATA_DIR=str(tmp_path / "data"))
    forked = preforked.run_module(PROBE, args, env=env, cwd=REPO, timeout=120)
    fresh = _fresh(args, env, REPO)

    assert forked.returncode == fresh.returncode == {"3": 3, "raise": 1}.get(args[0] if args else "", 0)
    assert json.loads(forked.stdout) == json.loads(
        fresh.stdout
    )  # environment, cwd, argv, sys.path[0], __main__
    if args == ["raise"]:
        assert "RuntimeError: the probe raised" in forked.stderr and "Traceback" in forked.stderr
    else:
        assert forked.stderr == fresh.stderr == "to stderr\n"


def test_a_run_time_variable_changes_without_a_new_server_and_an_import_time_one_gets_its_own(
    hub: Path, tmp_path: Path
) -> None:
    first = preforked.run_module(PROBE, [], env=_env(hub, EVALITA_DATA_DIR="/a"), cwd=REPO, timeout=120)
    servers = len(preforked._servers)
    again = preforked.run_module(PROBE, [], env=_env(hub, EVALITA_DATA_DIR="/b"), cwd=REPO, timeout=120)
    assert len(preforked._servers) == servers
    assert json.loads(first.stdout)["env"]["EVALITA_DATA_DIR"] == "/a"
    assert json.loads(again.stdout)["env"]["EVALITA_DATA_DIR"] == "/b"

    other = tmp_path / "other-hub"
    moved = preforked.run_module(PROBE, [], env=_env(other), cwd=REPO, timeout=120)
    assert len(preforked._servers) == min(servers + 1, preforked.MAX_SERVERS)
    assert list(preforked._servers)[-1] == tuple(sorted(preforked._import_time(_env(other)).items()))
    # Read by huggingface_hub when the server imported it: each command's own value.
    assert json.loads(moved.stdout)["hub_cache"] == str(other)
    assert json.loads(first.stdout)["hub_cache"] == str(hub)


def test_a_command_past_its_timeout_is_killed_and_raises_as_subprocess_run_does(hub: Path) -> None:
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        preforked.run_module(PROBE, ["sleep"], env=_env(hub), cwd=REPO, timeout=3)
    assert time.monotonic() - started < 60
    assert raised.value.output and json.loads(raised.value.output)["argv"] == ["sleep"]


def test_switched_off_every_command_is_a_fresh_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(preforked.SWITCH, "0")
    servers = dict(preforked._servers)
    done = preforked.run_module(PROBE, ["3"], env=_env(tmp_path), cwd=REPO, timeout=120)
    assert done.returncode == 3 and preforked._servers == servers
