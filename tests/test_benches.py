"""Every benchmark script starts (its shared preamble, its imports, its options), so none rots unseen.

The benchmarks themselves are too long for the suite; ``--help`` runs each script's preamble
(``bench/_common.py``) and builds its argument parser, which imports what the options need.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(BENCH.glob("bench_*.py"))


def test_there_are_benchmarks_to_check() -> None:
    assert len(SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_a_benchmark_script_starts_from_another_directory(script: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
