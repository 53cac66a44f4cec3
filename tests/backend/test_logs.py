"""``--log-file``: the terminal keeps the worker's own lines; harness noise goes to the file (issue 14 §3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import logging, sys, warnings
from pathlib import Path
from backend.logs import configure_logging, harness_output_to

log_file = Path(sys.argv[1]) if len(sys.argv) > 1 else None
configure_logging(False, log_file)
logging.getLogger("backend.runner").info("loglikelihood: 3/8 requests, ETA 0m12s")
with harness_output_to(log_file):
    logging.getLogger("lm_eval.api.task").warning("Task 'x' from y overrides existing task")
    warnings.warn("F-score is ill-defined", UserWarning, stacklevel=1)
    print("bootstrapping for stddev: f1")
    sys.stderr.write("100%|██████████| 1/1\\n")
    logging.getLogger("transformers").error("could not load the tokenizer")
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_with_a_log_file_harness_noise_goes_there_and_the_terminal_keeps_the_workers_lines(
    tmp_path: Path,
) -> None:
    log_file = tmp_path / "logs" / "worker.log"
    done = _run(str(log_file))
    assert done.returncode == 0, done.stderr
    terminal = done.stdout + done.stderr
    assert "ETA 0m12s" in terminal and "could not load the tokenizer" in terminal  # errors stay visible
    for noise in ("overrides existing task", "ill-defined", "bootstrapping", "100%|"):
        assert noise not in terminal
    written = log_file.read_text()
    for line in (
        "ETA 0m12s",
        "overrides existing task",
        "ill-defined",
        "bootstrapping",
        "100%|",
        "tokenizer",
    ):
        assert line in written


def test_without_a_log_file_everything_stays_on_the_terminal() -> None:
    done = _run()
    assert done.returncode == 0, done.stderr
    for line in ("ETA 0m12s", "overrides existing task", "ill-defined", "bootstrapping"):
        assert line in done.stdout + done.stderr
