"""Cost of the ranking's user views (issue 32) at N models, side by side with the plain ranking.

A board of N synthetic runs of one setting is built in memory (results files as the worker writes
them, parsed by the track's parser; every run with its ``uncertainty`` block: intervals, the mean
CPS's 1,000 resamples and each task's first ``TASK_DRAWS_KEPT``; scores and draws are random
around each model's skill — right in shape, not in statistics).  Then, on fresh boards of the same
records, each timed ``--repeat`` times (median):

* **ranking** — the plain ranking view (the setting's table, ranks and tiers: what a first visit
  computes);
* **custom avg (k tasks)** — the same with a custom average over k tasks (its points, intervals
  from the kept draws, and tiers among the setting's runs), after the plain ranking was computed
  (so the figure is the view's own cost);
* **complete only**, **chat only**, **org best** — each filter on a board whose ranking is warm;
* **repeat visit** — any of them again (memoised per snapshot and state: a dictionary lookup).

The tiers of both the ranking and a custom average are ``assign_tiers`` over every run of the
setting (an N × N comparison); at 10,000 runs that needs several GB (``leaderboard.core.tiers``:
a few N × N matrices), so ``--no-tiers`` leaves out the mean CPS's draws (the ranking has no
tiers) and times the custom average with its intervals but without its tiers' N × N test: the
rest of the cost at that size.

Run: ``.venv/bin/python bench/bench_user_views.py [--models 1000] [--tasks 3] [--repeat 3] [--no-tiers]``.
Prints a table and writes ``artifacts/bench_user_views.json``.
"""

from __future__ import annotations

import _common

_common.one_core()  # before numpy loads its BLAS: figures per core

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402


def _records(n: int, tiers: bool) -> dict:
    import numpy as np

    from leaderboard.core.schema import ModelInfo, RunInfo
    from leaderboard.core.summary import UncertaintySummary, encode_draws
    from leaderboard.tracks.evalita.app.records import RunRecord
    from leaderboard.tracks.evalita.cps_intervals import TASK_DRAWS_KEPT, mean_draws_key
    from leaderboard.tracks.evalita.definition import SUITE
    from leaderboard.tracks.evalita.schema import PromptScore, ResultsFile, TaskResult
    from leaderboard.tracks.evalita.uncertainty import (
        MEAN_CPS_FIGURE,
        MEAN_CPS_TIE_FIGURE,
        cps_figure,
        cps_tie_figure,
    )

    rng = np.random.default_rng(32)
    task_keys = {task.id: f"{task.id}-items" for task in SUITE}
    mean_key = mean_draws_key(task_keys.values())
    types = ("pretrained", "instruction-tuned", "fine-tuned", "merged", None)
    records = {}
    for i in range(n):
        skill = rng.uniform(0.2, 0.8)
        tasks, draws, intervals = {}, {}, {}
        task_draws = []
        for task in SUITE:
            scores = np.clip(skill + rng.normal(0, 0.05, len(task.prompts)), 0, 1)
            tasks[task.id] = TaskResult(
                metric=task.metric,
                prompts={
                    p.id: PromptScore(score=float(s)) for p, s in zip(task.prompts, scores, strict=True)
                },
            )
            reflected = skill + rng.normal(0, 0.02, 1000)
            task_draws.append(reflected)
            # Without tiers every run's task draws get a key of their own: nothing to pair.
            key = task_keys[task.id] if tiers else f"{task_keys[task.id]}-{i}"
            draws[cps_figure(task.id)] = (key, reflected[:TASK_DRAWS_KEPT])
            draws[cps_tie_figure(task.id)] = (key, reflected[:TASK_DRAWS_KEPT] - 0.005)
            intervals[cps_figure(task.id)] = (float(skill - 0.04), float(skill + 0.04))
        if tiers:
            mean = np.mean(task_draws, axis=0)
            draws[MEAN_CPS_FIGURE] = (mean_key, mean)
            draws[MEAN_CPS_TIE_FIGURE] = (mean_key, mean - 0.005)
        intervals[MEAN_CPS_FIGURE] = (float(skill - 0.02), float(skill + 0.02))
        summary = UncertaintySummary(
            method="bench (cps-reflected-tie-aware/2)",
            seed=1,
            n_resamples=1000,
            level=0.95,
            intervals=intervals,
            draws={f: {"key": k, "float32": encode_draws(v)} for f, (k, v) in draws.items()},
        )
        model = f"org-{i % 997}/model-{i:05d}"
        results = ResultsFile(
            model=ModelInfo(
                id=model, revision=f"{i:040x}", precision="bfloat16", params_b=7.0, model_type=types[i % 5]
            ),
            run=RunInfo(
                num_fewshot=0,
                data="hub",
                harness="lm-eval 0.4.13",
                finished_at="2025-05-01T10:00:00Z",
                chat_template=bool(i % 3 == 0) if i % 7 else None,
            ),
            tasks=tasks,
            uncertainty=summary,
        )
        path = f"{model}/results_0shot.json"
        records[path] = RunRecord.of(path, results)
    return records


def _median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=3, help="tasks in the custom average")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-tiers", action="store_true", help="runs keep no mean-CPS draws (no tiers)")
    args = parser.parse_args()

    from leaderboard.tracks.evalita.app.records import loaded_from_records
    from leaderboard.tracks.evalita.app.views.board import Board
    from leaderboard.tracks.evalita.app.views.labels import RankingFilters
    from leaderboard.tracks.evalita.app.views.ranking import ranking_view
    from leaderboard.tracks.evalita.definition import TASK_IDS
    from leaderboard.tracks.evalita.vocabulary import Setting

    start = time.perf_counter()
    records = _records(args.models, tiers=not args.no_tiers)
    built = time.perf_counter() - start
    chosen = tuple(TASK_IDS[: args.tasks])

    def fresh() -> Board:
        return Board(loaded_from_records(records, []))

    def cold(filters: RankingFilters) -> float:
        """The view on fresh boards whose plain ranking is computed first (not timed)."""
        times = []
        for _ in range(args.repeat):
            board = fresh()
            ranking_view(board, Setting.ZERO, RankingFilters())
            start = time.perf_counter()
            ranking_view(board, Setting.ZERO, filters)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    ranking_view(fresh(), Setting.ZERO, RankingFilters())  # imports (scipy) and first-use costs, untimed
    plain = _median(lambda: ranking_view(fresh(), Setting.ZERO, RankingFilters()), args.repeat)
    steps = {
        "ranking (first visit)": plain,
        f"custom avg ({len(chosen)} tasks)": cold(RankingFilters(average_over=chosen)),
        "custom avg (10 tasks)": cold(RankingFilters(average_over=tuple(TASK_IDS))),
        "complete only": cold(RankingFilters(complete_only=True)),
        "chat only": cold(RankingFilters(kinds=("chat",))),
        "org best": cold(RankingFilters(org_best=True)),
    }
    board = fresh()
    every = RankingFilters(average_over=chosen, complete_only=True, kinds=("chat", "base"), org_best=True)
    ranking_view(board, Setting.ZERO, every)
    steps["repeat visit (all four)"] = _median(lambda: ranking_view(board, Setting.ZERO, every), args.repeat)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(
        f"{args.models:,} runs (one setting), tiers {'off' if args.no_tiers else 'on'}; built in {built:.1f} s"
    )
    print(f"{'step':<28} {'seconds':>8} {'× ranking':>10}")
    for name, seconds in steps.items():
        print(f"{name:<28} {seconds:>8.3f} {seconds / plain:>10.2f}")
    print(f"peak RSS of this process: {rss_mb:,.0f} MB")
    out = _common.ARTIFACTS / "bench_user_views.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {"models": args.models, "tiers": not args.no_tiers, "steps_s": steps, "peak_rss_mb": rss_mb},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
