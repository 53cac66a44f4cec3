"""The worker's logging: its own lines on the terminal, everything (harness noise included) in a file.

With ``--log-file PATH`` the terminal shows the project's log lines (progress, ETA,
outcome) and any library's errors; the file gets every record at INFO (DEBUG with
``-v``), Python warnings (e.g. scikit-learn's ``UndefinedMetricWarning`` on tiny
samples) and what the harness prints itself (lm-eval's bootstrap messages and
progress bars).  Without it, everything goes to stderr as before.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

#: Top-level loggers of the project: shown on the terminal whatever the log file.
PROJECT_LOGGERS = frozenset({"backend", "eval_queue", "leaderboard"})
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
DATE_FORMAT = "%Y-%m-%dT%H:%M:%S"


class ProjectOnly(logging.Filter):
    """Passes the project's records, and any library's from ERROR up."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or record.name.partition(".")[0] in PROJECT_LOGGERS


def configure_logging(verbose: bool, log_file: Path | None = None) -> None:
    """The entry points' logging: INFO (DEBUG with ``-v``) with times; see the module docstring."""
    level = logging.DEBUG if verbose else logging.INFO
    console = logging.StreamHandler(sys.stderr)
    handlers: list[logging.Handler] = [console]
    if log_file is not None:
        console.addFilter(ProjectOnly())
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
        logging.captureWarnings(True)
    # Does nothing where logging is set up already (a test session): entry points only.
    logging.basicConfig(level=level, format=FORMAT, datefmt=DATE_FORMAT, handlers=handlers)


@contextmanager
def harness_output_to(log_file: Path | None) -> Iterator[None]:
    """While the harness runs, what it prints (``print``, tqdm bars) goes to ``log_file``, not the terminal."""
    if log_file is None:
        yield
        return
    with (
        open(log_file, "a", encoding="utf-8", buffering=1) as sink,
        redirect_stdout(sink),
        redirect_stderr(sink),
    ):
        yield
