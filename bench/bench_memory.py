"""The server's memory (RSS) through a browser tour's interactions, in process, at N models (issue 32).

What ``bench/bench_ui_browser.py`` reports as "server memory" is the server's RSS after its
sessions: read the store, warm it as the app does (``AppContext.warm``), then each visitor's
steps.  This replays those steps without a browser or gradio's server — each tab's ``render`` through
a :class:`~leaderboard.ui.render_cache.RenderCache`, as the server's handlers call it (its C-heap
trim after long renders included) — and prints the RSS after each step, so a change to what the
board keeps shows in a minute instead of an eight-minute browser run.

Per visit (``--visits``, default 4, as the browser bench's sessions): the first render, 5-shot,
a filter, a search, a custom average over one task that no earlier visit picked (the browser
bench's task order), complete results, chat only, each organisation's best, a task page, a model
page, the plots.  ``--tree DIR`` runs the code of another tree (e.g. ``git archive main`` unpacked)
on the same store, so two trees are compared process by process: ``--compare DIR --rounds 3``
alternates this tree and ``DIR`` in fresh processes and prints both trees' figures side by side.
``--holders`` prints, at the end, what the board keeps (deep size of each memoised table or view).

Run: ``.venv/bin/python bench/bench_memory.py STORE [--visits 4] [--compare DIR --rounds 3] [--holders]``
(``STORE``: a data dir, e.g. ``artifacts/bench-stores/evalita-10000-distinct1000-seed7-v2``;
read only).  Writes ``artifacts/bench_memory.json`` (``--compare``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _common

#: The custom average's task per visit (the browser bench's ``CUSTOM_TASKS`` order).
CUSTOM_TASKS = ("te", "sa", "hs", "at", "wic", "faq", "ls", "sum", "ner", "re")


def _rss_mb() -> float:
    """This process's resident set now (MB), from ``/proc`` (what the browser bench reads of the server)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _deep_mb(value: object) -> float:
    """Deep size of a kept table or view (frames by ``memory_usage(deep=True)``, arrays by ``nbytes``)."""
    import numpy as np
    import pandas as pd

    seen: set[int] = set()

    def size(v: object) -> int:
        if id(v) in seen:
            return 0
        seen.add(id(v))
        if isinstance(v, pd.DataFrame):
            return int(v.memory_usage(deep=True).sum())
        if isinstance(v, pd.Series | pd.Index):
            return int(v.memory_usage(deep=True))
        if isinstance(v, np.ndarray):
            return int(v.nbytes) + (sum(sys.getsizeof(x) for x in v.ravel()) if v.dtype == object else 0)
        if isinstance(v, dict):
            return sum(size(k) + size(x) for k, x in v.items())
        if isinstance(v, list | tuple | set | frozenset):
            return sys.getsizeof(v) + sum(size(x) for x in v)
        if hasattr(v, "__dict__"):
            return sum(size(x) for x in vars(v).values())
        if hasattr(v, "__dataclass_fields__"):
            return sum(size(getattr(v, f)) for f in v.__dataclass_fields__)
        return sys.getsizeof(v)

    return size(value) / 1e6


def tour(store: Path, visits: int, holders: bool) -> dict[str, object]:
    """Warm the app on ``store`` and replay ``visits`` browser sessions' steps; RSS after each."""
    from eval_queue.settings import Settings
    from leaderboard.state import PageState
    from leaderboard.tracks.evalita.app import views
    from leaderboard.tracks.evalita.app.tab.model import ModelTab
    from leaderboard.tracks.evalita.app.tab.plots import PlotsTab
    from leaderboard.tracks.evalita.app.tab.ranking import RankingTab
    from leaderboard.tracks.evalita.app.tab.task import TaskTab
    from leaderboard.tracks.evalita.vocabulary import Setting
    from leaderboard.ui.context import AppContext
    from leaderboard.ui.render_cache import RenderCache

    print(f"code: {Path(views.__file__).resolve().parents[5]}", flush=True)
    steps: list[tuple[str, float, float]] = []

    def mark(name: str, seconds: float) -> None:
        steps.append((name, seconds, _rss_mb()))
        print(f"  {name:<34} {seconds:6.2f} s  RSS {steps[-1][2]:7.0f} MB", flush=True)

    started = time.perf_counter()
    ctx = AppContext.from_settings(Settings(data_dir=store), refresh_s=3600)
    ctx.warm()
    mark("read + warm", time.perf_counter() - started)
    cache = RenderCache()
    ranking, task, model, plots = RankingTab(), TaskTab(), ModelTab(), PlotsTab()

    def render(name: str, tab, state: PageState) -> None:
        wall = time.perf_counter()
        cache.get((type(tab).__name__, ctx.version, state), lambda: tab.render(ctx, state))
        mark(name, time.perf_counter() - wall)

    top = views.current_board(ctx).choices()
    for visit in range(visits):
        print(f"visit {visit + 1}", flush=True)
        plain = PageState()
        render("first row", ranking, plain)
        render("5-shot", ranking, plain.with_values(setting=Setting.FIVE))
        render("filter pretrained", ranking, plain.with_values(types=("pretrained",)))
        for typed in ("model-000", "model-0003"):
            render(f"search {typed}", ranking, plain.with_values(search=typed))
        average = plain.with_values(avg_tasks=(CUSTOM_TASKS[visit % len(CUSTOM_TASKS)],))
        render(f"custom average {CUSTOM_TASKS[visit % len(CUSTOM_TASKS)]}", ranking, average)
        render("complete only", ranking, plain.with_values(complete=True))
        render("chat only", ranking, plain.with_values(kinds=("chat",)))
        render("best of N", ranking, plain.with_values(org_best=True))
        render("task page", task, plain.with_values(task=CUSTOM_TASKS[(visit + 1) % len(CUSTOM_TASKS)]))
        render("model page", model, plain.with_values(model=top[visit * 7 % len(top)][1]))
        render("plots", plots, plain)
    report = {
        "steps": [{"step": s, "seconds": t, "rss_mb": r} for s, t, r in steps],
        "rss_end_mb": _rss_mb(),
        "peak_mb": _peak_mb(),
    }
    print(f"RSS at the end {report['rss_end_mb']:.0f} MB (peak {report['peak_mb']:.0f} MB)", flush=True)
    if holders:
        board = views.current_board(ctx)
        kept = []
        for member in board._family.values():
            for kind, table in (("table", member._tables), ("memo", member._memo)):
                for key, value in table.items():
                    kept.append((_deep_mb(value), kind, member.metrics.value, repr(key)[:90]))
        kept.sort(reverse=True)
        print(f"the board keeps {sum(k[0] for k in kept):.0f} MB in {len(kept)} entries; largest:")
        for size, kind, metrics, key in kept[:25]:
            print(f"  {size:7.1f} MB  {kind:<5} {metrics:<12} {key}")
        print(f"  loaded results: {_deep_mb(board.loaded):.0f} MB")
    return report


def _child(tree: Path, store: Path, visits: int) -> dict[str, object]:
    """One fresh process running ``tree``'s code (its report, read from its last line)."""
    done = subprocess.run(
        [sys.executable, __file__, str(store), "--visits", str(visits), "--tree", str(tree), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path, help="data dir of a store (read only)")
    parser.add_argument("--visits", type=int, default=4)
    parser.add_argument("--tree", type=Path, help="run this tree's code (default: this one)")
    parser.add_argument("--compare", type=Path, help="another tree, run alternately with this one")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--holders", action="store_true", help="print what the board keeps")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    store = args.store.resolve()
    if args.compare is None:
        if args.tree is not None:
            sys.path.insert(0, str(args.tree.resolve()))
        _common.one_core()  # the server's figures are per core on this 2-core machine; so are these
        report = tour(store, args.visits, args.holders)
        if args.json:
            print(json.dumps(report))
        return 0
    trees = {"this": _common.REPO_ROOT, "other": args.compare.resolve()}
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in trees}
    for round_ in range(args.rounds):
        order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
        for name in order:
            report = _child(trees[name], store, args.visits)
            runs[name].append(report)
            print(
                f"round {round_ + 1} {name:<5} RSS at the end {report['rss_end_mb']:.0f} MB "
                f"(peak {report['peak_mb']:.0f})",
                flush=True,
            )
    print(f"\n{'step':<34}" + "".join(f"{name + ' RSS MB':>22}{name + ' s':>10}" for name in trees))
    names = [s["step"] for s in runs["this"][0]["steps"]]
    for i, step in enumerate(names):
        line = f"{step:<34}"
        for name in trees:
            rss = [r["steps"][i]["rss_mb"] for r in runs[name]]
            secs = [r["steps"][i]["seconds"] for r in runs[name]]
            line += f"{statistics.median(rss):>10.0f} ({min(rss):.0f}–{max(rss):.0f})"[:22].rjust(22)
            line += f"{statistics.median(secs):>10.2f}"
        print(line)
    for name in trees:
        ends = [round(r["rss_end_mb"]) for r in runs[name]]
        peaks = [round(r["peak_mb"]) for r in runs[name]]
        print(f"{name}: RSS at the end {ends} MB, peak {peaks} MB ({trees[name]})")
    _common.ARTIFACTS.mkdir(exist_ok=True)
    out = _common.ARTIFACTS / "bench_memory.json"
    out.write_text(
        json.dumps({"store": str(store), "trees": {k: str(v) for k, v in trees.items()}, "runs": runs})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
