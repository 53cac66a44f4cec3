"""A command line's ``main`` run in the test's own process, as ``python -m PACKAGE ARGS`` would run it.

A child process costs an interpreter start and the package's imports (about a CPU-second for
``python -m leaderboard``); a test that only reads what the command prints and its exit code
does not need one.  :func:`run_main` gives the call the child's environment (exactly ``env``),
its own standard output and error (the log too: the root logger starts without handlers, as in a
fresh interpreter, so the entry point's ``logging.basicConfig`` writes to this call's stderr) and
turns argparse's ``SystemExit`` into the exit code.  Whatever the entry point set on the logging
module (root handlers and level, the record factory) is put back afterwards.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence

import pytest


def run_main(
    main: Callable[[Sequence[str]], int], argv: Sequence[str], env: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    """``main(argv)`` with ``env`` as the whole environment; its exit code, stdout and stderr."""
    root = logging.getLogger()
    handlers, level, factory = root.handlers[:], root.level, logging.getLogRecordFactory()
    stdout, stderr = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        for name in set(os.environ) - set(env):
            patch.delenv(name)
        for name, value in env.items():
            patch.setenv(name, value)
        root.handlers = []
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                try:
                    code = main(list(argv))
                except SystemExit as exc:  # argparse: usage errors exit with 2
                    code = exc.code if isinstance(exc.code, int) else 1
        finally:
            root.handlers = handlers
            root.setLevel(level)
            logging.setLogRecordFactory(factory)
    return subprocess.CompletedProcess(list(argv), code, stdout.getvalue(), stderr.getvalue())
