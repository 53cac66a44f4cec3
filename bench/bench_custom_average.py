"""The custom average over picked tasks (issue 32, MTEB #4914) at N models: this tree's
``subsets.custom_average`` side by side with the code of a git revision (``--before``, default
``main``), in one process, on the same store, for several task sets a visitor has not asked for.

The store is read once (``AppContext.warm``); then for each task set (a seeded random pick of 2–5
tasks, each set new, so no memoised view or kept tier counts answer it) both computations run,
alternating which goes first:

* **before** — the revision's ``views/subsets.py`` and ``core/tiers.py`` loaded from git (its
  ``custom_average``: each run's draws read one by one, ``scipy.stats.quantile``, its tiers);
* **after** — this tree's ``custom_average`` and the tiers of the 25 rows a page shows (the
  first page in custom-average order: :meth:`subsets.CustomTiers.at`, each row's own Holm family);
  then, timed apart, **every** tier (:meth:`subsets.CustomTiers.every`: what the CSV asks for).
  A revision whose ``custom_average`` computes every tier has no such split (its every-tier time
  is in "before").

Each prints wall and CPU seconds (in-process: no browser, no Gradio; one core unless
``--all-cores``: OpenBLAS's waiting threads count as CPU), their ratio, and whether
points, intervals and tiers are equal (they must be: ``--check`` exits 1 otherwise).  The first
``scipy.stats`` import (a second of the first request before) is timed apart: "after" runs first,
and whether it imported ``scipy.stats`` is printed.

Run: ``.venv/bin/python bench/bench_custom_average.py STORE [--sets 4] [--setting 0] [--before main] [--all-cores]``
(``STORE``: a data dir, e.g. ``artifacts/bench-stores/evalita-10000-distinct1000-seed7-v2``).
Prints a table and writes ``artifacts/bench_custom_average.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import types
from pathlib import Path

import _common


def _module_at(revision: str, path: str, name: str) -> types.ModuleType:
    """``path`` of the repository as it is at ``revision``, loaded as module ``name``."""
    source = subprocess.run(
        ["git", "show", f"{revision}:{path}"],
        cwd=_common.REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType(name)
    module.__file__ = f"{revision}:{path}"
    sys.modules[name] = module  # dataclasses look their module up while the source runs
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def _before(revision: str) -> types.ModuleType:
    """The revision's subsets module, its tiers (and everything tiers-related) the revision's own."""
    tiers = _module_at(revision, "leaderboard/core/tiers.py", "_before_tiers")
    subsets = _module_at(revision, "leaderboard/tracks/evalita/app/views/subsets.py", "_before_subsets")
    # Its own tiers module, also for the kept counts: the same draws must not be answered from the
    # counts this tree's computation kept.
    for name in ("TierEntry", "assign_tiers", "matrix_tiers"):
        if name in subsets.__dict__:
            setattr(subsets, name, getattr(tiers, name))
    if "percentile_intervals" in subsets.__dict__:  # as the revision computed them: scipy.stats.quantile
        uncertainty = _module_at(revision, "leaderboard/core/uncertainty.py", "_before_uncertainty")
        subsets.percentile_intervals = uncertainty.percentile_intervals
    return subsets


def _same(a, b, page: list[int], page_tiers: list[int | None]) -> bool:
    """Equal points, intervals, every tier, and the page's tiers (asked alone) are ``b``'s too."""
    import numpy as np

    return (
        np.array_equal(a.points, b.points, equal_nan=True)
        and np.array_equal(a.lows, b.lows, equal_nan=True)
        and np.array_equal(a.highs, b.highs, equal_nan=True)
        and a.tiers == b.tiers
        and page_tiers == [b.tiers[i] for i in page]
    )


def _first_page(points, comparable, size: int = 25) -> list[int]:
    """The positions of the first page's rows in custom-average order (comparable runs, best first)."""
    import numpy as np

    ranked = np.where(np.asarray(comparable, dtype=bool), np.nan_to_num(points, nan=-np.inf), -np.inf)
    return np.argsort(-ranked, kind="stable")[:size].tolist()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path, help="data dir of a store (results/ and contents.parquet)")
    parser.add_argument("--sets", type=int, default=4, help="new task sets to time")
    parser.add_argument("--setting", type=int, default=0, choices=(0, 5), help="num_fewshot")
    parser.add_argument("--before", default="main", help="git revision to compare with")
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--check", action="store_true", help="exit 1 if any result differs")
    parser.add_argument(
        "--all-cores", action="store_true", help="let BLAS use every core (default: one, figures per core)"
    )
    args = parser.parse_args()
    if not args.all_cores:
        _common.one_core()  # before numpy loads its BLAS (imported below, not at the top)

    import numpy as np

    from eval_queue.settings import Settings
    from leaderboard.tracks.evalita.app.records import RUN_KEY
    from leaderboard.tracks.evalita.app.views import subsets
    from leaderboard.tracks.evalita.definition import TASK_IDS
    from leaderboard.ui.context import AppContext

    before = _before(args.before)
    started = time.perf_counter()
    ctx = AppContext.from_settings(Settings(data_dir=args.store), refresh_s=3600)
    ctx.warm()
    board = ctx.snapshot("evalita")
    rows = board.rows(args.setting)
    keys = [(m, r, p, int(k)) for m, r, p, k in rows[list(RUN_KEY)].itertuples(index=False)]
    comparable = rows["comparable"].fillna(False).astype(bool).tolist()
    task_cps = subsets.task_cps_matrix(keys, board.loaded.prompt_scores, TASK_IDS)  # kept per snapshot
    print(
        f"store read in {time.perf_counter() - started:.1f} s: {len(keys):,} runs in {args.setting}-shot",
        flush=True,
    )
    rng = np.random.default_rng(args.seed)
    seen: set[tuple[str, ...]] = set()
    results = []
    for index in range(args.sets):
        while True:
            tasks = tuple(sorted(rng.choice(TASK_IDS, size=int(rng.integers(2, 6)), replace=False)))
            if tasks not in seen:
                seen.add(tasks)
                break
        timed = {}
        order = ("after", "before") if index % 2 == 0 else ("before", "after")
        for which in order:
            compute = subsets.custom_average if which == "after" else before.custom_average
            had_stats = "scipy.stats" in sys.modules
            wall, cpu = time.perf_counter(), time.process_time()
            average = compute(
                keys, board.loaded.prompt_scores, board.loaded.uncertainty, tasks, comparable, task_cps
            )
            if which == "after" and hasattr(average, "tier_of"):
                page = _first_page(average.points, comparable)
                page_tiers = average.tier_of.at(page)  # the page's rows, asked alone
            timed[which] = (time.perf_counter() - wall, time.process_time() - cpu, average)
            if which == "after" and hasattr(average, "tier_of"):
                wall = time.perf_counter()
                average.tier_of.every()  # what the CSV asks for
                timed["every"] = (time.perf_counter() - wall, 0.0, average)
            if which == "after" and not had_stats:
                print(f"  after imported scipy.stats: {'scipy.stats' in sys.modules}")
        same = _same(timed["after"][2], timed["before"][2], page, page_tiers)
        ranked = sum(t is not None for t in timed["after"][2].tiers)
        row = {
            "tasks": ",".join(tasks),
            "first": order[0],
            "before_s": timed["before"][0],
            "before_cpu_s": timed["before"][1],
            "after_s": timed["after"][0],
            "after_cpu_s": timed["after"][1],
            "after_every_tier_s": timed.get("every", (float("nan"),))[0],
            "ratio": timed["before"][0] / timed["after"][0],
            "cpu_ratio": timed["before"][1] / timed["after"][1],
            "equal": same,
            "tiered_runs": ranked,
        }
        results.append(row)
        print(
            f"{row['tasks']:<22} before {row['before_s']:6.2f} s (cpu {row['before_cpu_s']:6.2f})  "
            f"after {row['after_s']:6.2f} s (cpu {row['after_cpu_s']:6.2f}; every tier +{row['after_every_tier_s']:.2f} s)  "
            f"×{row['ratio']:.1f} (cpu ×{row['cpu_ratio']:.1f})  equal={same}  tiered={ranked:,}",
            flush=True,
        )
    report = {
        "store": str(args.store),
        "setting": args.setting,
        "before": args.before,
        "runs": len(keys),
        "sets": results,
    }
    _common.ARTIFACTS.mkdir(exist_ok=True)
    (_common.ARTIFACTS / "bench_custom_average.json").write_text(json.dumps(report, indent=2))
    return 1 if args.check and not all(r["equal"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
