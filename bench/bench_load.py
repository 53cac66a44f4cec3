"""Many visitors at once: concurrent clients calling ``/ranking``, ``/task`` and ``/model``
through Gradio's HTTP API (loopback only), level by level, bounded in time.

The app is served on the synthetic store of ``--models`` models (kept under ``--store-cache``,
as ``bench_ui_browser.py`` keeps it) and warmed; then for each level (``--levels``, default
1, 8, 32 clients) every client calls, one after the other for ``--seconds`` seconds, a view
drawn from what visitors ask for (``--mix``).  Per level: calls per second, median / p95 / max
latency, errors, the server's resident memory (``/proc``) at the end of the level and its peak,
and the CPU the bench's own clients used (so that a heavy client is not mistaken for a slow
server).

**The views** (126): the ranking (either setting, pages 1–3), a task page (ten tasks × two
settings) and a model page (the fifty best runs × two settings), each asked once before the
first level (as earlier visitors would have).  **The mix** (``--mix zipf``, the default): most
visitors ask for the same few views, so the views are drawn with Zipf weights (1/rank) in the
order a visitor meets them — the default ranking (0-shot, then 5-shot, page 1), then a task
and a model page by turns from the top of the board down (task i, model i, both settings),
then the ranking's later pages: the default ranking is about one call in five, the ten most
asked views about half of the calls.  ``--mix uniform`` draws every view alike (the earlier
bench's mix: four calls in five a model page).

**The client** (``--client``): ``http`` (the default) is one asyncio event loop of ``httpx``
clients speaking Gradio's HTTP API directly — ``POST /gradio_api/run/<name>`` with every
argument, one round trip, answered without the queue: the endpoints are ``queue=False`` — so
that 32 clients cost the 2-core machine little CPU and the bench measures the server.
``call`` is the documented two-step API through the queue (``POST /gradio_api/call/<name>``,
then its server-sent events); ``gradio_client`` is one ``gradio_client.Client`` per visitor in
its own thread (the queue too, and the client's own threads and file downloads: heavy).

With ``--baseline DIR`` (another checkout) both apps are served on the same store at once and
measured level by level, alternating which goes first, so both meet the same machine load;
the ratios (this checkout / baseline) are printed.  Bounded: about ``2 × levels × seconds``
plus the start and the warm-up (about 3 min with the defaults on a loaded 2-core machine).

Run: ``.venv/bin/python bench/bench_load.py [--models 1000] [--levels 1 8 32] [--seconds 10]
[--client http|call|gradio_client] [--mix zipf|uniform] [--baseline DIR]``; writes
``artifacts/bench_load.json``.  Targets (issue 32): p95 ≤ 1 s at 32 clients, memory not growing
with the number of clients.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path

from _common import REPO_ROOT as REPO
from bench_ui_browser import BASELINE, CURRENT, rss_mb, serve, store_for

TARGET_P95_S = 1.0
CLIENTS = ("http", "call", "gradio_client")
MIXES = ("zipf", "uniform")
#: The ranking's filters as a visitor leaves them: types, sizes, precisions, search, columns, all runs.
FILTERS = ([], [], [], "", ["cps"], False)
API = "gradio_api/"
#: One call's limit: beyond it the call counts as an error (the level stays bounded in time).
CALL_TIMEOUT_S = 60.0

View = tuple[str, tuple]


# -- the views and the mix -----------------------------------------------------------------------


def view_mix(url: str, endpoints: dict[str, list[dict]], mix: str) -> tuple[list[View], list[float]]:
    """The 126 views the clients draw from — (API name, its arguments) in the order visitors meet
    them — and the weight of each."""
    from leaderboard.tracks.evalita.definition import SUITE

    keys = []
    for page in (1, 2):
        table = call_run(url, endpoints, "/ranking", ("0", *FILTERS, "rank", page))[1]
        table = table.get("value", table)  # an update carries the table under "value"
        keys += [row[-1] for row in table["data"]][:25]
    tasks = [task.id for task in SUITE]
    views: list[View] = [("/ranking", (setting, *FILTERS, "rank", 1)) for setting in ("0", "5")]
    for i in range(max(len(tasks), len(keys))):
        for setting in ("0", "5"):
            if i < len(tasks):
                views.append(("/task", (tasks[i], setting, False)))
            if i < len(keys):
                views.append(("/model", (keys[i], setting)))
    views += [("/ranking", (setting, *FILTERS, "rank", page)) for page in (2, 3) for setting in ("0", "5")]
    weights = [1.0 / (rank + 1) if mix == "zipf" else 1.0 for rank in range(len(views))]
    return views, weights


def mix_summary(views: list[View], weights: list[float]) -> str:
    total = sum(weights)
    share = {
        api: sum(w for (a, _), w in zip(views, weights, strict=True) if a == api) / total
        for api in ("/ranking", "/task", "/model")
    }
    top = sum(sorted(weights, reverse=True)[:10]) / total
    return (
        f"{len(views)} views; calls: ranking {share['/ranking']:.0%}, task {share['/task']:.0%}, "
        f"model {share['/model']:.0%}; default ranking {weights[0] / total:.0%}, ten most asked {top:.0%}"
    )


# -- the clients ---------------------------------------------------------------------------------


def endpoints_of(url: str) -> dict[str, list[dict]]:
    """Each named endpoint's parameters (with their defaults), from ``/gradio_api/info``."""
    import httpx

    info = httpx.get(url + API + "info", timeout=120).raise_for_status().json()
    return {name: spec["parameters"] for name, spec in info["named_endpoints"].items()}


def full_args(endpoints: dict[str, list[dict]], api: str, args: tuple) -> list:
    """Every argument of ``api``: the ones given, then each parameter's default (as gradio_client fills them)."""
    from gradio_client.utils import construct_args

    return construct_args(endpoints[api], args, {})


def call_run(url: str, endpoints: dict[str, list[dict]], api: str, args: tuple) -> list:
    """One synchronous call through ``/gradio_api/run/<name>`` (the set-up's calls)."""
    import httpx

    body = {"data": full_args(endpoints, api, args)}
    response = httpx.post(f"{url}{API}run{api}", json=body, timeout=600).raise_for_status().json()
    return response["data"]


async def _one_http(client, url: str, api: str, data: list, protocol: str) -> None:
    """One call by ``protocol`` (``run``: one round trip; ``call``: join the queue, then read the
    event stream to its end); raises on an error."""
    if protocol == "http":
        response = await client.post(f"{url}{API}run{api}", json={"data": data})
        response.raise_for_status()
        if "data" not in response.json():
            raise RuntimeError(response.text[:200])
        return
    response = await client.post(f"{url}{API}call{api}", json={"data": data})
    event_id = response.raise_for_status().json()["event_id"]
    event = ""
    async with client.stream("GET", f"{url}{API}call{api}/{event_id}") as stream:
        stream.raise_for_status()
        async for line in stream.aiter_lines():
            if line.startswith("event:"):
                event = line.partition(":")[2].strip()
                if event == "error":
                    raise RuntimeError(f"error event: {line}")
            elif line.startswith("data:") and event == "complete":
                return
    raise RuntimeError(f"the stream ended without a result (last event {event!r})")


def run_http_level(
    url: str, calls: list[tuple[str, list]], weights: list[float], clients: int, seconds: float, protocol: str
) -> tuple[list[float], list[str]]:
    """``clients`` visitors on one event loop, each with its own connection, for ``seconds``."""
    import httpx

    latencies: list[float] = []
    errors: list[str] = []

    async def visitor(seed: int, until: float) -> None:
        rng = random.Random(seed)
        async with httpx.AsyncClient(timeout=CALL_TIMEOUT_S) as client:
            while time.monotonic() < until:
                api, data = rng.choices(calls, weights)[0]
                started = time.monotonic()
                try:
                    await _one_http(client, url, api, data, protocol)
                    latencies.append(time.monotonic() - started)
                except Exception as exc:  # counted and reported: a failed call is a result of the bench
                    errors.append(f"{api}: {type(exc).__name__}: {exc}"[:200])

    async def level() -> None:
        until = time.monotonic() + seconds
        await asyncio.gather(*(visitor(seed, until) for seed in range(clients)))

    asyncio.run(level())
    return latencies, errors


def run_gradio_client_level(
    url: str, views: list[View], weights: list[float], clients: int, seconds: float
) -> tuple[list[float], list[str]]:
    """One ``gradio_client.Client`` per visitor, each in its own thread, connected before the clock."""
    from gradio_client import Client

    latencies: list[float] = []
    errors: list[str] = []
    connected = [Client(url, verbose=False) for _ in range(clients)]
    start = threading.Barrier(clients + 1)

    def visitor(client, seed: int) -> None:
        rng = random.Random(seed)
        start.wait()
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            api, args = rng.choices(views, weights)[0]
            started = time.monotonic()
            try:
                client.predict(*args, api_name=api)
                latencies.append(time.monotonic() - started)
            except Exception as exc:  # counted and reported: a failed call is a result of the bench
                errors.append(f"{api}: {type(exc).__name__}: {exc}"[:200])

    threads = [threading.Thread(target=visitor, args=(c, seed)) for seed, c in enumerate(connected)]
    for thread in threads:
        thread.start()
    start.wait()
    for thread in threads:
        thread.join()
    return latencies, errors


# -- a level -------------------------------------------------------------------------------------


def level(target: Target, clients: int, seconds: float, protocol: str) -> dict[str, object]:
    cpu, started = time.process_time(), time.monotonic()
    if protocol == "gradio_client":
        latencies, errors = run_gradio_client_level(
            target.url, target.views, target.weights, clients, seconds
        )
    else:
        latencies, errors = run_http_level(
            target.url, target.calls, target.weights, clients, seconds, protocol
        )
    elapsed = time.monotonic() - started
    client_cpu = time.process_time() - cpu
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
        "client_cpu_share": client_cpu / elapsed,  # cores the bench's clients used
        **(rss_mb(target.pid) if target.pid else {}),
    }


class Target:
    """A served app: its address, its process, and the views (with full arguments) to call."""

    def __init__(self, url: str, pid: int | None, mix: str) -> None:
        self.url, self.pid = url, pid
        self.endpoints = endpoints_of(url)
        self.views, self.weights = view_mix(url, self.endpoints, mix)
        self.calls = [(api, full_args(self.endpoints, api, args)) for api, args in self.views]

    def warm(self) -> None:
        """Every view once, as earlier visitors would have asked for them."""
        for api, args in self.views:
            call_run(self.url, self.endpoints, api, args)


# -- the run -------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--seconds", type=float, default=10.0, help="per level and app (bounded)")
    parser.add_argument("--client", choices=CLIENTS, default="http")
    parser.add_argument("--mix", choices=MIXES, default="zipf")
    parser.add_argument("--baseline", type=Path, help="another checkout, served on the same store at once")
    parser.add_argument("--url", help="measure an app already served there (no memory figures)")
    parser.add_argument("--store-cache", type=Path, default=REPO / "artifacts" / "bench-stores")
    args = parser.parse_args()
    load_before = os.getloadavg()
    results: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        procs = {}
        if args.url:
            urls = {CURRENT: args.url.rstrip("/") + "/"}
        else:
            data = store_for(args.models, args.store_cache.resolve())
            apps = {CURRENT: REPO, **({BASELINE: args.baseline.resolve()} if args.baseline else {})}
            urls = {}
            for name, app_dir in apps.items():
                procs[name], urls[name] = serve(app_dir, data, Path(tmp) / f"{name}.log")
        try:
            targets = {}
            for name, url in urls.items():
                started = time.monotonic()
                targets[name] = Target(url, procs[name].pid if name in procs else None, args.mix)
                targets[name].warm()
                print(f"{name}: warm in {time.monotonic() - started:.0f} s", flush=True)
            print("mix:", mix_summary(targets[CURRENT].views, targets[CURRENT].weights), flush=True)
            names = list(targets)
            results = {name: [] for name in names}
            for i, clients in enumerate(args.levels):
                for name in names if i % 2 == 0 else names[::-1]:  # alternate who goes first
                    row = level(targets[name], clients, args.seconds, args.client)
                    results[name].append(row)
                    print(
                        f"{name}: {clients} clients: {row['calls_per_s']:.1f} calls/s, p95 {row['p95_s']:.3f} s",
                        flush=True,
                    )
        finally:
            for proc in procs.values():
                proc.terminate()
                proc.wait(timeout=30)
    load_after = os.getloadavg()
    report(results, args, load_before, load_after)


def report(results: dict[str, list[dict]], args: argparse.Namespace, load_before, load_after) -> None:
    print(
        f"\nLoad bench: {args.models:,} models × 2 settings, {args.seconds:.0f} s per level, client {args.client}, "
        f"mix {args.mix}, loopback; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after"
    )
    print(
        f"{'app':<16}{'clients':>8}{'calls/s':>9}{'median s':>10}{'p95 s':>8}{'max s':>8}{'errors':>8}"
        f"{'RSS MB':>8}{'peak MB':>9}{'client CPU':>11}"
    )
    for name, rows in results.items():
        for row in rows:
            print(
                f"{name:<16}{row['clients']:>8}{row['calls_per_s']:>9.1f}{row['median_s']:>10.3f}"
                f"{row['p95_s']:>8.3f}{row['max_s']:>8.3f}{row['errors']:>8}{row.get('rss_mb', float('nan')):>8.0f}"
                f"{row.get('peak_rss_mb', float('nan')):>9.0f}{row['client_cpu_share']:>11.2f}"
            )
    mine = results[CURRENT]
    top = mine[-1]
    print(
        f"\n{CURRENT}: p95 at {top['clients']} clients {top['p95_s']:.2f} s ({top['p95_s'] / TARGET_P95_S:.2f}× "
        f"the target); RSS {mine[0].get('rss_mb', float('nan')):.0f} → {top.get('rss_mb', float('nan')):.0f} MB "
        f"from {mine[0]['clients']} to {top['clients']} clients"
    )
    if BASELINE in results:
        for row, old in zip(mine, results[BASELINE], strict=True):
            print(
                f"{row['clients']:>3} clients: {CURRENT} / {BASELINE}: p95 {row['p95_s'] / old['p95_s']:.2f}, "
                f"median {row['median_s'] / old['median_s']:.2f}, calls/s {row['calls_per_s'] / old['calls_per_s']:.2f}, "
                f"RSS {row.get('rss_mb', float('nan')) / old.get('rss_mb', float('nan')):.2f}"
            )
    out = REPO / "artifacts" / "bench_load.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "models": args.models,
                "seconds": args.seconds,
                "client": args.client,
                "mix": args.mix,
                "load_average": {"before": load_before, "after": load_after},
                "results": results,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"written {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
