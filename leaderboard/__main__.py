"""``python -m leaderboard export [--track T] [--format csv|json|table] [--fewshot 0|5] [--prompts] [--metrics M]``,
``python -m leaderboard export --format eee DIR``, ``python -m leaderboard rebuild-contents [--dry-run]``,
``python -m leaderboard hub-results ORG/MODEL [--open-pr] [--dry-run]`` (:mod:`leaderboard.hub_results`).

Prints a track's export table — the default track's: the ranked table or, with
``--prompts``, the per-prompt table — of the results store configured by the
environment (``EVALITA_DATA_DIR``, or the hub repos) on stdout.  Each track registers
its table in :mod:`leaderboard.tracks`.  Data goes to stdout; warnings (a malformed
results file, runs left out of the table and how to show them) go to stderr.
``rebuild-contents`` writes the results store's contents table (``contents.parquet``) anew
from its results files (:mod:`leaderboard.core.contents`), naming and skipping unreadable ones.
``export --format eee DIR`` writes every run of every track as Every Eval Ever records
(:mod:`leaderboard.eee`) and validates them with the ``every-eval-ever`` package.
Exit codes: 0 success, 1 the store could not be read (or written), 2 bad arguments, 3 (eee)
a file written failed the Every Eval Ever validator.
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

from eval_queue.errors import ConfigurationError, MalformedFileError, StorageError
from eval_queue.redact import install_log_redaction
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from eval_queue.tracks import DEFAULT_TRACK, track_registry
from leaderboard.export import ALL_METRIC_SETS, ExportOptions, ExportTable
from leaderboard.store import read_results_store

logger = logging.getLogger("leaderboard")

EXIT_OK, EXIT_STORE_ERROR, EXIT_USAGE = 0, 1, 2


class ExportFormat(StrEnum):
    CSV = "csv"
    JSON = "json"
    #: A short table for people: the track's summary columns, aligned, scores with two decimals.
    TABLE = "table"
    #: Every run of every track as Every Eval Ever files under DIR (``leaderboard.eee``).
    EEE = "eee"


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
        "--track",
        choices=track_registry().names,
        default=DEFAULT_TRACK,
        help=f"whose table: the track's export (default: {DEFAULT_TRACK})",
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
        default=None,
        metavar="K",
        help="a track with few-shot settings: only this one, one of the track's ("
        + "; ".join(f"{s.name} {' or '.join(map(str, s.fewshot))}" for s in track_registry() if s.fewshot)
        + "; default: all)",
    )
    export.add_argument(
        "--prompts",
        action="store_true",
        help="a track with few-shot prompts: one row per (task, num_fewshot, prompt) with MinP/MaxP/AvgP/CPS",
    )
    metric_sets = sorted({name for spec in track_registry() for name in spec.metric_sets})
    export.add_argument(
        "--metrics",
        choices=[*metric_sets, ALL_METRIC_SETS],
        default=None,
        help="a track with several metric sets: one of them (default: its first; "
        + "; ".join(f"{s.name}: {', '.join(s.metric_sets)}" for s in track_registry() if s.metric_sets)
        + f") or {ALL_METRIC_SETS} (a 'metrics' column says which)",
    )
    export.add_argument(
        "directory",
        nargs="?",
        metavar="DIR",
        help="--format eee only: the folder the Every Eval Ever files go to (data/<benchmark>/<org>/<model>/…)",
    )
    export.add_argument(
        "--average-over",
        metavar="TASKS",
        default="",
        help="a track with per-task scores: add a custom average over these comma-separated task ids (e.g. te,sa), with its "
        "interval, tier and rank (custom_avg_cps, custom_avg_cps_low/_high, custom_tier, custom_rank)",
    )
    export.add_argument(
        "--complete-only",
        action="store_true",
        help="a track with per-task scores: only runs with a score on every task averaged (the custom average's, else all)",
    )
    export.add_argument(
        "--kinds",
        metavar="KINDS",
        default="",
        help="a ranked track: only runs of these comma-separated model kinds: chat, base, unknown",
    )
    export.add_argument(
        "--org-best",
        action="store_true",
        help="a ranked track: only each organisation's best ranked run per setting (org_runs counts its runs)",
    )
    export.add_argument(
        "--include-noncomparable",
        action="store_true",
        help="also show runs on sample or local data, with a --limit or of a task subset (left out by default)",
    )
    from leaderboard.hub_results.cli import add_parser as add_hub_results

    add_hub_results(commands)
    rebuild = commands.add_parser(
        "rebuild-contents",
        help="regenerate the contents table (contents.parquet) from the results files",
        description="Read every results file of the configured results store and write its contents "
        "table, contents.parquet (one row per run and setting; load it with datasets). Unreadable "
        "files are named and skipped.",
    )
    rebuild.add_argument(
        "--dry-run", action="store_true", help="read and report, write nothing (the table's rows on stdout)"
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


def _write(export: ExportTable, fmt: ExportFormat) -> None:
    match fmt:
        case ExportFormat.JSON:
            json.dump(_records(export.table), sys.stdout, ensure_ascii=False, indent=2)
            sys.stdout.write("\n")
        case ExportFormat.CSV:
            _two_decimals(export.table, export.percent_columns).to_csv(sys.stdout, index=False)
        case ExportFormat.TABLE:
            sys.stdout.write(_text_table(export) + "\n")
        case _:
            raise AssertionError(f"unhandled format {fmt!r}")


def _text_table(export: ExportTable) -> str:
    """The summary columns under their short headers; an empty cell is shown as ``-``."""
    table = _two_decimals(export.table, export.percent_columns)
    if export.summary:
        table = table[[c for c in export.summary if c in table.columns]].rename(columns=dict(export.summary))
    if table.empty:
        return "(no rows)"
    return table.astype(object).where(table.notna(), "-").to_string(index=False)


def _two_decimals(table: pd.DataFrame, percent_columns: frozenset[str]) -> pd.DataFrame:
    """Scores as the paper prints them (``54.00``); an empty score stays an empty cell."""
    shown = table.copy()
    for column in percent_columns.intersection(shown.columns):
        shown[column] = [None if pd.isna(v) else f"{v:.2f}" for v in shown[column]]
    return shown


def _listed(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def export(args: argparse.Namespace, settings: Settings) -> int:
    if args.format == ExportFormat.EEE:
        from leaderboard.eee.cli import export_eee

        return export_eee(args.directory, settings)
    if args.directory is not None:
        logger.error("DIR is for --format eee; the other formats print on stdout")
        return EXIT_USAGE
    spec = track_registry().spec(args.track)
    track = spec.name
    if not spec.has_fewshot and (args.fewshot is not None or args.prompts):
        owners = ", ".join(s.name for s in track_registry() if s.has_fewshot)
        logger.error(
            "--fewshot and --prompts belong to tracks with few-shot prompts (%s), not to %s", owners, track
        )
        return EXIT_USAGE
    if args.fewshot is not None:
        try:
            spec.check_fewshot(args.fewshot)
        except ValueError as exc:
            logger.error("--fewshot %s: %s", args.fewshot, exc)
            return EXIT_USAGE
    if args.metrics is not None and args.metrics != ALL_METRIC_SETS and args.metrics not in spec.metric_sets:
        sets = ", ".join(spec.metric_sets) or "only its own"
        logger.error("--metrics %s: the %s track's scores come in %s", args.metrics, track, sets)
        return EXIT_USAGE
    if args.metrics == ALL_METRIC_SETS and len(spec.metric_sets) < 2:
        logger.error("--metrics %s: the %s track has one metric set", ALL_METRIC_SETS, track)
        return EXIT_USAGE
    export_results = spec.load("export")
    if export_results is None:
        logger.error("the %s track has no export table installed", track)
        return EXIT_USAGE
    stores = open_stores(settings)
    try:
        store = read_results_store(stores.results)
    except StorageError as exc:
        logger.error("cannot read the results store: %s", exc)
        return EXIT_STORE_ERROR
    records = store.of(track)
    problems = (*store.envelope_problems, *store.problems_of(track))
    _warn_skipped(problems)
    if not records:
        logger.warning("no usable results files (track %s) in %r", track, stores.results)
    options = ExportOptions(
        args.fewshot,
        args.prompts,
        args.include_noncomparable,
        args.metrics,
        average_over=_listed(args.average_over),
        complete_only=args.complete_only,
        kinds=_listed(args.kinds),
        org_best=args.org_best,
    )
    try:
        table = export_results(records, options)
    except ValueError as exc:  # an option the track cannot use (an unknown task id, kind)
        logger.error("%s", exc)
        return EXIT_USAGE
    for note in table.notes:
        logger.warning("%s", note)
    try:
        _write(table, ExportFormat(args.format))
    except BrokenPipeError:
        # The reader (e.g. ``| head``) stopped early; that is not an error of ours.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
    return EXIT_OK


def _warn_skipped(problems: Sequence[MalformedFileError]) -> None:
    """Each was logged by the reader with its reason; this names them again in one place."""
    if problems:
        logger.warning(
            "%d malformed results file(s) skipped: %s", len(problems), ", ".join(p.path for p in problems)
        )


def rebuild_contents(args: argparse.Namespace, settings: Settings) -> int:
    """``rebuild-contents``: the contents table regenerated from the results files, written whole.

    A worker publishing meanwhile may see its rows dropped: its results file is still read by
    the app (the table only speeds up the cold start), and a second rebuild adds them.
    """
    from leaderboard.core.contents import CONTENTS_PATH
    from leaderboard.core.contents_io import rebuild

    stores = open_stores(settings)
    try:
        rebuilt = rebuild(stores.results)
    except StorageError as exc:
        logger.error("cannot read the results store: %s", exc)
        return EXIT_STORE_ERROR
    _warn_skipped(rebuilt.problems)
    if rebuilt.unsupported:
        logger.warning("%d results file(s) of tracks not installed here left out", len(rebuilt.unsupported))
    files = len(set(rebuilt.table.column("results_path").to_pylist()))
    if args.dry_run:
        columns = [
            c for c in ("model", "track", "setting", "data", "comparable") if c in rebuilt.table.column_names
        ]
        print(rebuilt.table.select(columns).to_pandas().to_string(index=False) if files else "(no rows)")
        print(
            f"{rebuilt.table.num_rows} row(s) from {files} results file(s); nothing written", file=sys.stderr
        )
        return EXIT_OK
    try:
        stores.results.write(CONTENTS_PATH, rebuilt.data, message="Rebuild the contents table")
    except StorageError as exc:
        logger.error("cannot write %s: %s", CONTENTS_PATH, exc)
        return EXIT_STORE_ERROR
    print(f"{CONTENTS_PATH}: {rebuilt.table.num_rows} row(s) from {files} results file(s)")
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
        case "rebuild-contents":
            return rebuild_contents(args, settings)
        case "hub-results":
            from leaderboard.hub_results.cli import hub_results

            return hub_results(args, settings)
        case _:
            raise AssertionError(f"unhandled command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
