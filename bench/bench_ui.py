"""Server-side cost of the UI on a large store: 1,000 synthetic models × 2 settings.

Measures, in process (what a request costs the server, without the browser):

* **first render, cold** — read and parse the whole results store (``load_results``), score it
  (``tables.ranking_table`` via the board) and render the ranking (view + gradio postprocess);
* **first render, warm** — the same once the start-up warm-up (``AppContext.warm``, run by
  ``app.py`` in a background thread while the server starts) has loaded and scored the store:
  what the first visitor actually waits for;
* **filter change** — the ranking re-rendered under a filter from the already loaded snapshot;
* **refresh, nothing changed** — the timer's re-read when no file changed (incremental);
* **task drill-down** — the task tab's tables on the loaded snapshot.

Run: ``.venv/bin/python bench/bench_ui.py [--models 1000] [--repeat 5]``.  Prints a table and
writes ``artifacts/bench_ui.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import REPO_ROOT as REPO


def timed(fn: Callable[[], object], repeat: int) -> dict[str, float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return {"median_s": statistics.median(samples), "min_s": min(samples), "max_s": max(samples), "n": repeat}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from dataclasses import replace

    import gradio as gr

    from eval_queue.settings import Settings
    from leaderboard.state import PageState
    from leaderboard.tracks.evalita.app import views
    from leaderboard.tracks.evalita.app.tab.ranking import RankingTab
    from leaderboard.tracks.evalita.app.tab.task import TaskTab
    from leaderboard.tracks.evalita.vocabulary import Setting
    from leaderboard.ui.common import table_update
    from leaderboard.ui.context import AppContext
    from tests.support.synthetic.results import write_synthetic_results

    with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        files = write_synthetic_results(root / "results", args.models)
        build_s = time.perf_counter() - t0
        settings = Settings(data_dir=root)

        ranking, task = RankingTab(), TaskTab()

        def render(
            ctx: AppContext, search: str = "", types: tuple[str, ...] = (), setting=Setting.ZERO
        ) -> int:
            # What a page is sent: one page of rows, postprocessed (Styler → JSON-ready rows).
            state = PageState().with_values(search=search, types=types, setting=setting)
            update = table_update(ranking.render(ctx, state).values["table"])
            shown = gr.Dataframe().postprocess(update["value"])  # what gradio does before sending it
            return len(shown.data)

        def first_render() -> None:
            ctx = AppContext.from_settings(settings)  # a fresh app: nothing cached
            rows = render(ctx)
            assert rows == min(args.models, views.PAGE_SIZE), rows

        def first_render_after_startup_warmup() -> float:
            ctx = AppContext.from_settings(settings)
            ctx.warm()  # what app.py does in a background thread while the server starts
            start = time.perf_counter()
            render(ctx)
            return time.perf_counter() - start

        results = {"first_render_cold": timed(first_render, max(1, args.repeat // 2))}
        warm_samples = [first_render_after_startup_warmup() for _ in range(max(1, args.repeat // 2))]
        results["first_render_warm"] = {
            "median_s": statistics.median(warm_samples),
            "min_s": min(warm_samples),
            "max_s": max(warm_samples),
            "n": len(warm_samples),
        }
        results["startup_warmup"] = timed(lambda: AppContext.from_settings(settings).warm(), 1)
        ctx = AppContext.from_settings(settings)
        ctx.warm()
        render(ctx)
        results["filter_change"] = timed(
            lambda: render(ctx, search="model-01", types=("pretrained",)), args.repeat
        )
        results["setting_switch"] = timed(lambda: render(ctx, setting=Setting.FIVE), args.repeat)
        ctx.min_reread_s = 0.0  # time the store re-read itself, not the throttle that skips it
        results["refresh_unchanged"] = timed(ctx.refresh, args.repeat)
        te = replace(PageState().with_values(task="te"), tab="task")
        results["task_drill_down_first"] = timed(lambda: task.render(ctx, te), 1)
        results["task_drill_down_again"] = timed(lambda: task.render(ctx, te), args.repeat)
        results["both_view"] = timed(
            lambda: views.ranking_view(views.current_board(ctx), "both", views.RankingFilters()), args.repeat
        )

    report = {
        "models": args.models,
        "results_files": files,
        "store_build_s": round(build_s, 2),
        "timings": {
            k: {m: round(v, 4) if isinstance(v, float) else v for m, v in t.items()}
            for k, t in results.items()
        },
    }
    print(
        f"UI bench: {args.models} models × 2 settings = {files} results files (store built in {build_s:.1f}s)"
    )
    print(f"{'step':<30}{'median (s)':>12}{'min (s)':>10}{'max (s)':>10}{'n':>4}")
    for name, t in results.items():
        print(f"{name:<30}{t['median_s']:>12.3f}{t['min_s']:>10.3f}{t['max_s']:>10.3f}{t['n']:>4}")
    out = REPO / "artifacts" / "bench_ui.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
