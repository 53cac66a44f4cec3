"""Workers publishing at the same time keep each other's rows (local file lock; hub compare-and-swap)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.core.contents_io import read_contents

ROOT = Path(__file__).resolve().parents[2]
PUBLISHERS = 3
EACH = 4


def test_concurrent_publishers_keep_every_row(
    worker_env: dict[str, str], backend: str, request: pytest.FixtureRequest
) -> None:
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.contents.publisher",
                "--model",
                f"org/model-{i}",
                "--count",
                str(EACH),
            ],
            cwd=ROOT,
            env=worker_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(PUBLISHERS)
    ]
    try:
        for process in processes:
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        for process in processes:  # all together
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        outputs = [process.communicate(timeout=240) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    for process, (_out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err[-2000:]
    published = {
        line.split(" ", 1)[1]
        for out, _ in outputs
        for line in out.splitlines()
        if line.startswith("published ")
    }
    assert len(published) == PUBLISHERS * EACH

    table = read_contents(open_stores(Settings.from_env(worker_env)).results)
    assert table is not None
    assert sorted(table.column("results_path").to_pylist()) == sorted(published)
    if backend == "hub":  # how often a publisher's commit lost the race and was redone (0 is possible)
        print(f"hub conflicts: {request.getfixturevalue('fake_hub').conflicts}")
