"""Many visitors at once: concurrent clients calling ``/ranking``, ``/task`` and ``/model``
through Gradio's HTTP API (``gradio_client``, loopback only), level by level, bounded in time.

The app is served on the synthetic store of ``--models`` models (kept under ``--store-cache``,
as ``bench_ui_browser.py`` keeps it) and warmed; then for each level (``--levels``, default
1, 8, 32 clients) every client calls, one after the other for ``--seconds`` seconds, a view
drawn at random from a fixed mix of what visitors ask for: the ranking (either setting, pages
1–3), a task page (ten tasks × two settings) and a model page (the fifty best runs × two
settings) — 126 views in all, each asked once before the first level (as earlier visitors would
have); the clients connect before the clock starts.  Per level: calls per second, median / p95 / max latency, errors,
and the server's resident memory (``/proc``) at the end of the level.  With ``--baseline DIR``
the other app is measured the same way on the same store, after this one.

Run: ``.venv/bin/python bench/bench_load.py [--models 1000] [--levels 1 8 32] [--seconds 15]
[--baseline DIR]``; writes ``artifacts/bench_load.json``.  Targets (issue 32): p95 ≤ 1 s at 32
clients, memory not growing with the number of clients.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path

from _common import REPO_ROOT as REPO
from bench_ui_browser import BASELINE, CURRENT, rss_mb, serve, store_for

TARGET_P95_S = 1.0
FILTERS = ([], [], [], "", ["cps"], False)  # types, sizes, precisions, search, columns, all runs


def view_mix(url: str) -> list[tuple[str, tuple]]:
    """The 126 views the clients draw from: (API name, its arguments)."""
    from gradio_client import Client

    from leaderboard.tracks.evalita.definition import SUITE

    client = Client(url, verbose=False)
    keys = []
    for page in (1, 2):
        table = client.predict("0", *FILTERS, "rank", page, api_name="/ranking")[1]
        table = table.get("value", table)  # an update carries the table under "value"
        keys += [row[-1] for row in table["data"]][:25]
    views: list[tuple[str, tuple]] = []
    for setting in ("0", "5"):
        views += [("/ranking", (setting, *FILTERS, "rank", page)) for page in (1, 2, 3)]
        views += [("/task", (task.id, setting, False)) for task in SUITE]
        views += [("/model", (key, setting)) for key in keys]
    return views


def client_loop(
    client, views: list, start: threading.Barrier, seconds: float, seed: int, out: list, errors: list
) -> None:
    rng = random.Random(seed)
    start.wait()
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        api, args = rng.choice(views)
        started = time.monotonic()
        try:
            client.predict(*args, api_name=api)
            out.append(time.monotonic() - started)
        except Exception as exc:  # counted and reported: a failed call is a result of the bench
            errors.append(f"{api}: {type(exc).__name__}: {exc}"[:200])


def level(url: str, views: list, clients: int, seconds: float, pid: int) -> dict[str, object]:
    from gradio_client import Client

    latencies: list[float] = []
    errors: list[str] = []
    # Each client connects (reads the app's API description) before the clock starts.
    connected = [Client(url, verbose=False) for _ in range(clients)]
    start = threading.Barrier(clients + 1)
    threads = [
        threading.Thread(target=client_loop, args=(client, views, start, seconds, seed, latencies, errors))
        for seed, client in enumerate(connected)
    ]
    for thread in threads:
        thread.start()
    start.wait()
    started = time.monotonic()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    ordered = sorted(latencies)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)] if ordered else float("nan")
    return {
        "clients": clients,
        "calls": len(latencies),
        "calls_per_s": len(latencies) / elapsed,
        "median_s": statistics.median(ordered) if ordered else float("nan"),
        "p95_s": p95,
        "max_s": ordered[-1] if ordered else float("nan"),
        "errors": len(errors),
        "first_errors": errors[:3],
        **rss_mb(pid),
    }


def bench_app(app_dir: Path, data: Path, levels: list[int], seconds: float, log: Path) -> list[dict]:
    proc, url = serve(app_dir, data, log)
    try:
        views = view_mix(url)  # its first ranking call waits for the warm store
        # Every view once before the levels, as earlier visitors would have asked for them.
        from gradio_client import Client

        client = Client(url, verbose=False)
        for api, args in views:
            client.predict(*args, api_name=api)
        return [level(url, views, clients, seconds, proc.pid) for clients in levels]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--seconds", type=float, default=15.0, help="per level (bounded)")
    parser.add_argument("--baseline", type=Path, help="another copy of the app, measured after this one")
    parser.add_argument("--store-cache", type=Path, default=REPO / "artifacts" / "bench-stores")
    args = parser.parse_args()
    data = store_for(args.models, args.store_cache.resolve())
    apps = {CURRENT: REPO, **({BASELINE: args.baseline.resolve()} if args.baseline else {})}
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        for name, app_dir in apps.items():
            results[name] = bench_app(app_dir, data, args.levels, args.seconds, Path(tmp) / f"{name}.log")
            print(f"{name} done", flush=True)
    print(f"\nLoad bench: {args.models:,} models × 2 settings, {args.seconds:.0f} s per level, loopback")
    print(
        f"{'app':<16}{'clients':>8}{'calls/s':>9}{'median s':>10}{'p95 s':>8}{'max s':>8}{'errors':>8}{'RSS MB':>8}"
    )
    for name, rows in results.items():
        for row in rows:
            print(
                f"{name:<16}{row['clients']:>8}{row['calls_per_s']:>9.1f}{row['median_s']:>10.3f}"
                f"{row['p95_s']:>8.3f}{row['max_s']:>8.3f}{row['errors']:>8}{row['rss_mb']:>8.0f}"
            )
    mine = results[CURRENT]
    top = mine[-1]
    print(
        f"\n{CURRENT}: p95 at {top['clients']} clients {top['p95_s']:.2f} s ({top['p95_s'] / TARGET_P95_S:.2f}× "
        f"the target); RSS {mine[0]['rss_mb']:.0f} → {top['rss_mb']:.0f} MB from {mine[0]['clients']} to "
        f"{top['clients']} clients"
    )
    if BASELINE in results:
        for row, old in zip(mine, results[BASELINE], strict=True):
            print(
                f"{row['clients']:>3} clients: {CURRENT} / {BASELINE}: p95 {row['p95_s'] / old['p95_s']:.2f}, "
                f"calls/s {row['calls_per_s'] / old['calls_per_s']:.2f}, RSS {row['rss_mb'] / old['rss_mb']:.2f}"
            )
    out = REPO / "artifacts" / "bench_load.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps({"models": args.models, "seconds": args.seconds, "results": results}, indent=2) + "\n"
    )
    print(f"written {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
