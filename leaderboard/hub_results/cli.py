"""``python -m leaderboard hub-results ORG/MODEL [--open-pr] [--dry-run] [--out DIR] [--space-url URL]``
and ``python -m leaderboard hub-results --eval-yaml [--out DIR]``."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from eval_queue.errors import EvalitaError, StorageError
from eval_queue.names import is_model_id
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from eval_queue.text import shorten
from leaderboard.hub_results.publish import (
    HubResultsPlan,
    NoComparableRuns,
    RunLinks,
    eval_yaml_files,
    open_pull_request,
    plan,
    write_files,
)

logger = logging.getLogger("leaderboard")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
SPACE_URL_ENV = "EVALITA_SPACE_URL"


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser(
        "hub-results",
        help="a model's .eval_results files for its Hub page (or the benchmark's eval.yaml)",
        description="Write the .eval_results/*.yaml files of a model's comparable runs (the scores its "
        "Hub page shows), print them (--dry-run) or open a pull request on the model repo with them "
        "(--open-pr; never a direct commit). --eval-yaml writes the benchmark's eval.yaml instead.",
    )
    parser.add_argument("model", nargs="?", metavar="ORG/MODEL", help="the model, as on the Hub")
    parser.add_argument(
        "--open-pr", action="store_true", help="open a pull request on the model repo (HF_TOKEN)"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would be written or opened; write nothing"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="folder to write to (default: hub-results/ORG/MODEL)"
    )
    parser.add_argument(
        "--space-url",
        default=os.environ.get(SPACE_URL_ENV) or None,
        help=f"the leaderboard's public address, linked from each entry (default: ${SPACE_URL_ENV}; "
        "else the results file in the results repo)",
    )
    parser.add_argument(
        "--include-noncomparable",
        action="store_true",
        help="also runs on sample/local data or with a limit, labelled NOT COMPARABLE in each entry's notes "
        "(to look at the files, e.g. the demo's run; never with --open-pr)",
    )
    parser.add_argument(
        "--eval-yaml", action="store_true", help="write (or print, with --dry-run) the benchmark's eval.yaml"
    )


def hub_results(args: argparse.Namespace, settings: Settings) -> int:
    if args.eval_yaml:
        return _eval_yaml(args)
    if not args.model or not is_model_id(args.model):
        logger.error("name the model as on the Hub, ORG/MODEL (got %s)", shorten(args.model or ""))
        return EXIT_USAGE
    if args.open_pr and args.include_noncomparable:
        logger.error(
            "--include-noncomparable is for looking at the files: a model's page shows comparable runs only"
        )
        return EXIT_USAGE
    if args.open_pr and not args.dry_run and not settings.hf_token:
        logger.error("--open-pr needs HF_TOKEN (a token that can open pull requests on %s)", args.model)
        return EXIT_USAGE
    stores = open_stores(settings)
    links = RunLinks(
        space_url=args.space_url,
        results_repo=settings.results_repo if settings.use_hub else None,
        hub_endpoint=settings.hf_endpoint,
        local_root=settings.data_dir / "results",
    )
    try:
        planned = plan(stores.results, args.model, links, include_noncomparable=args.include_noncomparable)
    except NoComparableRuns as exc:
        logger.error("%s", exc)
        return EXIT_FAILED
    except StorageError as exc:
        logger.error("cannot read the results store: %s", exc)
        return EXIT_FAILED
    for problem in planned.problems:
        logger.warning("skipped %s", problem)
    if args.dry_run:
        action = f"would open a pull request on {args.model}" if args.open_pr else "would write"
        try:
            print(f"# {action}: {len(planned.files)} file(s)")
            for path, text in planned.files.items():
                print(f"\n--- {path}\n{text}", end="")
            print(f"\n--- pull request: {planned.title}\n{planned.description}", end="")
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader (e.g. ``| head``) stopped early; that is not an error of ours.
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return EXIT_OK
    if args.open_pr:
        return _open_pr(planned, settings)
    out = args.out or Path("hub-results") / args.model
    for path in write_files(planned, out):
        print(path)
    return EXIT_OK


def _open_pr(planned: HubResultsPlan, settings: Settings) -> int:
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    from eval_queue.hubclient import install_hub_timeouts, transport_errors

    install_hub_timeouts(settings.hub_timeouts)
    api = HfApi(endpoint=settings.hf_endpoint, token=settings.hf_token)
    try:
        url = open_pull_request(api, planned)
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "no answer"
        logger.error("the hub refused the pull request on %s (HTTP %s)", planned.model, status)
        return EXIT_FAILED
    except (*transport_errors(), EvalitaError) as exc:
        logger.error("could not open the pull request on %s: %s", planned.model, exc)
        return EXIT_FAILED
    print(f"pull request opened: {url}")
    return EXIT_OK


def _eval_yaml(args: argparse.Namespace) -> int:
    files = eval_yaml_files()
    for dataset, text in files.items():
        if args.dry_run:
            print(f"--- {dataset}: eval.yaml\n{text}", end="")
            continue
        target = (args.out or Path("hub-results") / dataset) / "eval.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(target)
    return EXIT_OK
