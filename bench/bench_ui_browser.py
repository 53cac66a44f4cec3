"""The app in a real browser: first render and each interaction at N models, timed and weighed.

For each N (default 10, 100, 1,000 synthetic models × both settings, the store of
``tests.ui.store.write_synthetic_results``, shared with ``bench/bench_ui.py``) this starts
``python app.py`` on that store, loads the page once to warm the server, then, ``--repeat``
times in a fresh browser context (Debian chromium, headless, cold cache):

* **first render** — from navigation to the ranking's rows on screen (the app's ready mark);
* **first visit after start** — the same for the first visitor of a server that has just said it
  runs (measured once per app and N: each app is started alone, visited at once, then warmed);
* **custom average** (one task picked, a task no earlier visit picked: the view computed, not
  a kept render), **complete only**, **chat only** (model kind), **org best-of-N** — the
  issue-32 views, each switched on from the plain ranking;
* **switch 0→5-shot**, **filter** (model type), **search** (the last keystroke of a model
  name), **sort** (by model name) — from the click or key to the new rows and address;
* **open a task** (the Tasks tab), **change task** (TE → SA), **open a model** (a click on
  a ranking row) — from the click to that page's tables on screen;
* **task page by URL** (a link to the LS task opened in a new tab) — from navigation to its
  models on screen; **plots tab** — from the click to the size plot drawn;
* **A vs B** (back on the ranking, "compare the first two rows shown") — from the click to the
  verdict and the per-task table on screen: the two runs' per-item files read from the details
  store, compared task by task (an app without that button, the baseline, skips it).

An interaction is done when the address shows its new state (the page writes it after the
outputs are applied) and the expected rows are on screen, two animation frames later.  The
bytes the browser received in that window come from the DevTools network events, split into
*data* (gradio API responses and streams) and *assets* (scripts, styles, fonts loaded then).

Prints, per N, the median of each measure and, for the largest N, the ratio to the targets
(first render ≤ 2 s, every interaction ≤ 1 s, ≤ 300 KB of data per interaction).  The
figures depend on the machine and its load: compare ratios measured in one run.

With ``--baseline DIR`` (another copy, e.g. ``git archive main | tar -x -C /tmp/main``) both apps
are served on the same store at once and their sessions alternate, and the ratio of each
measure (this checkout / baseline) is printed too; a step the baseline lacks is ``n/a``.

Before the browser, each app's cold start on the store is timed in its own process (the store
read from ``contents.parquet``, then its views with tiers built) with its peak memory, and after
the sessions each server's resident memory is read from ``/proc``.

The stores are kept under ``--store-cache`` (default ``artifacts/bench-stores``), written once
per size by ``tests.support.synthetic.results.cached_synthetic_store`` (two processes; above
1,000 models the other runs are shifted copies of the 1,000-model store's: 10,000 models in minutes).
A kept store whose ``contents.parquet`` is in an older format than the app's has it rebuilt from
its results files first (said on the console; minutes at 10,000 models, once), so that the store
read is timed on the table the app reads today.

Run: ``.venv/bin/python bench/bench_ui_browser.py [--models 10 100 1000] [--repeat 3]
[--baseline DIR] [--store-cache DIR]`` (needs Debian chromium at /usr/bin/chromium); writes
``artifacts/bench_ui_browser.json``.  The issue-32 table, side by side with main::

    git worktree add /tmp/main-bench main   # or: git archive main | tar -x -C /tmp/main-bench
    .venv/bin/python bench/bench_ui_browser.py --models 1000 10000 --repeat 3 --baseline /tmp/main-bench
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _common import REPO_ROOT as REPO

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
FIRST_RENDER = "first render"
FIRST_VISIT = "first visit after start"
FIRST_CHART = "first chart"
TASK_BY_URL = "task page by URL"
PLOTS = "plots tab"
CUSTOM_AVERAGE = "custom average"
COMPLETE_ONLY = "complete only"
KINDS = "chat only"
ORG_BEST = "org best-of-N"
STEPS = (
    FIRST_RENDER,
    FIRST_VISIT,
    "switch 0→5-shot",
    "filter",
    "search",
    "sort",
    CUSTOM_AVERAGE,
    COMPLETE_ONLY,
    KINDS,
    ORG_BEST,
    "open a task",
    "change task",
    TASK_BY_URL,
    "open a model",
    PLOTS,
    "A vs B",
)
#: Reported beside the steps: the one-time cost of the plotting library, not an interaction.
EXTRAS = (FIRST_CHART,)
TARGET_S = {step: 2.0 if step in (FIRST_RENDER, FIRST_VISIT, TASK_BY_URL, PLOTS) else 1.0 for step in STEPS}
#: Store read (from contents.parquet) target, and the server's memory target (issue 32).
TARGET_READ_S = 5.0
TARGET_RSS_MB = 1024.0
TARGET_DATA_KB = 300.0
CURRENT, BASELINE = "this checkout", "baseline"
TIMEOUT_MS = 120_000
#: The first visit of a freshly started server waits for its store read and views (minutes at
#: 10,000 models on a loaded machine): not measured, only allowed longer.
WARM_TIMEOUT_MS = 1_200_000


@dataclass
class Meter:
    """Bytes received per request (DevTools ``Network.dataReceived``), by kind, while running."""

    urls: dict[str, str] = field(default_factory=dict)
    received: list[tuple[str, int]] = field(default_factory=list)
    running: bool = False

    def attach(self, cdp) -> None:
        cdp.send("Network.enable")
        cdp.on(
            "Network.requestWillBeSent", lambda e: self.urls.__setitem__(e["requestId"], e["request"]["url"])
        )
        cdp.on("Network.dataReceived", self._on_data)

    def _on_data(self, event: dict) -> None:
        if self.running:
            self.received.append((event["requestId"], int(event["dataLength"])))

    def start(self) -> None:
        self.received.clear()
        self.running = True

    def stop(self) -> dict[str, int]:
        self.running = False
        totals = {"data": 0, "assets": 0}
        for request_id, size in self.received:
            url = self.urls.get(request_id, "")
            totals["data" if "/gradio_api/" in url else "assets"] += size
        return totals


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(app_dir: Path, data_dir: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {
        **os.environ,
        "EVALITA_DATA_DIR": str(data_dir),
        "HF_HUB_OFFLINE": "1",
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "EVALITA_REFRESH_S": "3600",  # no timer refresh in the middle of a measure
    }
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "app.py"], cwd=app_dir, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    wait_for_start(proc, log, timeout_s=180, what="the app")
    return proc, f"http://127.0.0.1:{port}/"


def wait_for_start(proc: subprocess.Popen, log: Path, timeout_s: float, what: str) -> None:
    """Until ``proc`` logs gradio's "Running on" line; kills it and raises with its log's tail if it
    exits or ``timeout_s`` passes first."""
    deadline = time.monotonic() + timeout_s
    while b"Running on" not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"{what} did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.3)


def _done_at(page, condition: str) -> float:
    """Wait until ``condition`` holds, then two animation frames (painted); the page's clock then (ms)."""
    page.wait_for_function(condition, timeout=TIMEOUT_MS, polling="raf")
    return page.evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))"
    )


def _wait(page, condition: str) -> None:
    page.wait_for_function(condition, timeout=TIMEOUT_MS, polling="raf")


def _rows(elem_id: str) -> str:
    return f"document.querySelectorAll('#{elem_id} .virtual-row').length > 0"


def _address(part: str) -> str:
    return f"window.location.search.includes({part!r})"


def _measure(page, meter: Meter, act: Callable[[], None], done: str) -> tuple[float, dict[str, int]]:
    """Seconds on the page's own clock from just before ``act`` to ``done`` painted, and the bytes
    received meanwhile (what the app costs, not the driver's round trips)."""
    meter.start()
    start = page.evaluate("performance.now()")
    act()
    end = _done_at(page, done)
    return (end - start) / 1000, meter.stop()


def _first_render(page, meter: Meter, url: str, done: str) -> tuple[float, dict[str, int]]:
    """From the start of navigation (the page's time origin) to the ranking painted."""
    meter.start()
    page.goto(url)
    end = _done_at(page, done)
    return end / 1000, meter.stop()


def _settle(page, condition: str) -> None:
    """An untimed step back to a known state (not measured)."""
    _wait(page, condition)
    page.wait_for_timeout(300)


READY = f"document.body.dataset.evalitaReady === '1' && {_rows('ranking-table')}"
#: The custom average's task, one per visit (``(abbrev, id)``): each visit asks for a set of
#: tasks no earlier visit asked for, so the step times the view's computation, not a cached render.
CUSTOM_TASKS = (
    ("TE", "te"),
    ("SA", "sa"),
    ("HS", "hs"),
    ("AT", "at"),
    ("WIC", "wic"),
    ("FAQ", "faq"),
    ("LS", "ls"),
    ("SUM", "sum"),
    ("NER", "ner"),
    ("REL", "re"),
)


def _views_steps(page, meter: Meter, visit: int, out: dict[str, tuple[float, dict[str, int]]]) -> None:
    """The issue-32 views, each switched on from the plain ranking and off again: a custom average
    over one task (a task no earlier visit picked), complete results only, chat models only, each
    organisation's best run."""
    page.locator("#ranking-views").get_by_text("Custom average, complete results").first.click()
    abbrev, task_id = CUSTOM_TASKS[visit % len(CUSTOM_TASKS)]
    pick = page.locator("#ranking-avg-tasks").get_by_text(abbrev, exact=True)
    out[CUSTOM_AVERAGE] = _measure(
        page, meter, pick.click, f"{_address('avg_tasks=' + task_id)} && {_rows('ranking-table')}"
    )
    pick.click()
    _settle(page, f"!{_address('avg_tasks=')} && {_rows('ranking-table')}")
    for step, control, shown in (
        (COMPLETE_ONLY, page.locator("#ranking-complete input"), "complete=1"),
        (KINDS, page.locator("#ranking-kinds").get_by_text("chat / instruct", exact=True), "kinds=chat"),
        (ORG_BEST, page.locator("#ranking-org-best input"), "org_best=1"),
    ):
        out[step] = _measure(page, meter, control.click, f"{_address(shown)} && {_rows('ranking-table')}")
        control.click()
        _settle(page, f"!{_address(shown)} && {_rows('ranking-table')}")


def session(browser, url: str, visit: int = 0) -> dict[str, tuple[float, dict[str, int]]]:
    """One visitor in a fresh context: the first render, then every interaction once (``visit``:
    this visitor's number, which picks its custom average's task)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    meter = Meter()
    meter.attach(context.new_cdp_session(page))
    out: dict[str, tuple[float, dict[str, int]]] = {}
    out[FIRST_RENDER] = _first_render(page, meter, url, READY)
    page.wait_for_timeout(500)

    out["switch 0→5-shot"] = _measure(
        page, meter, lambda: page.get_by_test_id("5-shot-radio-label").click(), _address("setting=5")
    )
    page.get_by_test_id("0-shot-radio-label").click()
    _settle(page, f"!{_address('setting=')}")

    page.locator("#ranking-filters").get_by_text("Filters and columns").click()
    pretrained = page.locator("#ranking-types").get_by_text("pretrained", exact=True)
    out["filter"] = _measure(page, meter, pretrained.click, _address("types=pretrained"))
    pretrained.click()
    _settle(page, f"!{_address('types=')}")

    box = page.locator("#ranking-search textarea, #ranking-search input").first
    box.click()
    box.press_sequentially("model-000", delay=30)
    _settle(page, _address("search=model-000"))
    out["search"] = _measure(
        page, meter, lambda: box.press("3"), f"{_address('search=model-0003')} && {_rows('ranking-table')}"
    )
    box.press("Control+a")
    box.press("Space")  # a character key: the baseline's search box ignores Backspace
    _settle(page, "document.querySelectorAll('#ranking-table .virtual-row').length > 1")

    if page.locator("#ranking-views").count():  # an app without the issue-32 views skips them
        _views_steps(page, meter, visit, out)

    if page.locator("#ranking-sort").count():  # an app without a sort control (the baseline) skips it
        page.locator("#ranking-sort input").click()
        option = page.get_by_role("option", name="Model name (A–Z)")
        out["sort"] = _measure(page, meter, option.click, _address("sort=model"))

    tasks = page.get_by_role("tab", name="Tasks", exact=True)
    start = page.evaluate("performance.now()")
    out["open a task"] = _measure(
        page, meter, tasks.click, f"{_address('tab=task')} && {_rows('task-models')}"
    )
    # The heatmap is the page's first chart: plotly (4.6 MB of script) loads and starts once per
    # page, whatever N.  Timed apart, from the same click; the next steps start once it is drawn.
    drawn = _done_at(page, "document.querySelector('#task-heatmap .js-plotly-plot')")
    out[FIRST_CHART] = ((drawn - start) / 1000, {"data": 0, "assets": 0})
    page.locator("#task-pick input").click()
    sa = page.get_by_role("option", name="SA — Sentiment Analysis")
    sa_shown = "(document.querySelector('#task-info') || {innerText: ''}).innerText.includes('SA —')"
    out["change task"] = _measure(page, meter, sa.click, f"{_address('task=sa')} && {sa_shown}")

    # A shared link to a task page, opened in a new tab of the same context (assets cached).
    linked = context.new_page()
    linked.set_default_timeout(TIMEOUT_MS)
    link_meter = Meter()
    link_meter.attach(context.new_cdp_session(linked))
    out[TASK_BY_URL] = _first_render(
        linked, link_meter, url + "?tab=task&task=ls", f"{_address('task=ls')} && {_rows('task-models')}"
    )
    linked.close()

    page.get_by_role("tab", name="Ranking", exact=True).click()
    _settle(page, f"!{_address('tab=')} && {_rows('ranking-table')}")
    cell = page.locator("#ranking-table .virtual-row").nth(2).locator(".body-cell").nth(2)
    opened = f"{_address('tab=model')} && (document.querySelector('#model-header a') || {{}}).innerText"
    opened += f" && {_rows('model-vs-field-table')}"
    out["open a model"] = _measure(page, meter, cell.click, opened)

    plots_tab = page.get_by_role("tab", name="Plots", exact=True)
    out[PLOTS] = _measure(
        page,
        meter,
        plots_tab.click,
        f"{_address('tab=plots')} && document.querySelector('#plot-scatter .js-plotly-plot')",
    )

    if page.locator("#ranking-compare").count():
        page.get_by_role("tab", name="Ranking", exact=True).click()
        _settle(page, f"!{_address('tab=')} && {_rows('ranking-table')}")
        verdict = (
            "(document.querySelector('#compare-verdict') || {innerText: ''}).innerText.includes('better on')"
        )
        out["A vs B"] = _measure(
            page,
            meter,
            page.locator("#ranking-compare").click,
            f"{_address('tab=compare')} && {verdict} && {_rows('compare-table')}",
        )
    context.close()
    return out


def first_visit(browser, url: str) -> tuple[float, dict[str, int]]:
    """The first visitor of a server that has just said it runs: from navigation to the ranking's
    rows painted, however long its start-up work (store read, tiers, views) makes it wait."""
    global TIMEOUT_MS
    saved, TIMEOUT_MS = TIMEOUT_MS, WARM_TIMEOUT_MS
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.set_default_timeout(WARM_TIMEOUT_MS)
        meter = Meter()
        meter.attach(context.new_cdp_session(page))
        return _first_render(page, meter, url, READY)
    finally:
        context.close()
        TIMEOUT_MS = saved


def warm_up(browser, url: str) -> None:
    """One unmeasured visit: the server reads and scores the store, and every view the sessions
    open is computed once (each app's own caches, as after its first visitors)."""
    global TIMEOUT_MS
    saved, TIMEOUT_MS = TIMEOUT_MS, WARM_TIMEOUT_MS
    try:
        session(browser, url, visit=0)
    finally:
        TIMEOUT_MS = saved


Measures = dict[str, tuple[float, dict[str, int]]]
Summary = dict[str, dict[str, float]]


def _summary(runs: list[Measures]) -> Summary:
    summary = {}
    for step in (*STEPS, *EXTRAS):
        done = [run[step] for run in runs if step in run]
        if not done:
            continue
        seconds = [seconds for seconds, _ in done]
        summary[step] = {
            "median_s": statistics.median(seconds),
            "min_s": min(seconds),
            "max_s": max(seconds),
            "data_kb": statistics.median(sizes["data"] for _, sizes in done) / 1024,
            "assets_kb": statistics.median(sizes["assets"] for _, sizes in done) / 1024,
        }
    return summary


#: Above this many models the store's runs are copies of this many drawn ones (see
#: ``write_synthetic_results(distinct=)``, read from the cached 1,000-model store): minutes.
DISTINCT = 1000


def store_for(models: int, cache: Path) -> Path:
    """The synthetic store of ``models`` models (with its contents table), kept under ``cache``."""
    from tests.support.synthetic.results import cached_synthetic_store

    started = time.monotonic()
    data = cached_synthetic_store(cache, models, distinct=DISTINCT if models > DISTINCT else None)
    print(f"store of {models:,} models: {data} ({time.monotonic() - started:.0f} s)", flush=True)
    return data


#: Run in each app's folder: its own cold start on the store (contents.parquet, then the files
#: it does not cover), then its views built (tiers included); seconds and peak memory.
READ_SCRIPT = """
import json, os, resource, sys, time
sys.path.insert(0, os.getcwd())
from eval_queue.settings import Settings
from leaderboard.ui.context import AppContext
started = time.monotonic()
ctx = AppContext.from_settings(Settings.from_env(), refresh_s=3600)
ctx.store()
read = time.monotonic() - started
ctx.warm()
print(json.dumps({"read_s": read, "warm_s": time.monotonic() - started - read,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def cold_start(app_dir: Path, data_dir: Path) -> dict[str, float]:
    env = {**os.environ, "EVALITA_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", READ_SCRIPT],
        cwd=app_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode:
        raise RuntimeError(f"the cold start failed in {app_dir}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def rss_mb(pid: int) -> dict[str, float]:
    """The server's resident memory now and at its peak (``/proc``), in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return {"rss_mb": fields.get("VmRSS", float("nan")), "peak_rss_mb": fields.get("VmHWM", float("nan"))}


def bench(
    models: int, repeat: int, browser, root: Path, apps: dict[str, Path], cache: Path
) -> tuple[dict[str, Summary], dict[str, dict[str, float]]]:
    """Every app on the same store, served at once; their sessions alternate, so that both meet
    the same load on the machine.  Returns each app's steps and its memory and cold start."""
    data = store_for(models, cache)
    facts = {name: cold_start(app_dir, data) for name, app_dir in apps.items()}
    servers: dict[str, tuple[subprocess.Popen, str]] = {}
    runs: dict[str, list[Measures]] = {name: [] for name in apps}
    first: dict[str, tuple[float, dict[str, int]]] = {}
    try:
        # One app started at a time, its first visitor sent as soon as it says it runs (the
        # other app, if started, idle by then: its own first visit and warm-up are done).
        for name, app_dir in apps.items():
            servers[name] = serve(app_dir, data, root / f"app-{name}-{models}.log")
            first[name] = first_visit(browser, servers[name][1])
            warm_up(browser, servers[name][1])
        for visit in range(1, repeat + 1):
            for name, (_, url) in servers.items():
                runs[name].append({**session(browser, url, visit), FIRST_VISIT: first[name]})
        for name, (proc, _) in servers.items():
            facts[name].update(rss_mb(proc.pid))
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(timeout=30)
    return {name: _summary(measures) for name, measures in runs.items()}, facts


def _cell(summary: Summary, step: str) -> str:
    if step not in summary:
        return "n/a"
    row = summary[step]
    return (
        f"{row['median_s']:.2f} s" if step in EXTRAS else f"{row['median_s']:.2f} s / {row['data_kb']:.0f} KB"
    )


def report_facts(facts: dict[int, dict[str, dict[str, float]]]) -> None:
    print("\nCold start and memory (store read: contents.parquet then the files it does not cover;")
    print("views: rankings with tiers, task and prompt tables built; server RSS after the sessions)")
    print(
        f"{'N models':<10}{'app':<16}{'read s':>9}{'views s':>9}{'peak MB':>9}{'server RSS MB':>15}{'peak':>8}"
    )
    for models, by_app in facts.items():
        for name, row in by_app.items():
            print(
                f"{models:<10,}{name:<16}{row['read_s']:>9.2f}{row['warm_s']:>9.2f}{row['peak_mb']:>9.0f}"
                f"{row.get('rss_mb', float('nan')):>15.0f}{row.get('peak_rss_mb', float('nan')):>8.0f}"
            )
    largest = max(facts)
    mine = facts[largest][CURRENT]
    print(
        f"N = {largest:,}, {CURRENT}: store read {mine['read_s'] / TARGET_READ_S:.2f}× its target "
        f"({TARGET_READ_S:.0f} s), server RSS {mine.get('rss_mb', float('nan')) / TARGET_RSS_MB:.2f}× "
        f"its target ({TARGET_RSS_MB:.0f} MB)"
    )
    if BASELINE in facts[largest]:
        old = facts[largest][BASELINE]
        print(
            f"N = {largest:,}: {CURRENT} / {BASELINE}: read {mine['read_s'] / old['read_s']:.2f}, "
            f"views {mine['warm_s'] / old['warm_s']:.2f}, server RSS "
            f"{mine.get('rss_mb', float('nan')) / old.get('rss_mb', float('nan')):.2f}"
        )


def report(results: dict[int, dict[str, Summary]], repeat: int) -> None:
    steps = (*STEPS, *EXTRAS)
    width = max(16, *(len(step) + 2 for step in steps))
    print(f"\nBrowser bench (headless chromium; median of {repeat}; seconds / data KB received)")
    for name in next(iter(results.values())):
        print(f"\n[{name}]")
        print(f"{'N models':<10}" + "".join(f"{step:>{width}}" for step in steps))
        for models, by_app in results.items():
            print(f"{models:<10,}" + "".join(f"{_cell(by_app[name], step):>{width}}" for step in steps))
    largest = max(results)
    summary = results[largest][CURRENT]
    print(f"\nN = {largest:,}, {CURRENT}: ratio to target (≤ 1 meets it)")
    print(f"{'step':<25}{'time':>9}{'target':>9}{'ratio':>8}{'data KB':>10}{'ratio':>8}{'assets KB':>11}")
    for step in STEPS:
        if step not in summary:
            continue
        row = summary[step]
        print(
            f"{step:<25}{row['median_s']:>8.2f}s{TARGET_S[step]:>8.1f}s{row['median_s'] / TARGET_S[step]:>8.2f}"
            f"{row['data_kb']:>10.1f}{row['data_kb'] / TARGET_DATA_KB:>8.2f}{row['assets_kb']:>11.1f}"
        )
    print(
        f"{FIRST_CHART:<25}{summary[FIRST_CHART]['median_s']:>8.2f}s  (opening the task page to its heatmap "
        "drawn: plotly's one-time start in a page, the same at every N; not an interaction)"
    )
    if BASELINE in results[largest]:
        old = results[largest][BASELINE]
        print(f"\nN = {largest:,}: {CURRENT} / {BASELINE}, measured side by side (< 1 is faster or smaller)")
        print(f"{'step':<25}{'time':>9}{'data':>9}")
        for step in steps:
            if step in old and step in summary:
                time_ratio = summary[step]["median_s"] / old[step]["median_s"]
                data_ratio = (
                    summary[step]["data_kb"] / old[step]["data_kb"] if old[step]["data_kb"] else float("nan")
                )
                print(f"{step:<25}{time_ratio:>9.2f}{data_ratio:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--store-cache",
        type=Path,
        default=REPO / "artifacts" / "bench-stores",
        help="where the synthetic stores are kept between runs (written once per size)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another copy of the app (e.g. `git archive main | tar -x -C /tmp/main`), measured side by side",
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    apps = {CURRENT: REPO, **({BASELINE: args.baseline.resolve()} if args.baseline else {})}
    results: dict[int, dict[str, Summary]] = {}
    facts: dict[int, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-ui-browser-") as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for models in args.models:
                started = time.monotonic()
                results[models], facts[models] = bench(
                    models, args.repeat, browser, Path(tmp), apps, args.store_cache.resolve()
                )
                facts[models][CURRENT]["bench_s"] = time.monotonic() - started
                print(f"N = {models:,} done in {time.monotonic() - started:.0f} s", flush=True)
                if len(args.models) > 1:  # each size's figures as soon as they are measured
                    report({models: results[models]}, args.repeat)
                    report_facts({models: facts[models]})
        finally:
            browser.close()
    report(results, args.repeat)
    report_facts(facts)
    out = REPO / "artifacts" / "bench_ui_browser.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"repeat": args.repeat, "results": results, "facts": facts}, indent=2) + "\n")
    print(f"written {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
