"""``python -m backend.tracks.judge MODEL …``: run one judge outside the queue (development, tests).

Writes the results file and the details into the local store under ``--data-dir``
exactly where the worker would publish them, and prints the results path.  The queue
route (``eval_queue submit … --track judge`` then ``python -m backend --once``) calls the
same :func:`~backend.tracks.judge.run.run_judge`.

Exit codes: 0 done; 1 the run failed (reason on stderr); 2 bad usage or input.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from backend.options import HarnessError, ModelRef, RunOptions, add_harness_arguments
from backend.provenance import precision_run, stamp
from backend.tracks.judge.convert import JudgeRunError
from backend.tracks.judge.run import JudgeJob, run_judge
from eval_queue.errors import EvalitaError
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.core.schema import ModelInfo
from leaderboard.tracks.judge.data import JudgeDataError, load_paper_pins
from leaderboard.tracks.judge.definition import TRACK, JudgeMode, JudgeProtocol
from leaderboard.tracks.judge.judged import JUDGED_TASK

log = logging.getLogger("backend.tracks.judge")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m backend.tracks.judge", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "model", help="the judge: a hub id (resolved offline through the HF cache) or a folder"
    )
    parser.add_argument("--revision", default="main")
    parser.add_argument("--precision", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    parser.add_argument("--mode", choices=[m.value for m in JudgeMode], default=JudgeMode.META.value)
    parser.add_argument("--target", help="generations: results path of the run to judge")
    parser.add_argument("--task", default=JUDGED_TASK.value, help="generations: the generative task judged")
    parser.add_argument(
        "--prompt", action="append", default=[], help="generations: prompt ids (default: all)"
    )
    parser.add_argument("--data", default="sample", help="meta: sample | local:<dir> | hub:<org>/<name>")
    parser.add_argument(
        "--protocol",
        choices=[p.value for p in JudgeProtocol],
        default=JudgeProtocol.PROJECT.value,
        help="project (zero-shot Italian rubric, prefilled answer) or paper (Appendix A, few-shot: needs --few-shot)",
    )
    parser.add_argument(
        "--few-shot",
        type=Path,
        help="JSONL file of worked examples (see leaderboard.tracks.judge.data); the paper protocol's examples",
    )
    parser.add_argument(
        "--paper-pins",
        type=Path,
        help="JSON file with the SHA-256 of the paper's examples file and annotated set "
        "(examples_sha256, annotated_sha256): only a run on exactly those is comparable with Table 1",
    )
    parser.add_argument(
        "--data-dir", type=Path, help="local store root (default: $EVALITA_DATA_DIR or ./eval-data)"
    )
    add_harness_arguments(
        parser,
        ("--limit", "--max-gen-toks", "--batch-size", "--device"),
        limit_help="items per criterion (not comparable)",
    )
    parser.add_argument(  # the judge's own meaning: its prompts use the template when there is one
        "--apply-chat-template",
        action="store_true",
        help="force the chat template (default: if the tokenizer has one)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%Y-%m-%dT%H:%M:%S",
    )
    settings = Settings.from_env()
    if args.data_dir is not None:  # an explicit local store, even where hub repos are configured
        settings = replace(settings, data_dir=args.data_dir, requests_repo=None, results_repo=None)
    try:
        options = RunOptions.from_args(args)
        job = JudgeJob(
            judge=ModelRef(args.model, args.revision, args.precision),
            info=ModelInfo(id=args.model, revision=args.revision, precision=args.precision),
            mode=JudgeMode(args.mode),
            target=args.target,
            task=args.task,
            prompts=tuple(args.prompt),
            protocol=JudgeProtocol(args.protocol),
        )
        pins = None if args.paper_pins is None else load_paper_pins(args.paper_pins)
        stores = open_stores(settings)
    except (EvalitaError, JudgeDataError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        with tempfile.TemporaryDirectory(prefix="evalita-judge-") as workdir:
            evaluation = run_judge(
                job,
                options=options,
                workdir=Path(workdir),
                data=args.data,
                stores=stores,
                few_shot_path=args.few_shot,
                paper_pins=pins,
            )
    except JudgeDataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (HarnessError, JudgeRunError) as exc:
        print(f"judge run failed: {exc}", file=sys.stderr)
        return 1
    # Outside the queue: no request or worker; the model block is the command line's, as it ran.
    model = job.info.model_copy(
        update={
            "precision": precision_run(job.info.precision, evaluation.run),
            "architecture": job.info.architecture or evaluation.architecture,
        }
    )
    published = stamp(evaluation, track=TRACK, model=model)
    for path, data in published.details.items():
        stores.details.write(path, data)
    stores.results.write(published.results_path, published.results.to_json())
    print(published.results_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
