"""Calibration grid: do the intervals cover the truth and the paired tests hold their rate?

Simulated runs with a known truth (``tests/support/synthetic/calibration.py``) fed through the
project's own functions — the items' draws, ``cps_task_group`` (reflected and tie-aware draws,
the bias-aware interval), ``paired_test`` — over the grid {distinct, near-tie, tied prompts} ×
{no, moderate, strong cluster effect} × {accuracy, F1-macro, NER F1, ROUGE-like}.  Per cell:
95 % coverage of the first prompt's score, of a task's CPS and of the mean CPS over
``--tasks`` tasks; the type-I error at α = 0.05 of the paired test per task and on the mean,
for two runs of equal true CPS (one with the cell's structure, one with a dominant prompt).
Each figure is printed with its Monte Carlo standard error.

The test suite runs a small version (``tests/uncertainty/test_calibration.py``); this is the
full one: ``.venv/bin/python bench/bench_calibration.py [--replicates 400] [--items 500]
[--tasks 10] [--resamples 1000]``.  Prints a table; writes ``artifacts/bench_calibration.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict

import _common  # the repository on sys.path, offline clients (before the project is imported)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=400, help="simulated test sets per cell")
    parser.add_argument("--items", type=int, default=500, help="items per task")
    parser.add_argument("--tasks", type=int, default=10, help="tasks averaged by the mean CPS")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples B")
    parser.add_argument("--metrics", default="accuracy,f1-macro,ner,rouge")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from leaderboard.core.uncertainty import BootstrapConfig
    from tests.support.synthetic.calibration import CellResult, simulate_grid

    t0 = time.perf_counter()
    cells = simulate_grid(
        replicates=args.replicates,
        n_items=args.items,
        n_tasks=args.tasks,
        config=BootstrapConfig(n_resamples=args.resamples),
        metrics=tuple(args.metrics.split(",")),
        seed=args.seed,
    )
    elapsed = time.perf_counter() - t0
    trials_task = args.replicates * args.tasks
    print(
        f"bench_calibration: {args.replicates} replicates × {args.tasks} tasks × {args.items} items, "
        f"B = {args.resamples} ({elapsed:.0f} s); Monte Carlo s.e. in brackets"
    )
    header = f"{'structure':9} {'clusters':9} {'metric':9} {'prompt':>13} {'task CPS':>13} {'mean CPS':>13} {'type I task':>13} {'type I mean':>13}"
    print(header)

    def cell(rate: float, trials: int) -> str:
        return f"{100 * rate:5.1f} ({100 * CellResult.mc_error(rate, trials):.1f})"

    for c in cells:
        print(
            f"{c.structure:9} {c.clusters:9} {c.metric:9} {cell(c.prompt, trials_task):>13} "
            f"{cell(c.task_cps, trials_task):>13} {cell(c.mean_cps, args.replicates):>13} "
            f"{cell(c.type1_task, trials_task):>13} {cell(c.type1_mean, args.replicates):>13}"
        )
    out = _common.ARTIFACTS / "bench_calibration.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps({"args": vars(args), "seconds": elapsed, "cells": [asdict(c) for c in cells]}, indent=2)
        + "\n"
    )
    print(f"wrote {out.relative_to(_common.REPO_ROOT)}")


if __name__ == "__main__":
    main()
