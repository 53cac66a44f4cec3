"""The app's cold start with and without the contents table, on a local store and on a hub store.

A store of N synthetic models × both settings (``tests.ui.store.write_synthetic_results``)
with its contents table (``leaderboard.core.contents_io.rebuild``).  A *cold start* is what a
freshly started app does before its first render: read the results store into an
``AppContext`` and build the Evalita board's ranking (``ranking_view``, 0-shot).  Measured:

* ``json`` — every results file read and parsed (``use_contents=False``, as before the table);
* ``contents`` — the table read once, records built from its rows, no results file read.

Both on the local store, and on a hub store: the same files in a repo of the fake hub
(``tests/queue/fake_hub.py``, a real HTTP server on 127.0.0.1 the real ``huggingface_hub``
client talks to; a fresh download cache per start, as on a new Space).  The two variants
alternate within each repeat so that both meet the same load.  Prints a table (median of
``--repeat``) and writes ``artifacts/bench_contents.json``.

Run: ``.venv/bin/python bench/bench_contents.py [--models 100 1000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import REPO_ROOT as REPO

VARIANTS = ("json", "contents")


def cold_start(open_context: Callable[[bool], object], use_contents: bool) -> dict[str, float]:
    """One cold start: seconds to the first ranking, and results files read."""
    from leaderboard.tracks.evalita.app.views.labels import RankingFilters
    from leaderboard.tracks.evalita.app.views.ranking import ranking_view
    from leaderboard.tracks.evalita.vocabulary import Setting

    ctx, reads = open_context(use_contents)
    start = time.perf_counter()
    board = ctx.snapshot("evalita")  # type: ignore[attr-defined]
    table = ranking_view(board, Setting.ZERO, RankingFilters()).table
    seconds = time.perf_counter() - start
    assert len(table) > 0
    return {"seconds": seconds, "files_read": len(reads), "runs": len(board.loaded.runs)}


def local_opener(data_dir: Path) -> Callable[[bool], object]:
    from eval_queue.queue import RequestQueue
    from eval_queue.settings import Settings
    from eval_queue.storage import open_stores
    from leaderboard.ui.context import AppContext

    def open_context(use_contents: bool) -> object:
        stores = open_stores(Settings(data_dir=data_dir))
        counting = _Counting(stores.results)
        stores = type(stores)(stores.requests, counting, stores.details)  # type: ignore[arg-type]
        ctx = AppContext(
            Settings(data_dir=data_dir), stores, RequestQueue(stores.requests), use_contents=use_contents
        )
        return ctx, counting.reads

    return open_context


def hub_opener(hub_url: str, scratch: Path) -> Callable[[bool], object]:
    from eval_queue.queue import RequestQueue
    from eval_queue.settings import Settings
    from eval_queue.storage import open_stores
    from leaderboard.ui.context import AppContext

    counter = iter(range(1_000_000))

    def open_context(use_contents: bool) -> object:
        env = {
            "EVALITA_REQUESTS_REPO": "bench/requests",
            "EVALITA_RESULTS_REPO": "bench/results",
            "HF_ENDPOINT": hub_url,
            "EVALITA_DATA_DIR": str(scratch / f"start-{next(counter)}"),  # a fresh download cache
        }
        settings = Settings.from_env(env)
        stores = open_stores(settings)
        counting = _Counting(stores.results)
        stores = type(stores)(stores.requests, counting, stores.details)  # type: ignore[arg-type]
        ctx = AppContext(settings, stores, RequestQueue(stores.requests), use_contents=use_contents)
        return ctx, counting.reads

    return open_context


class _Counting:
    """The results store, counting the files read from it."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.reads: list[str] = []

    def read(self, path: str, *, max_bytes: int | None = None) -> bytes:
        self.reads.append(path)
        return self.inner.read(path, max_bytes=max_bytes)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def build_store(root: Path, n_models: int) -> tuple[Path, int, int]:
    """The synthetic store with its contents table; returns (data dir, files, table bytes)."""
    from eval_queue.storage import LocalStorage
    from leaderboard.core.contents import CONTENTS_PATH
    from leaderboard.core.contents_io import rebuild
    from tests.support.synthetic.results import write_synthetic_results

    data_dir = root / "data"
    files = write_synthetic_results(data_dir / "results", n_models)
    store = LocalStorage(data_dir / "results")
    data = rebuild(store).data
    store.write(CONTENTS_PATH, data)
    return data_dir, files, len(data)


def _rebuild_on_hub(open_context: Callable[[bool], object]) -> None:
    """The hub store's own table: its rows carry the hub's versions of the files (blob ids)."""
    from leaderboard.core.contents import CONTENTS_PATH
    from leaderboard.core.contents_io import rebuild

    ctx, _ = open_context(False)
    results = ctx.stores.results  # type: ignore[attr-defined]
    results.write(CONTENTS_PATH, rebuild(results).data)


def measure(open_context: Callable[[bool], object], repeat: int) -> dict[str, dict[str, float]]:
    samples: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    for i in range(repeat):
        order = VARIANTS if i % 2 == 0 else VARIANTS[::-1]
        for variant in order:
            samples[variant].append(cold_start(open_context, variant == "contents"))
    return {
        v: {
            "median_s": statistics.median(s["seconds"] for s in runs),
            "min_s": min(s["seconds"] for s in runs),
            "files_read": runs[0]["files_read"],
            "runs": runs[0]["runs"],
        }
        for v, runs in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-hub", action="store_true", help="measure the local store only")
    args = parser.parse_args()

    from huggingface_hub import constants

    from tests.queue.fake_hub import FakeHub

    constants.HF_HUB_OFFLINE = False  # the client talks to the fake hub on 127.0.0.1 only
    report: dict[str, object] = {"repeat": args.repeat, "cpus": os.cpu_count(), "stores": []}
    rows = []
    for n in args.models:
        with tempfile.TemporaryDirectory(prefix="bench-contents-") as tmp:
            root = Path(tmp)
            data_dir, files, table_bytes = build_store(root, n)
            results_bytes = sum(p.stat().st_size for p in (data_dir / "results").rglob("results_*.json"))
            stores = {"local": local_opener(data_dir)}
            hub = None
            if not args.no_hub:
                hub = FakeHub().__enter__()
                hub.add_repo("datasets", "bench/requests")
                hub.add_repo(
                    "datasets",
                    "bench/results",
                    {
                        p.relative_to(data_dir / "results").as_posix(): p.read_bytes()
                        for p in (data_dir / "results").rglob("results_*.json")
                    },
                )
                stores["hub"] = hub_opener(hub.url, root / "hub-scratch")
                _rebuild_on_hub(stores["hub"])
            try:
                for store, opener in stores.items():
                    result = measure(opener, args.repeat)
                    entry = {
                        "store": store,
                        "models": n,
                        "results_files": files,
                        "results_bytes": results_bytes,
                        "contents_bytes": table_bytes,
                        **{v: result[v] for v in VARIANTS},
                        "ratio": result["json"]["median_s"] / result["contents"]["median_s"],
                    }
                    report["stores"].append(entry)  # type: ignore[union-attr]
                    rows.append(entry)
            finally:
                if hub is not None:
                    hub.__exit__(None, None, None)

    print(
        f"{'store':<6} {'models':>6} {'files':>6} {'JSON MB':>8} {'table MB':>8} "
        f"{'json s':>8} {'contents s':>10} {'json/contents':>13} {'read: json':>10} {'contents':>8}"
    )
    for r in rows:
        print(
            f"{r['store']:<6} {r['models']:>6} {r['results_files']:>6} {r['results_bytes'] / 1e6:>8.2f} "
            f"{r['contents_bytes'] / 1e6:>8.2f} {r['json']['median_s']:>8.2f} {r['contents']['median_s']:>10.2f} "
            f"{r['ratio']:>13.1f} {r['json']['files_read']:>10} {r['contents']['files_read']:>8}"
        )
    out = REPO / "artifacts" / "bench_contents.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
