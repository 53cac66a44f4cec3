"""Blocks or ``gr.Server`` for the ranking: a server-mode prototype measured beside the app, same store.

Issue 32 leaves the choice open: keep the ranking a Gradio Blocks page whose server work is
made incremental (the app today: the table is paged on the server, 25 rows a page, each
interaction an event through Gradio's queue), or serve it from ``gr.Server`` (Gradio's *server
mode*: a FastAPI app with Gradio's API engine) as one compact columnar payload per setting that
a client-side virtualised table renders, filters and sorts without asking the server again.

This script measures both on the same synthetic store, in one run:

* the **app** (``python app.py``, the Blocks page) in headless Chromium, through
  ``bench_ui_browser.session`` (first render, switch 0→5-shot, search; its other steps are
  measured too but not compared);
* the **prototype** (``--serve``, below): ``gr.Server`` with ``GET /`` (a page of ~60 lines of
  JavaScript: a fixed-row-height virtualised table, a setting switch and a search box),
  ``GET /ranking.json?setting=0|5`` (the ranking of every run of the setting — the app's own
  :func:`~leaderboard.tracks.evalita.app.views.ranking.ranking_view`, all its columns — as
  ``{"columns": [...], "data": {column: [values]}}``, serialised once per setting and sent
  gzip-compressed), and the same as a Gradio API endpoint (``/gradio_api/call/ranking``);
* for both: the seconds of each step on the page's clock, the bytes received, the server's RSS
  after the sessions, and ``--clients`` concurrent loopback clients fetching the ranking for
  ``--seconds`` (the app: ``/gradio_api/call/ranking`` then its result stream, page 1; the
  prototype: ``/ranking.json``), p50/p95 and calls per second.

The prototype is not the product: it has no tabs, links, filters beyond search, sign-in or
submission.  It answers one question — what a client-side table fed by one payload costs at
N models — so the choice is made on figures.  The payload grows with N (every row, every
column), the app's page does not; the prototype's interactions never reach the server.

Run: ``.venv/bin/python bench/bench_server_mode.py [--models 1000 10000] [--repeat 3]
[--clients 32] [--seconds 10]``; writes ``artifacts/bench_server_mode.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import ARTIFACTS
from _common import REPO_ROOT as REPO
from bench_ui_browser import (
    ARGS,
    CHROMIUM,
    FIRST_RENDER,
    _free_port,
    rss_mb,
    serve,
    session,
    store_for,
    wait_for_start,
)

SWITCH, SEARCH = "switch 0→5-shot", "search"
COMPARED = (FIRST_RENDER, SWITCH, SEARCH)
TIMEOUT_MS = 120_000

#: The prototype's page: a virtualised table (only the rows in view are in the DOM, 28 px each),
#: the ranking fetched once per setting, the search a client-side filter on the model column.
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Evalita-LLM (server mode)</title>
<style>body{font:14px sans-serif;margin:16px}#view{height:700px;overflow:auto;border:1px solid #ccc;
position:relative}#spacer{position:relative}.virtual-row{position:absolute;left:0;height:28px;
white-space:nowrap;display:flex}.virtual-row span{display:inline-block;width:140px;overflow:hidden;
text-overflow:ellipsis;padding:4px}</style></head><body>
<label><input type="radio" name="setting" value="0" checked id="s0">0-shot</label>
<label><input type="radio" name="setting" value="5" id="s5">5-shot</label>
<input id="search" placeholder="search a model"><div id="count"></div>
<div id="view"><div id="spacer"></div></div>
<script>
const MODEL_COLUMN = __MODEL__, ROW = 28, view = document.getElementById('view'), spacer = document.getElementById('spacer');
const tables = {}; let table = null, shown = [], setting = '0';
function cell(v) { return v === null ? '—' : (typeof v === 'number' ? v.toFixed(2) : String(v)); }
function paint() {
  const first = Math.floor(view.scrollTop / ROW), last = Math.min(shown.length, first + 30);
  const cols = table.columns, parts = [];
  for (let i = first; i < last; i++) {
    const r = shown[i]; let html = '';
    for (let c = 0; c < Math.min(cols.length, 12); c++) html += '<span></span>';
    parts.push(`<div class="virtual-row" style="top:${i * ROW}px" data-row="${r}">${html}</div>`);
  }
  spacer.innerHTML = parts.join('');
  spacer.querySelectorAll('.virtual-row').forEach(div => {
    const r = +div.dataset.row; div.querySelectorAll('span').forEach((span, c) => {
      span.textContent = cell(table.data[cols[c]][r]); });
  });
}
function filter() {
  const q = document.getElementById('search').value.trim().toLowerCase(), model = table.data[MODEL_COLUMN];
  shown = [];
  for (let r = 0; r < model.length; r++) if (!q || String(model[r]).toLowerCase().includes(q)) shown.push(r);
  spacer.style.height = (shown.length * ROW) + 'px';
  document.getElementById('count').textContent = shown.length + ' runs';
  paint();
  const params = new URLSearchParams();
  if (setting !== '0') params.set('setting', setting);
  if (q) params.set('search', q);
  history.replaceState(null, '', params.toString() ? '?' + params : location.pathname);
}
async function load(s) {
  setting = s;
  if (!tables[s]) tables[s] = await (await fetch('ranking.json?setting=' + s)).json();
  table = tables[s]; filter(); document.body.dataset.evalitaReady = '1';
}
view.addEventListener('scroll', () => requestAnimationFrame(paint));
document.getElementById('search').addEventListener('input', filter);
document.querySelectorAll('input[name=setting]').forEach(r => r.addEventListener('change', () => load(r.value)));
load('0');
</script></body></html>"""


def payload(view_table) -> bytes:
    """The ranking as one compact columnar JSON document (NaN → null)."""
    table = view_table.astype(object).where(view_table.notna(), None)
    return json.dumps(
        {"columns": list(table.columns), "data": {c: table[c].tolist() for c in table.columns}},
        separators=(",", ":"),
        allow_nan=False,
    ).encode()


def serve_prototype(data_dir: Path, port: int) -> None:
    """The ``gr.Server`` prototype on ``data_dir`` (runs until killed)."""
    import gradio as gr
    from fastapi import Response
    from fastapi.responses import HTMLResponse

    from eval_queue.settings import Settings
    from leaderboard.tracks.evalita.app.views.labels import RankingFilters
    from leaderboard.tracks.evalita.app.views.ranking import ranking_view
    from leaderboard.tracks.evalita.vocabulary import Setting
    from leaderboard.ui.context import AppContext
    from leaderboard.views.common import MODEL

    ctx = AppContext.from_settings(Settings(data_dir=data_dir), refresh_s=3600)
    ctx.store()
    board = ctx.snapshot("evalita")
    compressed: dict[str, bytes] = {}
    lock = threading.Lock()

    def ranking_bytes(setting: str) -> bytes:
        with lock:  # one computation per setting, whoever asks first
            if setting not in compressed:
                view = ranking_view(board, Setting(setting), RankingFilters())
                compressed[setting] = gzip.compress(payload(view.shown), compresslevel=5)
            return compressed[setting]

    server = gr.Server()

    html = PAGE.replace("__MODEL__", json.dumps(MODEL))

    @server.get("/")
    def page() -> HTMLResponse:
        return HTMLResponse(html)

    @server.get("/ranking.json")
    def ranking_json(setting: str = "0") -> Response:
        if setting not in ("0", "5"):
            return Response(status_code=400, content=b"setting must be 0 or 5")
        return Response(
            ranking_bytes(setting), media_type="application/json", headers={"Content-Encoding": "gzip"}
        )

    @server.api(name="ranking")
    def ranking(setting: str = "0") -> dict:
        return json.loads(gzip.decompress(ranking_bytes(setting)))

    for setting in ("0", "5"):
        ranking_bytes(setting)
    print(f"Running on http://127.0.0.1:{port}", flush=True)
    server.launch(server_name="127.0.0.1", server_port=port, quiet=True)


def start_prototype(data_dir: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(data_dir), str(port)],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    wait_for_start(proc, log, timeout_s=1800, what="the prototype")
    deadline = time.monotonic() + 60
    import httpx

    while True:  # "Running on" is printed before uvicorn binds
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)
    return proc, f"http://127.0.0.1:{port}/"


def prototype_session(browser, url: str) -> dict[str, tuple[float, int]]:
    """First render, switch to 5-shot, search: seconds on the page's clock and bytes received."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    received: list[int] = []
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on("Network.dataReceived", lambda e: received.append(int(e["encodedDataLength"] or e["dataLength"])))

    def painted(condition: str) -> float:
        page.wait_for_function(condition, timeout=TIMEOUT_MS, polling="raf")
        return page.evaluate(
            "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))"
        )

    out: dict[str, tuple[float, int]] = {}
    rows = "document.querySelectorAll('#spacer .virtual-row').length > 0"
    received.clear()
    page.goto(url)
    out[FIRST_RENDER] = (
        painted(f"document.body.dataset.evalitaReady === '1' && {rows}") / 1000,
        sum(received),
    )
    for step, act, done in (
        (SWITCH, lambda: page.click("#s5"), f"location.search.includes('setting=5') && {rows}"),
        (
            SEARCH,
            lambda: page.fill("#search", "model-0003"),
            f"location.search.includes('search=model-0003') && {rows}",
        ),
    ):
        received.clear()
        start = page.evaluate("performance.now()")
        act()
        out[step] = ((painted(done) - start) / 1000, sum(received))
    context.close()
    return out


def load(url: str, clients: int, seconds: float, gradio_api: bool) -> dict[str, float]:
    """``clients`` threads asking for the default ranking for ``seconds``: latency and throughput."""
    import httpx

    latencies: list[float] = []
    errors: list[str] = []
    barrier = threading.Barrier(clients + 1)
    stop_at: list[float] = []

    arguments: list = []
    if gradio_api:  # the app's ranking endpoint with its own defaults, setting 0, page 1
        info = httpx.get(f"{url}gradio_api/info", timeout=60).json()["named_endpoints"]["/ranking"]
        for parameter in info["parameters"]:
            name = parameter["parameter_name"]
            arguments.append("0" if name == "setting" else parameter.get("parameter_default"))

    def one(client: httpx.Client) -> None:
        if gradio_api:  # the app's ranking endpoint: an event, then its result stream
            posted = client.post(f"{url}gradio_api/call/ranking", json={"data": arguments})
            posted.raise_for_status()
            done = client.get(f"{url}gradio_api/call/ranking/{posted.json()['event_id']}")
            if "event: complete" not in done.text:
                raise RuntimeError(done.text[-300:])
        else:
            client.get(f"{url}ranking.json", params={"setting": "0"}).raise_for_status()

    def loop() -> None:
        with httpx.Client(timeout=60) as client:
            barrier.wait()
            while time.monotonic() < stop_at[0]:
                began = time.monotonic()
                try:
                    one(client)
                    latencies.append(time.monotonic() - began)
                except Exception as exc:  # counted, not raised: a load test goes on
                    errors.append(repr(exc))

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    stop_at.append(time.monotonic() + seconds)
    barrier.wait()
    for thread in threads:
        thread.join(timeout=seconds + 120)
    ordered = sorted(latencies)
    return {
        "calls_per_s": len(ordered) / seconds,
        "p50_s": statistics.median(ordered) if ordered else float("nan"),
        "p95_s": ordered[int(0.95 * (len(ordered) - 1))] if ordered else float("nan"),
        "errors": len(errors),
    }


def bench(models: int, repeat: int, clients: int, seconds: float, browser, root: Path, cache: Path) -> dict:
    data = store_for(models, cache)
    started = time.monotonic()
    app, app_url = serve(REPO, data, root / f"app-{models}.log")
    proto, proto_url = start_prototype(data, root / f"proto-{models}.log")
    print(f"both servers up in {time.monotonic() - started:.0f} s", flush=True)
    out: dict = {"app": {}, "server mode": {}}
    try:
        session(browser, app_url)  # warm: the app's store read and views (its first visitor)
        prototype_session(browser, proto_url)
        app_runs, proto_runs = [], []
        for _ in range(repeat):  # alternating: both meet the same load
            app_runs.append(session(browser, app_url))
            proto_runs.append(prototype_session(browser, proto_url))
        for name, runs in (("app", app_runs), ("server mode", proto_runs)):
            for step in COMPARED:
                out[name][step] = {
                    "median_s": statistics.median(run[step][0] for run in runs),
                    "kb": statistics.median(
                        (run[step][1]["data"] + run[step][1]["assets"])
                        if isinstance(run[step][1], dict)
                        else run[step][1]
                        for run in runs
                    )
                    / 1024,
                }
        out["app"]["rss"] = rss_mb(app.pid)
        out["server mode"]["rss"] = rss_mb(proto.pid)
        out["app"]["load"] = load(app_url, clients, seconds, gradio_api=True)
        out["server mode"]["load"] = load(proto_url, clients, seconds, gradio_api=False)
    finally:
        for proc in (app, proto):
            proc.terminate()
            proc.wait(timeout=30)
    return out


def report(results: dict[int, dict], clients: int) -> None:
    print("\nBlocks app vs gr.Server prototype (median seconds on the page's clock / KB received)")
    print(
        f"{'N':>7} {'server':<12}"
        + "".join(f"{step:>22}" for step in COMPARED)
        + f"{'RSS MB':>9}"
        + f"{f'p95 @{clients}':>10}{'calls/s':>9}{'errors':>7}"
    )
    for models, by_server in results.items():
        for name, row in by_server.items():
            cells = "".join(f"{row[s]['median_s']:>13.2f} s {row[s]['kb']:>5.0f} KB" for s in COMPARED)
            load_row = row["load"]
            print(
                f"{models:>7,} {name:<12}{cells}{row['rss']['rss_mb']:>9.0f}"
                f"{load_row['p95_s']:>9.2f}s{load_row['calls_per_s']:>9.1f}{load_row['errors']:>7}"
            )


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve_prototype(Path(sys.argv[2]), int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, nargs="+", default=[1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--store-cache", type=Path, default=ARTIFACTS / "bench-stores")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    results: dict[int, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-server-mode-") as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for models in args.models:
                results[models] = bench(
                    models,
                    args.repeat,
                    args.clients,
                    args.seconds,
                    browser,
                    Path(tmp),
                    args.store_cache.resolve(),
                )
                print(f"N = {models:,} done", flush=True)
        finally:
            browser.close()
    report(results, args.clients)
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / "bench_server_mode.json"
    out.write_text(json.dumps({str(k): v for k, v in results.items()}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
