"""Time the sample-data run of the embedded SmolLM2-135M-Instruct through the backend's runner.

    python bench/bench_sample_run.py [--tasks te,sa,...] [--limit N] [--batch-size 4]
                                     [--device cpu] [--fewshot 0] [--single-call] [--threads N] [--out FILE]

Each task (all its prompts) runs as its own ``run_harness`` call — the exact code path
of the worker — so its wall time is measured, not estimated; ``--single-call`` instead
runs the whole suite in one call, as the worker does, and reports the runner's own
per-task attribution.  Prints a table (wall time, requests, tokens forwarded and
generated, tokens/s, batch size, best prompt score; "fwd tok" counts the padded tokens
of every forward pass of the log-likelihood phase) and writes JSON to
``artifacts/bench_sample_run_<timestamp>.json`` (gitignored).

Installs the embedded model into the hub cache first if needed (``backend.embedded``).
Run offline: ``HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import REPO_ROOT, fmt

log = logging.getLogger("bench")


def _task_rows(task_ids: list[str], output: Any, wall: float | None) -> list[dict[str, Any]]:
    from leaderboard.tracks.evalita.definition import TASKS

    progress = output.progress
    rows = []
    for task_id in task_ids:
        task = TASKS[task_id]
        names = [n for p in task.prompts for n in p.harness_task_names]
        scores = [output.results[n].get(f"{task.metric},none") for n in names if n in output.results]
        numeric = [s for s in scores if isinstance(s, int | float)]
        rows.append(
            {
                "task": task_id,
                "harness_tasks": len(names),
                "docs": sum(output.n_samples.get(n, {}).get("effective", 0) for n in names),
                "requests": sum(progress["task_requests"].get(n, 0) for n in names),
                "wall_s": wall
                if wall is not None
                else sum(progress["task_seconds"].get(n, 0.0) for n in names),
                "max_score": max(numeric) if numeric else None,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    from backend.options import add_harness_arguments
    from leaderboard.tracks.evalita.definition import SUITE

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default=",".join(t.id for t in SUITE))
    add_harness_arguments(parser, ("--limit", "--batch-size", "--device"))
    parser.add_argument("--fewshot", type=int, default=0, choices=(0, 5))
    parser.add_argument("--single-call", action="store_true", help="one run_harness call for all tasks")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    from backend.embedded import install_embedded
    from backend.tracks.evalita.data import prepare_include_path
    from backend.tracks.evalita.offline_rouge import install_offline_rouge

    installed = install_embedded()
    install_offline_rouge()
    from backend.runner import ModelRef, RunOptions, run_harness
    from leaderboard.tracks.evalita.definition import TASKS

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)

    task_ids = [t.strip() for t in args.tasks.split(",") if t.strip()]
    options = RunOptions.from_args(args, progress_interval_s=30)
    model = ModelRef(installed.model_id, installed.revision, "bfloat16")

    rows: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-") as workdir:
        override = prepare_include_path("sample", Path(workdir))
        groups = [task_ids] if args.single_call else [[t] for t in task_ids]
        for group in groups:
            names = [n for t in group for p in TASKS[t].prompts for n in p.harness_task_names]
            t0 = time.perf_counter()
            output = run_harness(
                model,
                names,
                args.fewshot,
                options,
                task_manager_kwargs=override.task_manager_kwargs(),
                log_samples=False,
            )
            wall = time.perf_counter() - t0
            record = output.run
            progress = output.progress
            run = {
                "tasks": group,
                "wall_s": wall,
                "model_load_s": record.model_load_s or 0.0,
                "forward_tokens": progress["forward_tokens"],
                "generated_tokens": progress["generated_tokens"],
                "loglikelihood_s": progress["phase_seconds"].get("loglikelihood", 0.0),
                "generate_s": progress["phase_seconds"].get("generate_until", 0.0),
                "batch_size": record.batch_size,
                "batch_size_used": record.batch_size_used,
            }
            runs.append(run)
            group_rows = _task_rows(
                group, output, None if args.single_call else wall - (record.model_load_s or 0.0)
            )
            for row in group_rows:
                if not args.single_call:
                    row.update(
                        model_load_s=record.model_load_s,
                        forward_tokens=run["forward_tokens"],
                        generated_tokens=run["generated_tokens"],
                        forward_tok_s=run["forward_tokens"] / run["loglikelihood_s"]
                        if run["loglikelihood_s"]
                        else None,
                        generated_tok_s=run["generated_tokens"] / run["generate_s"]
                        if run["generate_s"]
                        else None,
                    )
            rows.extend(group_rows)
    total = time.perf_counter() - started

    summary = {
        "model": f"{installed.model_id}@{installed.revision}",
        "data": "sample",
        "limit": args.limit,
        "num_fewshot": args.fewshot,
        "single_call": args.single_call,
        "hardware": record.hardware,
        "device": record.device,
        "dtype": record.dtype,
        "batch_size": record.batch_size,
        "torch_threads": args.threads,
        "harness": record.harness,
        "versions": record.versions,
        "total_wall_s": total,
        "forward_tokens": sum(r["forward_tokens"] for r in runs),
        "generated_tokens": sum(r["generated_tokens"] for r in runs),
        "loglikelihood_s": sum(r["loglikelihood_s"] for r in runs),
        "generate_s": sum(r["generate_s"] for r in runs),
        "tasks": rows,
        "runs": runs,
    }
    summary["forward_tok_s"] = (
        summary["forward_tokens"] / summary["loglikelihood_s"] if summary["loglikelihood_s"] else None
    )
    summary["generated_tok_s"] = (
        summary["generated_tokens"] / summary["generate_s"] if summary["generate_s"] else None
    )
    _print_table(summary)
    out = args.out or REPO_ROOT / "artifacts" / f"bench_sample_run_{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"\nwritten {out}")
    return 0


def _print_table(summary: dict[str, Any]) -> None:
    print(
        f"\n{summary['model']} on {summary['hardware']} ({summary['device']}, {summary['dtype']}, "
        f"batch {summary['batch_size']}), data={summary['data']} limit={summary['limit']} "
        f"{summary['num_fewshot']}-shot, {summary['harness']}"
    )
    header = f"{'task':<5} {'docs':>5} {'reqs':>6} {'wall s':>8} {'load s':>7} {'fwd tok':>9} {'fwd tok/s':>9} {'gen tok':>8} {'gen tok/s':>9} {'MaxP':>6}"
    print(header)
    print("-" * len(header))
    for row in summary["tasks"]:
        print(
            f"{row['task']:<5} {row['docs']:>5} {row['requests']:>6} {fmt(row['wall_s'], '8.1f')} "
            f"{fmt(row.get('model_load_s'), '7.1f')} {fmt(row.get('forward_tokens'), '9d')} "
            f"{fmt(row.get('forward_tok_s'), '9.0f')} {fmt(row.get('generated_tokens'), '8d')} "
            f"{fmt(row.get('generated_tok_s'), '9.1f')} {fmt(row['max_score'], '6.3f')}"
        )
    print("-" * len(header))
    print(
        f"total wall {summary['total_wall_s']:.1f}s; forwarded {summary['forward_tokens']} tokens "
        f"({fmt(summary['forward_tok_s'], '.0f')} tok/s in log-likelihood), generated {summary['generated_tokens']} "
        f"tokens ({fmt(summary['generated_tok_s'], '.1f')} tok/s in generation)"
    )


if __name__ == "__main__":
    sys.exit(main())
