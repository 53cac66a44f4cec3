"""Shared renders: a view is computed once per (results version, tab, state), concurrent visitors
asking for it wait for that one computation, and the oldest renders are dropped first."""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest

from leaderboard.tracks.evalita.app import plots
from leaderboard.ui import render_cache
from leaderboard.ui.common import fingerprint
from leaderboard.ui.render_cache import RenderCache
from leaderboard.ui.tab import Rendered
from leaderboard.views.common import MODEL, PARAMS, TYPE


def test_a_render_is_computed_once_and_served_with_its_digests() -> None:
    cache = RenderCache()
    calls = []

    def render() -> Rendered:
        calls.append(1)
        return Rendered(values={"caption": "ten runs"})

    first = cache.get(("ranking", 1, "state"), render)
    second = cache.get(("ranking", 1, "state"), render)
    assert second is first and len(calls) == 1
    assert first.digests == {"caption": fingerprint("ten runs")}
    cache.get(("ranking", 2, "state"), render)  # a new results version: computed again
    assert len(calls) == 2 and (cache.computed, cache.served) == (2, 1)


def test_a_long_render_hands_the_heap_back_and_a_quick_one_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view computed in TRIM_AFTER_S or more trims the C heap after it (its temporaries: a
    custom average's at 10,000 runs were a few hundred MB); a quicker one does not pay a trim."""
    trims = []
    now = [100.0]  # the cache's clock, moved by the renders themselves
    monkeypatch.setattr(render_cache.heap, "trim", lambda: trims.append(1))
    monkeypatch.setattr(render_cache.time, "perf_counter", lambda: now[0])
    cache = RenderCache()

    def taking(seconds: float) -> Rendered:
        now[0] += seconds
        return Rendered(values={"caption": f"{seconds} s"})

    cache.get(("ranking", 1, "quick"), lambda: taking(render_cache.TRIM_AFTER_S / 2))
    assert trims == []
    cache.get(("ranking", 1, "slow"), lambda: taking(render_cache.TRIM_AFTER_S))
    assert trims == [1]
    cache.get(("ranking", 1, "slow"), lambda: taking(10.0))  # served from the cache: no trim
    assert trims == [1]


def test_concurrent_visitors_of_one_view_share_one_computation() -> None:
    cache = RenderCache()
    calls = []

    def slow() -> Rendered:
        calls.append(1)
        time.sleep(0.2)
        return Rendered(values={"caption": "x"})

    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("view", slow))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(got) == 8 and all(g is got[0] for g in got)


def test_a_failed_render_is_not_kept_and_the_next_caller_computes_it() -> None:
    cache = RenderCache()

    def broken() -> Rendered:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        cache.get("view", broken)
    assert cache.get("view", lambda: Rendered(values={"a": 1})).rendered.values == {"a": 1}


def test_the_oldest_render_is_dropped_beyond_the_size() -> None:
    cache = RenderCache(size=2)
    for key in ("a", "b", "a", "c"):  # "a" used again: "b" is the oldest
        cache.get(key, lambda: Rendered(values={}))
    computed = cache.computed
    cache.get("a", lambda: Rendered(values={}))
    cache.get("b", lambda: Rendered(values={}))
    assert cache.computed == computed + 1  # "a" was kept, "b" computed again


def test_the_size_plot_of_thousands_of_runs_is_drawn_with_webgl() -> None:
    def ranking(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                MODEL: [f"m{i}" for i in range(n)],
                "Avg": [50.0] * n,
                PARAMS: [7.0] * n,
                TYPE: ["pretrained"] * n,
            }
        )

    few = plots.cps_vs_params(ranking(10), "Avg")
    many = plots.cps_vs_params(ranking(plots.WEBGL_POINTS + 1), "Avg")
    assert [t.type for t in few.data] == ["scatter"]
    assert [t.type for t in many.data] == ["scattergl"] and len(many.data[0].x) == plots.WEBGL_POINTS + 1


def test_the_size_plot_sends_float32_coordinates_that_hover_as_the_table_shows_them() -> None:
    rng = np.random.default_rng(7)
    n = plots.WEBGL_POINTS + 1
    ranking = pd.DataFrame(
        {
            MODEL: [f"org/m{i}" for i in range(n)],
            "Avg": np.round(rng.uniform(0, 100, n), 2),
            PARAMS: np.round(rng.uniform(0.1, 400, n), 2),
            TYPE: ["pretrained"] * n,
        }
    )
    (trace,) = plots.cps_vs_params(ranking, "Avg").data
    for sent, column in ((trace.x, PARAMS), (trace.y, "Avg")):
        assert np.asarray(sent).dtype == np.float32  # half the bytes of float64 on the page
        assert [f"{v:.2f}" for v in np.asarray(sent, dtype=float)] == [f"{v:.2f}" for v in ranking[column]]
    # A value on a rounding tie (0.125 B: ties round up in the browser, to even here) keeps float64.
    (tied,) = plots.cps_vs_params(ranking.assign(**{PARAMS: 0.125}), "Avg").data
    assert np.asarray(tied.x).dtype == np.float64 and np.asarray(tied.y).dtype == np.float32


def test_the_sensitivity_plot_of_many_models_sends_boxes_and_outliers_not_every_point() -> None:
    spread = pd.DataFrame(
        {
            "Task": ["TE"] * 400 + ["SA"] * 400,
            "Model": [f"m{i}" for i in range(400)] * 2,
            "Spread": [float(i % 20) for i in range(399)] + [95.0] + [float(i % 10) for i in range(400)],
        }
    )
    figure = plots.prompt_sensitivity(spread)
    box, far = figure.data
    assert list(box.x) == ["TE", "SA"] and box.median[0] == 9.5 and box.upperfence[0] == 19.0
    assert list(far.y) == [95.0] and list(far.text) == ["m399"]  # the one point beyond the whiskers


def test_a_board_of_more_runs_than_a_dropdown_lists_offers_the_best_and_the_chosen(
    tmp_path, monkeypatch
) -> None:
    from eval_queue.storage import LocalStorage
    from leaderboard.tracks.evalita.app import views
    from leaderboard.tracks.evalita.app.records import load_results
    from leaderboard.tracks.evalita.app.views import ranking
    from tests.support.synthetic.results import write_synthetic_results

    write_synthetic_results(tmp_path, 8)
    board = views.Board(load_results(LocalStorage(tmp_path)))
    assert views.shown_choices(board) == tuple(board.choices())  # few runs: every one
    monkeypatch.setattr(ranking, "MAX_CHOICES", 4)
    best = set(views.top_runs(board, 2, 0)) | set(views.top_runs(board, 2, 5))
    worst = views.top_runs(board, 8, 0)[-1]
    shown = views.shown_choices(board, [worst])
    assert {key for _, key in shown} == best | {worst}
    assert [c for c in board.choices() if c in shown] == list(shown)  # the dropdown's order kept
