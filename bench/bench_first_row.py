"""The first row and the task page by URL only, side by side, many visits: where a landing's time goes.

The two landing steps of ``bench_ui_browser.py`` measured the same way (``FIRST_RENDER``: a fresh
browser context, from navigation to the ranking's rows painted; ``TASK_BY_URL``: a link to the LS
task opened in a new tab of that context, assets cached, to its models painted), without the
rest of the tour, so that many visits fit in a few minutes.  Each app (this checkout and, with
``--baseline DIR``, another copy) is served on the same store at once and their visits alternate.
Printed per app: the median of each step, its ratio to the first app's, and each step's split
from the page's own resource timings — navigation to the HTML received, to the load call sent
(the page mounted: gradio fires its load event), to that call answered, and to the rows painted.

Run: ``.venv/bin/python bench/bench_first_row.py --models 10000 --repeat 7 --baseline DIR``
(needs Debian chromium at /usr/bin/chromium; the stores of ``bench_ui_browser.py``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from _common import REPO_ROOT as REPO
from bench_ui_browser import (
    ARGS,
    BASELINE,
    CHROMIUM,
    CURRENT,
    DISTINCT,
    FIRST_RENDER,
    READY,
    TASK_BY_URL,
    WARM_TIMEOUT_MS,
    _address,
    _done_at,
    _rows,
    serve,
)

TASK_READY = f"{_address('task=ls')} && {_rows('task-models')}"
#: From the page's resource timings: HTML received, load call sent and answered (ms).
SPLIT_JS = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const call = performance.getEntriesByType('resource').find(e => e.name.includes('/gradio_api/run/predict'));
  return [nav.responseEnd, call ? call.startTime : NaN, call ? call.responseEnd : NaN];
}"""


def visit(context, url: str, done: str) -> list[float]:
    """One landing in a new tab of ``context``: [HTML, load call sent, answered, painted] in ms."""
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(url)
    painted = _done_at(page, done)
    split = page.evaluate(SPLIT_JS)
    page.close()
    return [*split, painted]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--store-cache", type=Path, default=REPO / "artifacts" / "bench-stores")
    parser.add_argument("--baseline", type=Path, help="another copy of the app, measured side by side")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from tests.support.synthetic.results import cached_synthetic_store

    data = cached_synthetic_store(
        args.store_cache.resolve(), args.models, distinct=DISTINCT if args.models > DISTINCT else None
    )
    apps = {CURRENT: REPO, **({BASELINE: args.baseline.resolve()} if args.baseline else {})}
    runs: dict[str, dict[str, list[list[float]]]] = {
        name: {FIRST_RENDER: [], TASK_BY_URL: []} for name in apps
    }
    servers = {}
    with tempfile.TemporaryDirectory(prefix="bench-first-row-") as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for name, app_dir in apps.items():
                servers[name] = serve(app_dir, data, Path(tmp) / f"app-{name}.log")
                context = browser.new_context()  # unmeasured: the server warmed, every view kept
                context.set_default_timeout(WARM_TIMEOUT_MS)
                for url, done in (
                    (servers[name][1], READY),
                    (servers[name][1] + "?tab=task&task=ls", TASK_READY),
                ):
                    page = context.new_page()
                    page.goto(url)
                    page.wait_for_function(done, timeout=WARM_TIMEOUT_MS, polling="raf")
                context.close()
            for _ in range(args.repeat):
                for name, (_, url) in servers.items():
                    context = browser.new_context(viewport={"width": 1400, "height": 1000})
                    runs[name][FIRST_RENDER].append(visit(context, url, READY))
                    runs[name][TASK_BY_URL].append(visit(context, url + "?tab=task&task=ls", TASK_READY))
                    context.close()
        finally:
            browser.close()
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(timeout=30)
    print(f"\nN = {args.models:,}, median of {args.repeat} visits per app, alternating (ms from navigation)")
    medians: dict[tuple[str, str], list[float]] = {}
    for name in apps:
        for step in (FIRST_RENDER, TASK_BY_URL):
            rows = runs[name][step]
            median = medians[name, step] = [statistics.median(row[i] for row in rows) for i in range(4)]
            print(
                f"{name:<14}{step:<18}{median[3] / 1000:6.2f} s   HTML {median[0]:5.0f}  load call sent"
                f" {median[1]:5.0f}  answered {median[2]:5.0f}  rows painted {median[3]:5.0f}"
            )
    if BASELINE in apps:
        for step in (FIRST_RENDER, TASK_BY_URL):
            mine, old = medians[CURRENT, step], medians[BASELINE, step]
            print(
                f"{CURRENT} / {BASELINE}, {step}: {mine[3] / old[3]:.2f} (the load call, sent to answered:"
                f" {mine[2] - mine[1]:.0f} against {old[2] - old[1]:.0f} ms)"
            )


if __name__ == "__main__":
    main()
