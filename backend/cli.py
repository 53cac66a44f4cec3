"""The worker's command line: options → :class:`~backend.config.WorkerConfig`, then one run or serve.

``python -m backend --once`` checks the data source first (every file the worker's
tasks read; all missing files named at once) and claims nothing if it is incomplete
(exit 5), then runs at most one request (:func:`backend.worker.run_once`).
``python -m backend`` serves (:func:`backend.serve.serve`).  Exit codes:
:class:`~backend.config.ExitCode`.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from backend.config import DEFAULT_LEASE_S, DEFAULT_POLL_S, DEFAULT_STALL_S, ExitCode, WorkerConfig
from backend.logs import configure_logging, harness_output_to
from backend.options import RunOptions, add_harness_arguments, positive_number
from eval_queue.errors import EvalitaError
from eval_queue.queue import RequestQueue
from eval_queue.redact import install_log_redaction
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from eval_queue.tracks import DEFAULT_TRACK, track_registry
from leaderboard.core.datasource import DataSource, DataSourceError

log = logging.getLogger(__name__)

DATA_ENV = "EVALITA_EVAL_DATA"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m backend",
        description="Evalita-LLM evaluation worker: claims requests from the queue and runs them through lm-eval.",
        epilog="Exit codes: 0 done or nothing to do; 1 evaluation failed (request FAILED) or lease lost; "
        "2 bad usage/configuration; 3 interrupted (request handed back to PENDING); "
        "4 store unavailable (hub outage, lock timeout: serve keeps polling); "
        "5 the data source lacks files (nothing claimed).  "
        "Other commands: install-embedded, prefetch MODEL..., slurm --workers N ..., reproduce RESULTS_PATH [--limit N]",
    )
    parser.add_argument("--once", action="store_true", help="claim and run at most one request, then exit")
    parser.add_argument(
        "--data",
        default=None,
        help=f"hub | sample | local:<dir> (default: ${DATA_ENV}, else sample)",
    )
    # The options each track adds (its spec's worker_options), parsed by the track's own function.
    for spec in track_registry():
        for option in spec.worker_options:
            parser.add_argument(
                option.flag, dest=option.dest, type=_track_value(option.parse), default=None, help=option.help
            )
    add_harness_arguments(parser)
    parser.add_argument("--worker-id", default=f"{socket.gethostname()}-{os.getpid()}")
    parser.add_argument(
        "--lease-s", type=float, default=DEFAULT_LEASE_S, help="lease length; renewed every third of it"
    )
    parser.add_argument(
        "--stall-s",
        type=float,
        default=DEFAULT_STALL_S,
        help="stop a run whose harness makes no progress this long, and hand its request back",
    )
    parser.add_argument("--poll-s", type=float, default=DEFAULT_POLL_S, help="serve: seconds between polls")
    parser.add_argument(
        "--until-empty", action="store_true", help="serve: stop once the queue has nothing left to claim"
    )
    parser.add_argument(
        "--deadline-s",
        type=positive_number,
        default=None,
        help="serve: stop after this many seconds, handing back the running request (as on SIGTERM)",
    )
    parser.add_argument("--progress-s", type=float, default=30.0, help="seconds between progress lines")
    parser.add_argument(
        "--publish-eee",
        action="store_true",
        help="also publish each run as Every Eval Ever records (validated) under eee/ in the results "
        "store, beside contents.parquet (default: off)",
    )
    parser.add_argument(
        "--log-file",
        type=Path,
        default=None,
        help="write the full log there (harness warnings and output included); the terminal keeps "
        "the worker's own lines",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def _track_value(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """A track's parser as an argparse type: its error message becomes the usage error."""

    def parsed(text: str) -> Any:
        try:
            return parse(text)
        except (ValueError, EvalitaError) as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parsed.__name__ = getattr(parse, "__name__", "value")
    return parsed


def config_from_args(args: argparse.Namespace, settings: Settings) -> WorkerConfig:
    data = args.data or settings.eval_data
    DataSource.parse(data)  # DataSourceError (exit 2) for a bad --data
    if args.lease_s <= 0 or args.poll_s <= 0 or args.stall_s <= 0:
        raise EvalitaError("--lease-s, --poll-s and --stall-s must be positive")
    return WorkerConfig(
        worker_id=args.worker_id,
        data=data,
        lease_s=args.lease_s,
        poll_s=args.poll_s,
        stall_s=args.stall_s,
        publish_eee=args.publish_eee,
        track_options={
            option.dest: getattr(args, option.dest)
            for spec in track_registry()
            for option in spec.worker_options
            if getattr(args, option.dest) is not None
        },
        harness=RunOptions.from_args(
            args, trust_remote_code=settings.allow_remote_code, progress_interval_s=args.progress_s
        ),
    )


def main(argv: Sequence[str]) -> int:
    """``python -m backend [--once] …``; returns the exit code (configuration errors raise, see ``__main__``)."""
    from backend.tracks import check_track_data

    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, args.log_file)
    settings = Settings.from_env()
    install_log_redaction(*settings.secrets)  # the configured token and salt, in every record
    config = config_from_args(args, settings)
    if not args.once:
        from backend.serve import ServeLimits, queue_has_work, serve, without_serve_options

        once_argv = without_serve_options(argv)
        if not any(a == "--worker-id" or a.startswith("--worker-id=") for a in argv):
            once_argv += ["--worker-id", config.worker_id]
        limits = ServeLimits(until_empty=args.until_empty, deadline_s=args.deadline_s)
        has_work = partial(queue_has_work, RequestQueue(open_stores(settings).requests))
        return int(serve(config, once_argv, limits, has_work))
    from backend.worker import next_request, run_once

    stores = open_stores(settings)
    queue = RequestQueue(stores.requests, secrets=settings.secrets, results=stores.results)
    # The data check is the track's: it asks the runner of the track it is about to claim,
    # with that request (e.g. a protocol that needs a file this worker was not given).
    upcoming = next_request(queue)
    try:
        check_track_data(upcoming.track if upcoming else DEFAULT_TRACK, config, request=upcoming)
    except DataSourceError as exc:
        log.error("nothing claimed: %s", exc)
        return ExitCode.DATA_UNAVAILABLE
    with harness_output_to(args.log_file):
        return int(run_once(stores, queue, config).exit_code)
