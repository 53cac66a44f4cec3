"""``python -m leaderboard export [--format csv|json] [--fewshot 0|5] [--prompts]``.

Prints the ranked table (or, with ``--prompts``, the per-prompt table) of the results
store configured by the environment (``EVALITA_DATA_DIR``, or the hub repos) on
stdout.  Data goes to stdout, warnings (e.g. a malformed results file) to stderr.
Exit codes: 0 success, 1 the store could not be read, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from collections.abc import Sequence
from enum import StrEnum

import pandas as pd

from eval_queue.errors import ConfigurationError, StorageError
from eval_queue.redact import install_log_redaction
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.results import load_results
from leaderboard.suite import FEWSHOT_SETTINGS
from leaderboard.tables import PERCENT_COLUMNS, all_prompts_table, ranking_table

logger = logging.getLogger("leaderboard")

EXIT_OK, EXIT_STORE_ERROR = 0, 1


class ExportFormat(StrEnum):
    CSV = "csv"
    JSON = "json"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m leaderboard", description="Evalita-LLM leaderboard tools."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    export = commands.add_parser(
        "export",
        help="print the ranked table on stdout",
        description="Print the CPS-ranked table (values 0–100, two decimals) of the configured results store.",
    )
    export.add_argument(
        "--format",
        choices=[f.value for f in ExportFormat],
        default=ExportFormat.CSV.value,
        help="output format",
    )
    export.add_argument(
        "--fewshot",
        type=int,
        choices=FEWSHOT_SETTINGS,
        default=None,
        help="only this few-shot setting (default: all)",
    )
    export.add_argument(
        "--prompts",
        action="store_true",
        help="one row per (task, num_fewshot, prompt) with MinP/MaxP/AvgP/CPS over the models",
    )
    export.add_argument(
        "--include-noncomparable",
        action="store_true",
        help="also show runs on sample data or with a --limit (left out by default)",
    )
    return parser


def _records(table: pd.DataFrame) -> list[dict[str, object]]:
    """Rows as plain JSON values: NaN/NA become null, numpy scalars Python numbers."""
    records = []
    for row in table.astype(object).to_dict("records"):
        records.append({key: _json_value(value) for key, value in row.items()})
    return records


def _json_value(value: object) -> object:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item"):  # numpy scalar
        return value.item()  # type: ignore[no-any-return]
    return value


def _write(table: pd.DataFrame, fmt: ExportFormat) -> None:
    if fmt is ExportFormat.JSON:
        json.dump(_records(table), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        _two_decimals(table).to_csv(sys.stdout, index=False)


def _two_decimals(table: pd.DataFrame) -> pd.DataFrame:
    """Scores as the paper prints them (``54.00``); an empty score stays an empty cell."""
    shown = table.copy()
    for column in PERCENT_COLUMNS.intersection(shown.columns):
        shown[column] = [None if pd.isna(v) else f"{v:.2f}" for v in shown[column]]
    return shown


def export(args: argparse.Namespace, settings: Settings) -> int:
    stores = open_stores(settings)
    try:
        loaded = load_results(stores.results)
    except StorageError as exc:
        logger.error("cannot read the results store: %s", exc)
        return EXIT_STORE_ERROR
    if loaded.problems:
        # Each was logged by the loader with its reason; this names them again in one place.
        logger.warning(
            "%d malformed results file(s) skipped: %s",
            len(loaded.problems),
            ", ".join(problem.path for problem in loaded.problems),
        )
    if loaded.runs.empty:
        logger.warning("no usable results files in %r", stores.results)
    if args.prompts:
        table = all_prompts_table(loaded, args.fewshot, args.include_noncomparable)
    else:
        table = ranking_table(loaded, args.fewshot, args.include_noncomparable)
    try:
        _write(table, ExportFormat(args.format))
    except BrokenPipeError:
        # The reader (e.g. ``| head``) stopped early; that is not an error of ours.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (argparse exits with 2 on bad arguments)."""
    install_log_redaction()  # token-shaped strings, until the settings name the token
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    args = _parser().parse_args(argv)
    try:
        settings = Settings.from_env()
    except ConfigurationError as exc:
        logger.error("%s", exc)
        return 2
    install_log_redaction(*settings.secrets)
    match args.command:
        case "export":
            return export(args, settings)
        case _:
            raise AssertionError(f"unhandled command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
