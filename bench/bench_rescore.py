"""Rescoring a whole store from its details, and what the as-specified set changes; SUM's ROUGE side by side.

    .venv/bin/python bench/bench_rescore.py [--models 1000] [--items 20] [--repeat 3] [--keep DIR]
    .venv/bin/python bench/bench_rescore.py --store DIR        # an existing store (e.g. the demo's)

1. **Store**: the synthetic store of ``--models`` models × 2 settings (``tests/support/synthetic/details.py``:
   every task and prompt, ``--items`` documents per prompt, NER per domain, with per-sample
   details; lm-eval numbers computed from those details, no as-specified block yet).  With
   ``--store DIR`` the store at ``DIR`` (``EVALITA_DATA_DIR`` layout) instead, rescored on a copy.
2. **Rescore** (in process, ``backend.tracks.evalita.rescore``): the whole store, both sets (lm-eval checked bit
   for bit, as-specified written), then again (idempotent: nothing written), then each set alone.
3. **What as-specified changes**: prompt scores that differ at two decimals (the paper's
   display), task ranks (by CPS) and overall ranks (mean CPS) that change, per setting.
4. **ROUGE-1** on the store's SUM pairs (reference, answer): ``rouge_score`` (what the harness
   runs) against ``rouge_score_rs`` (default tokenizer: the lm-eval column; Italian tokenizer: as
   specified), bit identity and timing side by side (``bench/bench_rouge.py``'s functions).

Prints tables and writes ``artifacts/bench_rescore_<timestamp>.json`` (gitignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import REPO_ROOT


def _timed(func: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = func()
    return time.perf_counter() - start, value


# --------------------------------------------------------------------------- what the sets change


def _ranks(values: dict[Any, float | None]) -> dict[Any, int]:
    """Competition ranks ("min") of the present values, best (highest) first."""
    present = {k: v for k, v in values.items() if v is not None}
    return {k: 1 + sum(1 for w in present.values() if w > v) for k, v in present.items()}


def compare_sets(loaded: Any) -> dict[str, Any]:
    """Per setting: prompt scores that differ at two decimals, and task and overall ranks that change."""
    from leaderboard.core.numbers import percent
    from leaderboard.tracks.evalita.app import tables
    from leaderboard.tracks.evalita.definition import SUITE
    from leaderboard.tracks.evalita.metric_sets import MetricSet

    specified = loaded.for_metric_set(MetricSet.AS_SPECIFIED)
    report: dict[str, Any] = {}
    for shots in sorted({int(k) for k in loaded.runs["num_fewshot"]}):
        a = loaded.prompt_scores
        b = specified.prompt_scores
        keys = [k for k in a if k[3] == shots]
        compared = changed = 0
        by_task: dict[str, list[int]] = {}
        for key in keys:
            for task in SUITE:
                for prompt in task.prompt_ids:
                    x = a[key].get(task.id, {}).get(prompt)
                    y = b.get(key, {}).get(task.id, {}).get(prompt)
                    if x is None or y is None:
                        continue
                    compared += 1
                    differs = percent(x) != percent(y)
                    changed += differs
                    counts = by_task.setdefault(str(task.id), [0, 0])
                    counts[0] += differs
                    counts[1] += 1
        rank_a = tables.ranking_table(loaded, shots, include_noncomparable=True).set_index("model")
        rank_b = tables.ranking_table(specified, shots, include_noncomparable=True).set_index("model")
        tasks = {}
        for task in SUITE:
            column = f"{task.id}_cps"
            ra = _ranks({m: (None if v != v else v) for m, v in rank_a[column].items()})
            rb = _ranks({m: (None if v != v else v) for m, v in rank_b[column].items()})
            tasks[str(task.id)] = sum(1 for m in ra if ra.get(m) != rb.get(m))
        overall_a = _ranks({m: (None if v != v else v) for m, v in rank_a["avg_cps"].items()})
        overall_b = _ranks({m: (None if v != v else v) for m, v in rank_b["avg_cps"].items()})
        moved = [
            abs(overall_a[m] - overall_b[m])
            for m in overall_a
            if m in overall_b and overall_a[m] != overall_b[m]
        ]
        report[f"{shots}-shot"] = {
            "runs": len(keys),
            "prompt_scores_compared": compared,
            "prompt_scores_changed": changed,
            "prompt_scores_changed_by_task": {t: c for t, c in by_task.items() if c[0]},
            "task_ranks_changed": tasks,
            "overall_ranks_changed": len(moved),
            "overall_rank_shift_max": max(moved, default=0),
            "overall_rank_shift_median": statistics.median(moved) if moved else 0,
            "top10_changed": sorted(rank_a["avg_cps"].nlargest(10).index)
            != sorted(rank_b["avg_cps"].nlargest(10).index),
        }
    return report


# --------------------------------------------------------------------------- ROUGE on the store's SUM pairs


def sum_pairs(details_root: Path, limit: int) -> Any:
    from tests.metrics.rouge_pairs import PairSet

    pairs, labels = [], []
    for path in sorted(details_root.rglob("sum_p*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            record = json.loads(line)
            pairs.append((record["target"], record["answer"]))
            labels.append(f"{path.parent.name}/{path.name}:{number}")
            if len(pairs) >= limit:
                return PairSet(tuple(pairs), tuple(labels))
    return PairSet(tuple(pairs), tuple(labels))


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3, help="ROUGE timing rounds")
    parser.add_argument("--rouge-pairs", type=int, default=4000, help="SUM pairs timed")
    parser.add_argument("--store", type=Path, help="rescore a copy of this store instead of a synthetic one")
    parser.add_argument("--keep", type=Path, help="build the synthetic store here and keep it")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--per-item",
        action="store_true",
        help="give each synthetic run its per-item file and intervals, so that rescoring also "
        "bootstraps the as-specified set's intervals (issue 28)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("RAYON_NUM_THREADS", "1")  # score_batch on one thread: a fair side by side

    from backend.tracks.evalita.rescore import Action, all_results_paths, rescore
    from bench.bench_rouge import identity, timings
    from eval_queue.settings import Settings
    from eval_queue.storage import open_stores
    from leaderboard.tracks.evalita.app.records import load_results
    from leaderboard.tracks.evalita.metric_sets import MetricSet
    from tests.support.synthetic.details import write_synthetic_store

    report: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
        },
    }
    with tempfile.TemporaryDirectory(prefix="bench-rescore-") as tmp:
        root = args.keep or Path(tmp) / "store"
        if args.store:
            shutil.copytree(args.store, root, dirs_exist_ok=True)
            report["store"] = {"source": str(args.store)}
            print(f"store: a copy of {args.store}")
        else:
            build_s, built = _timed(
                lambda: write_synthetic_store(root, args.models, args.items, per_item=args.per_item)
            )
            report["store"] = {
                "models": args.models,
                "items_per_prompt": args.items,
                "per_item": args.per_item,
                "results_files": built.results_files,
                "details_files": built.details_files,
                "details_lines": built.details_lines,
                "build_s": round(build_s, 1),
            }
            print(
                f"store: {args.models} models × 2 settings = {built.results_files} runs, {built.details_files} "
                f"details files, {built.details_lines:,} per-sample lines (built in {build_s:.0f} s)"
            )
        stores = open_stores(Settings(data_dir=root))
        paths = all_results_paths(stores)
        passes = {}
        for name, sets in (
            ("both sets, first pass (writes as-specified)", [MetricSet.LM_EVAL, MetricSet.AS_SPECIFIED]),
            ("both sets, again (idempotent)", [MetricSet.LM_EVAL, MetricSet.AS_SPECIFIED]),
            ("lm-eval check only", [MetricSet.LM_EVAL]),
            ("as-specified only (present: unchanged)", [MetricSet.AS_SPECIFIED]),
        ):
            seconds, outcomes = _timed(lambda sets=sets: rescore(stores, paths, sets))
            actions: dict[str, int] = {}
            for outcome in outcomes:
                for s in outcome.sets:
                    actions[f"{s.metric_set}:{s.action}"] = actions.get(f"{s.metric_set}:{s.action}", 0) + 1
            checks = [s for o in outcomes for s in o.sets if s.action in (Action.CHECKED, Action.DIFFERS)]
            passes[name] = {
                "seconds": round(seconds, 2),
                "runs": len(paths),
                "ms_per_run": round(1000 * seconds / max(1, len(paths)), 1),
                "actions": actions,
                "failed": sum(o.failed is not None for o in outcomes),
                "prompt_scores_checked": sum(s.compared for s in checks),
                "prompt_scores_identical": sum(s.identical for s in checks),
            }
        report["rescore"] = passes
        print(f"\nrescore of {len(paths)} runs (in process, one core):")
        print(f"  {'pass':44s} {'seconds':>8s} {'ms/run':>8s}  outcome")
        for name, p in passes.items():
            identical = (
                f", lm-eval {p['prompt_scores_identical']}/{p['prompt_scores_checked']} identical"
                if p["prompt_scores_checked"]
                else ""
            )
            print(f"  {name:44s} {p['seconds']:8.1f} {p['ms_per_run']:8.1f}  {p['actions']}{identical}")

        loaded = load_results(stores.results)
        report["as_specified_changes"] = compare_sets(loaded)
        print("\nwhat as-specified changes (against lm-eval):")
        for setting, c in report["as_specified_changes"].items():
            print(
                f"  {setting}: {c['prompt_scores_changed']} of {c['prompt_scores_compared']} prompt scores "
                f"(two decimals) over {c['runs']} runs; overall rank changed for {c['overall_ranks_changed']} "
                f"(largest shift {c['overall_rank_shift_max']}, median {c['overall_rank_shift_median']}); "
                f"top 10 changed: {c['top10_changed']}"
            )
            changed = ", ".join(f"{t} {n}/{of}" for t, (n, of) in c["prompt_scores_changed_by_task"].items())
            print(f"     prompt scores changed by task: {changed or 'none'}")
            ranks = ", ".join(f"{t} {n}" for t, n in c["task_ranks_changed"].items() if n)
            print(f"     models whose rank on a task changed: {ranks or 'none'}")

        pairs = sum_pairs(root / "details", args.rouge_pairs)
        if len(pairs):
            from leaderboard.tracks.evalita.specified import ItalianTokenizer

            checks = {
                "default tokenizer": identity(pairs, None),
                "Italian tokenizer": identity(pairs, ItalianTokenizer()),
            }
            rows = timings(pairs, args.repeat)
            report["rouge"] = {
                "pairs": len(pairs),
                "identity": {
                    k: {"values": v["values_compared"], "differences": len(v["differences"])}
                    for k, v in checks.items()
                },
                "timing": [{k: v for k, v in row.items() if k != "runs_s"} for row in rows],
            }
            print(
                f"\nROUGE on {len(pairs)} SUM pairs of the store (references and answers), median of {args.repeat}:"
            )
            for name, check in checks.items():
                verdict = (
                    "bit-identical"
                    if not check["differences"]
                    else f"{len(check['differences'])} DIFFERENCES"
                )
                print(f"  identity, {name}: {check['values_compared']} values {verdict}")
            print(f"  {'case':44s} {'implementation':30s} {'median s':>9s} {'pairs/s':>9s} {'speed-up':>9s}")
            for row in rows:
                print(
                    f"  {row['case']:44s} {row['implementation']:30s} {row['median_s']:9.3f} "
                    f"{row['pairs_per_s']:9.0f} {row['speedup']:8.1f}×"
                )

    out = args.out or REPO_ROOT / "artifacts" / f"bench_rescore_{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
