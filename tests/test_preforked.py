"""tests/support/preforked.py: a command forked from the fork server is the process a fresh interpreter would be."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.backend.conftest import datasets_cache, tiny_model, worker_env  # noqa: F401 (fixtures)
from tests.support import preforked
from tests.support.tiny_model import TinyModel

REPO = Path(__file__).resolve().parents[1]
PROBE = "tests.support.preforked_probe"


@pytest.fixture(scope="module")
def worker(tiny_model: TinyModel, datasets_cache: Path) -> dict[str, str]:  # noqa: F811
    """The worker tests' environment (tests/backend/conftest.py): their server serves these commands
    too (a server's imports cost some 5 CPU-seconds)."""
    return worker_env(tiny_model.cache_dir, datasets_cache, Path("/unused"))


def _fresh(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", PROBE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("args", [[], ["3"], ["raise"]])
def test_a_forked_command_sees_and_answers_what_a_fresh_interpreter_does(
    worker: dict[str, str], tmp_path: Path, args: list[str]
) -> None:
    env = worker | {"EVALITA_DATA_DIR": str(tmp_path / "data")}
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
    worker: dict[str, str], tmp_path: Path
) -> None:
    first = preforked.run_module(PROBE, [], env=worker | {"EVALITA_DATA_DIR": "/a"}, cwd=REPO, timeout=120)
    servers = len(preforked._servers)
    again = preforked.run_module(PROBE, [], env=worker | {"EVALITA_DATA_DIR": "/b"}, cwd=REPO, timeout=120)
    assert len(preforked._servers) == servers
    assert json.loads(first.stdout)["env"]["EVALITA_DATA_DIR"] == "/a"
    assert json.loads(again.stdout)["env"]["EVALITA_DATA_DIR"] == "/b"

    other = tmp_path / "other-hub"
    moved = preforked.run_module(PROBE, [], env=worker | {"HF_HUB_CACHE": str(other)}, cwd=REPO, timeout=120)
    assert len(preforked._servers) == min(servers + 1, preforked.MAX_SERVERS)
    assert list(preforked._servers)[-1] == tuple(
        sorted(preforked._import_time(worker | {"HF_HUB_CACHE": str(other)}).items())
    )
    # Read by huggingface_hub when the server imported it: each command's own value.
    assert json.loads(moved.stdout)["hub_cache"] == str(other)
    assert json.loads(first.stdout)["hub_cache"] == worker["HF_HUB_CACHE"]


def test_a_command_past_its_timeout_is_killed_and_raises_as_subprocess_run_does(
    worker: dict[str, str],
) -> None:
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        preforked.run_module(PROBE, ["sleep"], env=worker, cwd=REPO, timeout=3)
    assert time.monotonic() - started < 60
    assert raised.value.output and json.loads(raised.value.output)["argv"] == ["sleep"]


def test_switched_off_every_command_is_a_fresh_interpreter(
    worker: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(preforked.SWITCH, "0")
    servers = dict(preforked._servers)
    done = preforked.run_module(PROBE, ["3"], env=worker, cwd=REPO, timeout=120)
    assert done.returncode == 3 and preforked._servers == servers
