"""``python -m MODULE ARGS`` run to its end in a child forked from an interpreter that has already imported torch & co.

A worker run in a fresh interpreter spends some 4 CPU-seconds importing torch, transformers,
datasets and lm-eval before it reads its first request, and the suite starts some twenty of
them.  :func:`run_module` hands the command to a *fork server* instead: a plain interpreter,
started once per xdist worker and environment, that imported those libraries (and nothing of
this repository) and forks one child per command.  The child is a process of its own, as
``subprocess.run`` would start: its own environment (exactly ``env``), working directory,
``sys.argv``, standard streams and exit code; the module runs as ``__main__`` through
:mod:`runpy`, as ``python -m`` runs it, and the interpreter's exit handlers run before it ends.
What it shares with the server is only what the server imported, so the libraries' settings
read at import time (the hub's cache and offline flags, torch's threads) must be the command's:
a server serves only commands whose environment equals its own but for the ``EVALITA_*``
variables, which this repository reads at run time; another environment gets a server of its
own.

A test that signals its process (a kill, a SIGTERM) or runs two at once starts a fresh
interpreter with ``subprocess.Popen``, so the worker's own start-up stays exercised (as do
``backend install-embedded``, ``backend slurm`` and the rescore dry run, never forked).
``EVALITA_TESTS_PREFORK=0`` turns the fork server off: every command a fresh interpreter.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

#: What the server imports before it forks (third-party only: nothing that reads this repository's settings).
PRELOAD = (
    "numpy",
    "torch",
    "transformers",
    "datasets",
    "evaluate",
    "sklearn.metrics",
    "lm_eval.evaluator",
    "lm_eval.tasks",
    "lm_eval.models.huggingface",
)
#: Variables a command may set differently from its server's: read when the command runs, not at
#: import (this repository's settings; pytest's name of the test running).
RUN_TIME_PREFIX = "EVALITA_"
RUN_TIME = frozenset({"PYTEST_CURRENT_TEST"})
SWITCH = "EVALITA_TESTS_PREFORK"
#: Servers kept per test process (each holds some 540 MB); the least recently used one goes first.
MAX_SERVERS = 3
_POLL_S = 0.02

_servers: dict[tuple[tuple[str, str], ...], subprocess.Popen[str]] = {}
_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get(SWITCH, "1") != "0"


def run_module(
    module: str, args: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    """As ``subprocess.run([python, "-m", module, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)``."""
    argv = [sys.executable, "-m", module, *args]
    if not enabled():
        return subprocess.run(argv, cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="preforked-") as tmp:
        folder = Path(tmp)
        job = {
            "module": module,
            "args": list(args),
            "env": dict(env),
            "cwd": str(cwd),
            "stdout": str(folder / "stdout"),
            "stderr": str(folder / "stderr"),
            "status": str(folder / "status"),
        }
        pid = _submit(job, env, cwd)
        status = folder / "status"
        _wait_for(status, timeout)
        if not status.is_file():
            _kill(pid)
            _wait_for(status, 30)  # the server reaps it and writes its status
            raise subprocess.TimeoutExpired(argv, timeout, _read(folder / "stdout"), _read(folder / "stderr"))
        code = int(status.read_text())
        return subprocess.CompletedProcess(argv, code, _read(folder / "stdout"), _read(folder / "stderr"))


def _read(path: Path) -> str:
    return path.read_bytes().decode(errors="replace") if path.is_file() else ""


def _wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.is_file() and time.monotonic() < deadline:
        time.sleep(_POLL_S)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 9)


def _submit(job: dict[str, object], env: Mapping[str, str], cwd: Path) -> int:
    key = tuple(sorted(_import_time(env).items()))
    with _lock:
        server = _servers.pop(key, None)  # put back last: the dict's order is the order of use
        if server is None or server.poll() is not None:
            while len(_servers) >= MAX_SERVERS:
                oldest = _servers.pop(next(iter(_servers)))
                assert oldest.stdin is not None
                oldest.stdin.close()  # it lets its running commands end, then exits
            server = _start_server(env, cwd)
        _servers[key] = server
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(job) + "\n")
        server.stdin.flush()
        reply = server.stdout.readline()
    if not reply:
        raise RuntimeError(f"the fork server ended: {server.poll()}")
    return int(json.loads(reply)["pid"])


def _import_time(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.startswith(RUN_TIME_PREFIX) and k not in RUN_TIME}


def _start_server(env: Mapping[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", f"import runpy; runpy.run_path({__file__!r}, run_name='__fork_server__')"],
        cwd=cwd,
        env=_import_time(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _serve() -> None:
    """The server's loop: read a job a line, fork its child, answer its pid; write each ended child's status."""
    import importlib
    import select

    for name in PRELOAD:
        importlib.import_module(name)
    children: dict[int, str] = {}
    requests = sys.stdin
    while True:
        ready, _, _ = select.select([requests], [], [], 0.05)
        _reap(children)
        if not ready:
            continue
        line = requests.readline()
        if not line:  # the tests' process ended: let the children finish, then go
            while children:
                _reap(children)
                time.sleep(_POLL_S)
            return
        job = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(job)  # never returns
        children[pid] = job["status"]
        sys.stdout.write(json.dumps({"pid": pid}) + "\n")
        sys.stdout.flush()


def _reap(children: dict[int, str]) -> None:
    for pid in list(children):
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            status = Path(children.pop(pid))
            partial = status.with_name(status.name + ".part")
            partial.write_text(str(os.waitstatus_to_exitcode(wait_status)))
            partial.replace(status)


def _child(job: dict[str, object]) -> None:
    """In the forked child: become ``python -m MODULE ARGS`` with the job's environment and streams, then exit."""
    import atexit
    import runpy

    code = 1
    try:
        stdin = os.open(os.devnull, os.O_RDONLY)
        stdout = os.open(str(job["stdout"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        stderr = os.open(str(job["stderr"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 (the process's own streams, as at start-up)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        os.environ.clear()
        os.environ.update(job["env"])  # type: ignore[arg-type]
        os.chdir(str(job["cwd"]))
        sys.path[0] = os.getcwd()  # what ``python -m`` puts first
        import numpy

        numpy.random.seed()  # a fresh interpreter's numpy is seeded from the OS, not from its parent
        sys.argv = [str(job["module"]), *job["args"]]  # type: ignore[misc]
        try:
            runpy.run_module(str(job["module"]), run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, int | None):
                print(exc.code, file=sys.stderr)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__fork_server__":
    _serve()
