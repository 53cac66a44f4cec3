"""``python -m eval_queue submit|list|cancel|requeue|doctor`` — the maintainers' queue tool.

Exit codes: 0 done; 1 the store could not be used (e.g. hub unreachable);
2 refused or bad input, with one clear line on stderr.

Everything printed that comes from the store (ids, errors, file names) goes through
:func:`eval_queue.text.printable`: a control character in a request file cannot drive the
terminal.  A RUNNING request whose lease has expired is listed as EXPIRED, with its
worker and the time its lease ended.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import TextIO

from eval_queue import doctor
from eval_queue.errors import (
    ConfigurationError,
    EvalitaError,
    InvalidTransitionError,
    MalformedFileError,
    NotFoundError,
    StorageError,
    SubmissionRejected,
)
from eval_queue.queue import QueueListing, QueueState, RequestQueue
from eval_queue.redact import install_log_redaction
from eval_queue.requests import (
    EvalRequest,
    ModelType,
    Precision,
    parse_request_path,
    utc_now,
)
from eval_queue.resolver import ModelResolver, resolver_for
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from eval_queue.storage.paths import check_path
from eval_queue.submission import SubmissionForm, submit
from eval_queue.text import printable, shorten
from eval_queue.tracks import DEFAULT_TRACK, track_registry

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_STORE = 1
EXIT_REFUSED = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad input in one line and exits 2, like every other refusal."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message} (see: python -m eval_queue {self.prog.split()[-1]} --help)\n")
        raise SystemExit(EXIT_REFUSED)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m eval_queue", description="Evalita-LLM evaluation queue.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    add = commands.add_parser("submit", help="queue a model for evaluation")
    add.add_argument("model", help="Hub model id, organisation/name")
    add.add_argument("--revision", default="main", help="branch, tag or commit (pinned to a sha)")
    add.add_argument("--precision", default=Precision.BFLOAT16.value, help=_choices(Precision))
    add.add_argument(
        "--fewshot",
        type=int,
        action="append",
        metavar="K",
        help="few-shot setting, repeatable: "
        + "; ".join(f"{s.name} {' or '.join(map(str, s.fewshot))}" for s in track_registry() if s.fewshot)
        + " (default 0)",
    )
    add.add_argument(
        "--model-type", default=None, help=_choices(ModelType) + " (default: from the model card)"
    )
    add.add_argument("--submitted-by", default="anonymous", help="your Hub user name")
    names = track_registry().names
    add.add_argument("--track", default=DEFAULT_TRACK, help=f"{', '.join(names)} (default: {DEFAULT_TRACK})")
    # Each track's request options, as its spec declares them (a subset as a comma list).
    for spec in track_registry():
        for option in spec.option_fields:
            if option.flag is not None:
                add.add_argument(
                    option.flag,
                    dest=f"option_{option.name}",
                    type=_comma_list if option.multiple else str,
                    default=None,
                    metavar=(",".join if option.multiple else "|".join)(v for _, v in option.choices[:2])
                    or None,
                    help=option.help,
                )

    show = commands.add_parser("list", help="show every request and any unreadable file")
    show.add_argument("--status", default=None, help=_choices(QueueState))

    for name, text in (
        ("cancel", "cancel a PENDING or RUNNING request"),
        ("requeue", "queue a request again"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("request_id", help="as shown by list (org/model_eval_request_…)")

    doctor = commands.add_parser("doctor", help="name debris in the stores (see eval_queue/doctor.py)")
    doctor.add_argument(
        "--fix",
        action="store_true",
        help="remove it: unreferenced details, stale temp files; reap expired leases",
    )
    return parser


def main(argv: Sequence[str] | None = None, *, resolver: ModelResolver | None = None) -> int:
    install_log_redaction()  # token-shaped strings, until the settings name the token
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        settings = Settings.from_env()
        install_log_redaction(*settings.secrets)
        queue = RequestQueue(open_stores(settings).requests, secrets=settings.secrets)
        return _run(args, queue, settings, resolver, sys.stdout)
    except (SubmissionRejected, InvalidTransitionError, ConfigurationError) as exc:
        return _refuse(str(exc))
    except NotFoundError as exc:
        return _refuse(f"no such request: {exc}")
    except MalformedFileError as exc:  # before StorageError: an unreadable entry is both
        return _refuse(f"unreadable request file {exc}")
    except StorageError as exc:
        sys.stderr.write(f"error: the queue store could not be used: {exc}\n")
        return EXIT_STORE
    except EvalitaError as exc:
        return _refuse(str(exc))


def _run(
    args: argparse.Namespace,
    queue: RequestQueue,
    settings: Settings,
    resolver: ModelResolver | None,
    out: TextIO,
) -> int:
    match args.command:
        case "submit":
            options = {
                name.removeprefix("option_"): value
                for name, value in vars(args).items()
                if name.startswith("option_") and value is not None
            }
            form = SubmissionForm(
                model=args.model,
                revision=args.revision,
                precision=args.precision,
                num_fewshot=tuple(args.fewshot or ()) or (0,),
                model_type=args.model_type,
                submitted_by=args.submitted_by,
                track=args.track,
                options=options,
            )
            results = open_stores(settings).results
            for request in submit(
                queue, form, resolver=resolver or resolver_for(settings), settings=settings, results=results
            ):
                out.write(f"queued {request.request_id} (revision {request.revision})\n")
        case "list":
            status = _parse_status(args.status)
            out.write(render_listing(queue.listing(), status, utc_now()))
        case "cancel":
            out.write(f"{_describe(queue.cancel(_request_id(args.request_id)))}\n")
        case "requeue":
            out.write(f"{_describe(queue.requeue(_request_id(args.request_id)))}\n")
        case "doctor":
            _doctor(settings, out, fix=args.fix)
        case _:
            raise AssertionError(f"unhandled command {args.command}")
    return EXIT_OK


def render_listing(listing: QueueListing, status: QueueState | None, now: datetime) -> str:
    """The ``list`` output: one line per request, then a "problems" section naming bad files.

    The state shown is the listing's derived one (EXPIRED: a RUNNING request whose lease
    ended, with its worker and lease time); every value from the store is made printable.
    """
    shown = [r for r in listing.requests if status is None or listing.state(r) is status]
    lines = [f"{'STATUS':<9} {'AGE':>5} {'TRIES':>5}  REQUEST"]
    for request in sorted(shown, key=lambda r: (r.submitted_time, r.request_id)):
        state = listing.state(request)
        lines.append(
            f"{state.value:<9} {_age(request, now):>5} {request.attempts:>5}  {_one_line(request.request_id)}"
        )
        if state is QueueState.RUNNING and request.phase is not None:
            # Where the run is (the queue tab's Stage column): claimed, running or publishing.
            lines.append(
                f"{'':<23}stage: {request.phase.value}, worker {_one_line(request.claimed_by or '?')}"
            )
        if state is QueueState.EXPIRED:
            lines.append(
                f"{'':<23}lease of worker {_one_line(request.claimed_by or '?')} "
                f"expired at {_one_line(request.lease_expires or '?')}"
            )
        if request.error:
            lines.append(f"{'':<23}error: {_one_line(request.error)}")
    if not shown:
        lines.append("(no requests)" if status is None else f"(no {status.value} requests)")
    if listing.problems:
        lines.append("")
        lines.append(f"problems ({len(listing.problems)} file(s) skipped):")
        lines.extend(f"  {_one_line(p.path, 300)}: {_one_line(p.reason, 600)}" for p in listing.problems)
    return "\n".join(lines) + "\n"


def _doctor(settings: Settings, out: TextIO, *, fix: bool) -> None:
    stores = open_stores(settings)
    queue = RequestQueue(stores.requests, secrets=settings.secrets, results=stores.results)
    findings = doctor.examine(stores, queue)
    doctor.report(findings, out, doctor.repair(stores, queue, findings) if fix else None)


def _parse_status(value: str | None) -> QueueState | None:
    if value is None:
        return None
    try:
        return QueueState(value.strip().upper())
    except ValueError:
        raise SubmissionRejected(
            f"unknown status {shorten(value)}: choose one of {_choices(QueueState)}."
        ) from None


def _request_id(text: str) -> str:
    """A request id as typed (with or without ``.json``), refused unless shaped like one."""
    request_id = text.strip().removesuffix(".json")
    try:
        parse_request_path(f"{request_id}.json")
        check_path(f"{request_id}.json")
    except (MalformedFileError, StorageError):
        raise SubmissionRejected(
            f"{shorten(text)} is not a request id: copy one from `python -m eval_queue list` "
            "(org/model_eval_request_<revision>_<precision>_<k>shot or _<track>)."
        ) from None
    return request_id


def _describe(request: EvalRequest) -> str:
    return f"{_one_line(request.request_id)}: {request.status.value}"


def _age(request: EvalRequest, now: datetime) -> str:
    seconds = max(0, int((now - request.submitted_at).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _one_line(text: str, limit: int = 160) -> str:
    """Printable (control characters escaped), on one line, at most ``limit`` characters."""
    line = printable(" ".join(text.split()), keep_newlines=False)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _choices(enum: type[StrEnum]) -> str:
    return ", ".join(member.value for member in enum)


def _comma_list(text: str) -> list[str]:
    return [part.strip().lower() for part in text.split(",") if part.strip()]


def _refuse(message: str) -> int:
    sys.stderr.write(f"error: {_one_line(message, 400)}\n")
    return EXIT_REFUSED
