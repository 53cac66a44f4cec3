"""The app's cold start from ``contents.parquet``: seconds and server memory, side by side with a baseline.

A *cold start* is what a freshly started app does before its first page: read the results
store into an ``AppContext`` (the contents table, then the listing) and build the Evalita
board's default ranking (0-shot, with its intervals and tiers).  Each start runs in a fresh
Python process, so the memory figures are the server's: its resident set (``VmRSS``) after the
store read and after the first ranking, and its peak (``ru_maxrss``).  The store read's CPU
seconds (every thread's) are printed beside its wall time: on a loaded machine they move less.

The stores are those of the browser bench (``tests.support.synthetic.results.cached_synthetic_store``
under ``--store-cache``; above 1,000 models the runs are shifted copies of the 1,000-model
store's), read through a scratch data folder that links to them (nothing is written there).
``--baseline DIR`` is another checkout (``git archive main | tar -x -C DIR``); its start and
this tree's alternate within each repeat so that both meet the same load.  ``--draws-column``
adds a third start, this tree's on a copy of the store whose table has the Evalita draws as
bytes (the ``draws`` column, as ``rebuild-contents`` writes it now; the cached stores' tables
predate it): its results files hard links to the store's, its table converted from the store's
(:func:`with_draws_column`), nothing of the store rewritten.  A cached store whose table is in an
older format than the app's has it rebuilt first (``cached_synthetic_store`` says so), so the
stores carry the draws column and ``--draws-column`` adds nothing (it says so).

Run: ``.venv/bin/python bench/bench_cold_start.py [--models 1000 10000] [--baseline DIR]
[--repeat 1] [--store-cache DIR] [--draws-column]``; writes ``artifacts/bench_cold_start.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ARTIFACTS, REPO_ROOT

#: Models above which a store's runs are copies of the 1,000-model store's (the browser bench's).
DISTINCT = 1000
#: One cold start, in the child process: argv[1] the tree to import, argv[2] the data folder.
_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])

def rss_mb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS"))

from eval_queue.queue import RequestQueue
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.tracks.evalita.app.views.labels import RankingFilters
from leaderboard.tracks.evalita.app.views.ranking import ranking_view
from leaderboard.tracks.evalita.vocabulary import Setting
from leaderboard.ui.context import AppContext

data = Path(sys.argv[2])
settings = Settings(data_dir=data)
stores = open_stores(settings)
ctx = AppContext(settings, stores, RequestQueue(stores.requests), use_contents=True)
imported = rss_mb()
start, cpu = time.perf_counter(), time.process_time()
store = ctx.store()
read, read_cpu = time.perf_counter(), time.process_time() - cpu
after_read = rss_mb()
board = ctx.snapshot("evalita")
rows = len(ranking_view(board, Setting.ZERO, RankingFilters()).table)
ranked = time.perf_counter()
print(json.dumps({
    "store_read_s": read - start, "store_read_cpu_s": read_cpu, "first_ranking_s": ranked - read, "rows": rows,
    "rss_imported_mb": imported, "rss_after_read_mb": after_read, "rss_after_ranking_mb": rss_mb(),
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
}))
"""
FIGURES = (
    "store_read_s",
    "store_read_cpu_s",
    "first_ranking_s",
    "rss_after_read_mb",
    "rss_after_ranking_mb",
    "peak_mb",
)


def data_folder(store: Path, scratch: Path) -> Path:
    """A data folder whose results and details are the cached store's (the app writes only requests/)."""
    folder = scratch / store.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "requests").mkdir(exist_ok=True)
    for part in ("results", "details"):
        link = folder / part
        if not link.exists():
            link.symlink_to(store / part, target_is_directory=True)
    return folder


def with_draws_column(store: Path, scratch: Path) -> Path:
    """A data folder like :func:`data_folder`'s whose results are hard links to the store's but
    for ``contents.parquet``: the store's, each row's draws moved from ``record_json`` to ``draws``."""
    import json
    import os
    import shutil
    from binascii import a2b_base64

    import pyarrow as pa

    from leaderboard.core.contents import read_table, to_parquet
    from leaderboard.tracks.evalita.contents import DRAWS_SET

    folder = scratch / f"{store.name}-draws-column"
    if folder.exists():
        return folder
    (folder / "requests").mkdir(parents=True)
    (folder / "details").symlink_to(store / "details", target_is_directory=True)
    shutil.copytree(store / "results", folder / "results", copy_function=os.link)
    table = read_table((store / "results" / "contents.parquet").read_bytes())
    blocks: list[str | None] = []
    draws: list[list[dict[str, object]] | None] = []
    for text in table.column("record_json").to_pylist():
        parsed = None if text is None else json.loads(text)
        block = None if parsed is None else parsed.get("uncertainty")
        kept = {} if block is None else block.pop("draws", {})
        draws.append(
            None
            if block is None
            else [
                {"figure": figure, "key": k["key"], "float32": a2b_base64(k["float32"])}
                for figure, k in kept.items()
            ]
        )
        blocks.append(
            text if block is None else json.dumps(parsed, separators=(",", ":"), ensure_ascii=False)
        )
    at = table.column_names.index("record_json")
    table = table.set_column(at, table.field(at), pa.array(blocks, pa.string()))
    table = table.append_column(pa.field("draws", pa.list_(DRAWS_SET)), pa.array(draws, pa.list_(DRAWS_SET)))
    contents = folder / "results" / "contents.parquet"
    contents.unlink()  # a hard link to the store's file: replaced, not written through
    contents.write_bytes(to_parquet(table))
    return folder


def cold_start(tree: Path, data: Path, timeout_s: float) -> dict[str, float]:
    """One cold start of ``tree``'s app on ``data``, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tree), str(data)],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=tree,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cold start of {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--convert"]:  # with_draws_column in a process of its own (see main)
        with_draws_column(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with (e.g. main)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--store-cache", type=Path, default=ARTIFACTS / "bench-stores")
    parser.add_argument(
        "--draws-column",
        action="store_true",
        help="also start this tree on a copy whose table has the draws column",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds one cold start may take")
    args = parser.parse_args()

    import pyarrow.parquet as pq

    from tests.support.synthetic.results import cached_synthetic_store

    trees = {"this": REPO_ROOT}
    if args.baseline is not None:
        trees = {"baseline": args.baseline.resolve(), **trees}
    report: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as scratch:
        for models in args.models:
            store = cached_synthetic_store(
                args.store_cache, models, distinct=DISTINCT if models > DISTINCT else None
            )
            data = data_folder(store, Path(scratch))
            starts = {name: (tree, data) for name, tree in trees.items()}
            if args.draws_column and "draws" in pq.read_schema(store / "results" / "contents.parquet").names:
                print(f"{store.name}: its table has the draws column already; no third start", flush=True)
            elif args.draws_column:
                # In a child process: the conversion's memory would count in every start's peak
                # (a child inherits its parent's ru_maxrss).
                converted = Path(scratch) / f"{store.name}-draws-column"
                subprocess.run(
                    [sys.executable, __file__, "--convert", str(store), scratch], check=True, cwd=REPO_ROOT
                )
                starts["this+draws"] = (REPO_ROOT, converted)
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in starts}
            for _ in range(args.repeat):
                for name, (tree, folder) in starts.items():  # alternating: all meet the same load
                    runs[name].append(cold_start(tree, folder, args.timeout))
            report[str(models)] = {
                name: {figure: statistics.median(run[figure] for run in done) for figure in FIGURES}
                for name, done in runs.items()
            }
            for name, figures in report[str(models)].items():
                print(
                    f"{models:>6} models  {name:<10}  store read {figures['store_read_s']:6.1f} s "
                    f"(CPU {figures['store_read_cpu_s']:5.1f} s, every thread)  "
                    f"first ranking {figures['first_ranking_s']:6.1f} s  RSS after read "
                    f"{figures['rss_after_read_mb']:6.0f} MB  after ranking {figures['rss_after_ranking_mb']:6.0f} MB  "
                    f"peak {figures['peak_mb']:6.0f} MB",
                    flush=True,
                )
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / "bench_cold_start.json"
    out.write_text(json.dumps({"repeat": args.repeat, "models": report}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
