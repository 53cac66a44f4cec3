"""Cost of intervals and tiers on a large store: 1,000 synthetic runs × 2 settings, one core.

A synthetic store of per-item files (``leaderboard.core.items``, one Parquet file per run) with
the official test sets' sizes (paper §3: WIC 500, TE 400, SA 2,000, HS 1,763, FAQ 401, AT 521,
LS 1,710, NER 521 + 1,517 + 2,088, REL 1,064, SUM 8,437 items; 6 or 2 prompts: about 64,000
rows per run) is written to a temporary folder; runs' skills are spread so that there are many
tiers.  Then, on one core (``OMP_NUM_THREADS=1`` and friends, set before numpy is imported):

* **read** — ``items_from_parquet`` of every file (bytes from disk → ``RunItems``);
* **draws** — the resamples of every task's items (once per process: both settings share them);
* **bootstrap** — every run's prompt scores, task CPS and mean CPS resampled (``cps_runs``
  in batches of runs sharing items) and summarised to a ``RunUncertainty`` (what the app keeps);
* **tiers** — ``assign_tiers`` for both settings from the kept summaries (target: < 10 s);
* **warm start** — the summaries read back from their bytes (a restart with them cached);
* **the app's path** — what the app does when results change: every run's ``uncertainty`` block
  parsed from its results file's JSON (``UncertaintySummary``: the intervals and the mean CPS's
  base64 draws, as the worker writes them) and the tiers of both settings from it
  (``tables.setting_tiers``: draws decoded, paired test, Holm) — the incremental refresh re-parses
  only the changed files, so this is the worst case;
* **A/B** — ``compare_runs`` of two runs, their per-item files read (target: < 300 ms), and the
  same through the app's view (``compare_view``: the files read from a details store, the table,
  verdict and items that differ built);
* **one new run** — read + bootstrap one run and re-tier its setting (the incremental refresh).

Run: ``.venv/bin/python bench/bench_tiers.py [--runs 1000] [--settings 2] [--resamples 1000]``.
Prints a table and writes ``artifacts/bench_tiers.json``.
"""

from __future__ import annotations

import _common

_common.one_core()  # before numpy loads its BLAS

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = _common.REPO_ROOT


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs per setting")
    parser.add_argument("--settings", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100, help="runs read and bootstrapped together")
    parser.add_argument("--repeat", type=int, default=5, help="repeats of the A/B and tiers timings")
    args = parser.parse_args()

    import numpy as np

    from leaderboard.core.items import items_from_parquet, items_to_parquet
    from leaderboard.core.tiers import TierEntry, assign_tiers
    from leaderboard.core.uncertainty import BootstrapConfig, DrawCache
    from leaderboard.tracks.evalita.compare import compare_runs
    from leaderboard.tracks.evalita.cps_intervals import RunUncertainty, cps_runs
    from leaderboard.tracks.evalita.definition import TASK_IDS
    from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS
    from tests.support.synthetic.items import REAL_SIZES, SyntheticSuite

    config = BootstrapConfig(n_resamples=args.resamples)
    suite = SyntheticSuite(REAL_SIZES, seed=2025)
    rng = np.random.default_rng(0)
    report: dict[str, object] = {
        "runs_per_setting": args.runs,
        "settings": args.settings,
        "resamples": args.resamples,
    }

    with tempfile.TemporaryDirectory(prefix="bench-tiers-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        paths: dict[int, list[Path]] = {}
        for setting in range(args.settings):
            paths[setting] = []
            for r in range(args.runs):
                skill = float(rng.uniform(0.3, 0.85))
                path = root / f"s{setting}" / f"run{r:04d}.parquet"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(items_to_parquet(suite.run(setting * 100_000 + r, skill)))
                paths[setting].append(path)
        report["build_s"] = time.perf_counter() - t0
        sizes = [p.stat().st_size for ps in paths.values() for p in ps]
        report["file_bytes_mean"] = statistics.fmean(sizes)
        report["rows_per_run"] = sum(sum(parts.values()) * (6 if t in {"wic", "te", "sa", "hs", "faq", "at"} else 2)
                                     for t, parts in REAL_SIZES.items())  # fmt: skip

        cache = DrawCache()
        first = items_from_parquet(paths[0][0].read_bytes())
        t0 = time.perf_counter()
        for items in first.tasks.values():
            cache.get(config, items).weights  # noqa: B018 - materialise the counts too
        report["draws_s"] = time.perf_counter() - t0

        read_s, boot_s, read_each = 0.0, 0.0, []
        kept: dict[int, list[RunUncertainty]] = {}
        for setting, setting_paths in paths.items():
            kept[setting] = []
            for start in range(0, len(setting_paths), args.batch):
                t0 = time.perf_counter()
                batch = []
                for path in setting_paths[start : start + args.batch]:
                    t1 = time.perf_counter()
                    batch.append(items_from_parquet(path.read_bytes(), str(path)))
                    read_each.append(time.perf_counter() - t1)
                t1 = time.perf_counter()
                read_s += t1 - t0
                boots = cps_runs(batch, EVALITA_KINDS, config, cache)
                kept[setting] += [RunUncertainty.of(b, TASK_IDS) for b in boots]
                boot_s += time.perf_counter() - t1
        n_total = args.runs * args.settings
        report["read_total_s"] = read_s
        report["read_per_file_median_ms"] = 1000 * statistics.median(read_each)
        report["bootstrap_total_s"] = boot_s
        report["bootstrap_per_run_ms"] = 1000 * boot_s / n_total

        def tiers_all() -> list[int]:
            counts = []
            for setting_kept in kept.values():
                entries = [
                    TierEntry(f"r{i}", u.mean_cps, u.mean_cps_draws, u.mean_key, u.mean_cps_tie_draws)
                    for i, u in enumerate(setting_kept)
                ]
                counts.append(max(t.tier or 0 for t in assign_tiers(entries)))
            return counts

        timings = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            n_tiers = tiers_all()
            timings.append(time.perf_counter() - t0)
        report["tiers_s_median"] = statistics.median(timings)
        report["tiers_per_setting"] = n_tiers

        # The app's path: the results files' uncertainty blocks → tiers of both settings.
        from leaderboard.core.summary import UncertaintySummary
        from leaderboard.tracks.evalita.app.tables import setting_tiers
        from leaderboard.tracks.evalita.uncertainty import summary_of

        blocks = {
            setting: [summary_of(u, config).model_dump_json().encode() for u in setting_kept]
            for setting, setting_kept in kept.items()
        }
        report["block_json_bytes_mean"] = statistics.fmean(len(b) for bs in blocks.values() for b in bs)
        timings, parse_timings = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            parsed = {
                setting: {
                    (f"r{i}", "", "", setting): UncertaintySummary.model_validate_json(b)
                    for i, b in enumerate(bs)
                }
                for setting, bs in blocks.items()
            }
            t1 = time.perf_counter()
            for setting, by_key in parsed.items():
                scores = [u.mean_cps for u in kept[setting]]
                setting_tiers(list(by_key), scores, by_key)
            timings.append(time.perf_counter() - t1)
            parse_timings.append(t1 - t0)
        report["app_parse_blocks_s_median"] = statistics.median(parse_timings)
        report["app_tiers_s_median"] = statistics.median(timings)

        blobs = [u.to_bytes() for setting_kept in kept.values() for u in setting_kept]
        t0 = time.perf_counter()
        for blob in blobs:
            RunUncertainty.from_bytes(blob)
        report["warm_start_load_s"] = time.perf_counter() - t0
        report["summary_bytes_mean"] = statistics.fmean(len(b) for b in blobs)

        # The two runs of setting 0 closest in mean CPS: the question a visitor would ask.
        means = np.array([u.mean_cps for u in kept[0]])
        order = np.argsort(means)
        closest = int(np.argmin(np.diff(means[order])))
        pair = (int(order[closest + 1]), int(order[closest]))

        def ab(draw_cache: DrawCache) -> str:
            a = items_from_parquet(paths[0][pair[0]].read_bytes())
            b = items_from_parquet(paths[0][pair[1]].read_bytes())
            return compare_runs(a, b, EVALITA_KINDS, TASK_IDS, config=config, cache=draw_cache).summary

        timings = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            verdict = ab(cache)
            timings.append(time.perf_counter() - t0)
        report["ab_ms_median"] = 1000 * statistics.median(timings)
        report["ab_verdict"] = verdict
        t0 = time.perf_counter()
        ab(DrawCache())
        report["ab_cold_draws_ms"] = 1000 * (time.perf_counter() - t0)
        report["ab_view_ms_median"] = _ab_through_the_view(
            paths[0][pair[0]], paths[0][pair[1]], cache, args.repeat
        )

        t0 = time.perf_counter()
        new = cps_runs([items_from_parquet(paths[0][0].read_bytes())], EVALITA_KINDS, config, cache)[0]
        kept[0][0] = RunUncertainty.of(new, TASK_IDS)
        entries = [
            TierEntry(f"r{i}", u.mean_cps, u.mean_cps_draws, u.mean_key, u.mean_cps_tie_draws)
            for i, u in enumerate(kept[0])
        ]
        assign_tiers(entries)
        report["one_new_run_s"] = time.perf_counter() - t0

    rows = [
        ("synthetic store (write, not timed as a target)", f"{report['build_s']:.1f} s"),
        ("per-item file: rows per run / mean size", f"{report['rows_per_run']:,} / {report['file_bytes_mean'] / 1e3:.0f} KB"),
        ("draws for all tasks (once per process)", f"{report['draws_s']:.2f} s"),
        (f"read {n_total:,} per-item files", f"{report['read_total_s']:.1f} s ({report['read_per_file_median_ms']:.1f} ms/file)"),
        (f"bootstrap {n_total:,} runs → RunUncertainty", f"{report['bootstrap_total_s']:.1f} s ({report['bootstrap_per_run_ms']:.1f} ms/run)"),
        (f"tiers, {args.runs:,} runs × {args.settings} settings (target < 10 s)", f"{report['tiers_s_median']:.3f} s ({report['tiers_per_setting']} tiers)"),
        (f"warm start: {n_total:,} kept summaries from bytes", f"{report['warm_start_load_s']:.2f} s ({report['summary_bytes_mean'] / 1e3:.1f} KB each)"),
        ("A/B of two runs, files read (target < 300 ms)", f"{report['ab_ms_median']:.0f} ms  ({report['ab_verdict']})"),
        ("A/B with cold draws (first request of a process)", f"{report['ab_cold_draws_ms']:.0f} ms"),
        ("A/B through the app's view (store read, table, verdict)", f"{report['ab_view_ms_median']:.0f} ms"),
        (f"app: parse {n_total:,} uncertainty blocks (results JSON)", f"{report['app_parse_blocks_s_median']:.2f} s ({report['block_json_bytes_mean'] / 1e3:.1f} KB each)"),
        ("app: tiers of both settings from the parsed blocks", f"{report['app_tiers_s_median']:.3f} s"),
        ("one new run: read + bootstrap + re-tier its setting", f"{report['one_new_run_s']:.2f} s"),
    ]  # fmt: skip
    width = max(len(name) for name, _ in rows)
    print(f"bench_tiers: {args.runs:,} runs × {args.settings} settings, B = {args.resamples:,}, one core")
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    out = REPO / "artifacts" / "bench_tiers.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out.relative_to(REPO)}")


def _ab_through_the_view(path_a: Path, path_b: Path, cache: object, repeat: int) -> float:
    """Median ms of the app's A vs B view on two runs whose per-item files sit in a details store
    (fresh items cache each time: the files are read, as for a visitor's first comparison)."""
    import pandas as pd

    from eval_queue.storage import LocalStorage
    from eval_queue.vocabulary import RunRef
    from leaderboard.tracks.evalita.app.records import RUN_COLUMNS
    from leaderboard.tracks.evalita.app.views.board import Board
    from leaderboard.tracks.evalita.app.views.compare import ItemsCache, compare_view

    with tempfile.TemporaryDirectory(prefix="bench-ab-") as tmp:
        store = LocalStorage(Path(tmp))
        rows = []
        for name, path in (("a", path_a), ("b", path_b)):
            store.write(f"{name}/items.parquet", path.read_bytes())
            rows.append({**dict.fromkeys(RUN_COLUMNS), "model": f"org/{name}", "revision": "r", "precision": "p",
                         "num_fewshot": 0, "comparable": True, "details_path": name})  # fmt: skip
        board = Board(_Loaded(pd.DataFrame(rows, columns=list(RUN_COLUMNS))))  # type: ignore[arg-type]
        a, b = RunRef("org/a", "r", "p"), RunRef("org/b", "r", "p")
        timings = []
        for _ in range(repeat):
            items = ItemsCache(draws=cache)  # type: ignore[arg-type]
            board._memo.clear()
            t0 = time.perf_counter()
            view = compare_view(board, store, items, a, b, 0)
            timings.append(time.perf_counter() - t0)
        assert "better on" in view.verdict, view
        return 1000 * statistics.median(timings)


class _Loaded:
    """The little of ``LoadedResults`` the A vs B view reads: the run table, and which runs have
    intervals (here both)."""

    def __init__(self, runs: object) -> None:
        from leaderboard.tracks.evalita.metric_sets import DEFAULT_METRIC_SET

        self.runs = runs
        self.uncertainty = {("org/a", "r", "p", 0): True, ("org/b", "r", "p", 0): True}
        self.metric_set = DEFAULT_METRIC_SET


if __name__ == "__main__":
    main()
