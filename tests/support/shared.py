"""A folder built once per test run and shared by the xdist workers: for session fixtures that cost a real run.

A session fixture is built by every xdist worker that runs a test needing it; when its tests sit
in files on both workers, an expensive one (a worker run of the tiny model, 15 s or more) is
built twice.  pytest-xdist's documented answer: the first worker builds it under the run's
shared temporary folder (``tmp_path_factory.getbasetemp().parent``, one per run), holding a file
lock; the others wait for the lock and read what it wrote.  Serially (``-n 0``) the base temp has
no per-run parent of its own, so the folder is a plain ``mktemp`` one.

What is shared must be read-only for the tests (a test that writes copies it first), and must not
depend on which worker built it beyond what is deterministic (the tiny model's revision is a hash
of files built from a fixed seed: every worker's copy has the same one).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """``name``'s folder, filled by ``build(folder)`` once per test run, whichever worker asks first."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    root = tmp_path_factory.getbasetemp().parent
    folder, done = root / name, root / f"{name}.done"
    with FileLock(str(root / f"{name}.lock")):
        if not done.is_file():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed half-way left
            folder.mkdir()
            build(folder)  # raises: no marker, the next worker that asks tries again (and says why)
            done.touch()
    return folder
