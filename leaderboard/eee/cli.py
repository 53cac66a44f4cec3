"""``python -m leaderboard export --format eee DIR``: the store's runs as Every Eval Ever files under DIR."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from eval_queue.errors import ConfigurationError, StorageError
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.eee.export import export_store

logger = logging.getLogger("leaderboard")

EXIT_OK, EXIT_STORE_ERROR, EXIT_USAGE, EXIT_INVALID = 0, 1, 2, 3


def export_eee(directory: str | None, settings: Settings) -> int:
    """Write every run (every track) under ``directory``; exit 3 when a file fails EEE's validator."""
    if not directory:
        logger.error("--format eee writes files: name the folder, e.g. export --format eee eee-out")
        return EXIT_USAGE
    out = Path(directory)
    if out.exists() and not out.is_dir():
        logger.error("%s exists and is not a folder", out)
        return EXIT_USAGE
    stores = open_stores(settings)
    try:
        report = export_store(stores.results, stores.details, out)
    except StorageError as exc:
        logger.error("cannot read the results store: %s", exc)
        return EXIT_STORE_ERROR
    except ConfigurationError as exc:
        logger.error("%s", exc)
        return EXIT_USAGE
    if report.problems:
        logger.warning(
            "%d unreadable file(s) skipped: %s",
            len(report.problems),
            ", ".join(p.path for p in report.problems),
        )
    for warning in report.warnings:
        logger.warning("EEE validator: %s", warning)
    for problem in report.invalid:
        logger.error("EEE validator: %s", problem)
    print(
        f"{report.runs} run(s) → {len(report.written)} file(s) under {out} "
        f"({report.instances} instance line(s)); every-eval-ever validator: "
        f"{len(report.invalid)} error(s), {len(report.warnings)} warning(s)",
        file=sys.stdout,
    )
    return EXIT_INVALID if report.invalid else EXIT_OK
