"""``rescore`` and intervals: an outdated ``uncertainty`` block is recomputed from the run's
per-item file and rewritten in place, and the app tiers the run again; the as-specified block
gets the intervals of its own scores, and the as-specified view shows them, with tiers.

The store is the synthetic one with details (:mod:`tests.support.synthetic.details`) and, as
the worker writes them, each run's per-item file and intervals; the blocks are then made to
look as they did before the calibrated method (no method version, no tie-aware draws).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from backend.tracks.evalita import rescore
from backend.tracks.evalita.run import specified_block
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.core.contents_io import rebuild
from leaderboard.core.numbers import percent
from leaderboard.core.summary import UncertaintySummary
from leaderboard.tracks.evalita.app import tables, views
from leaderboard.tracks.evalita.app.contents import records_of_table
from leaderboard.tracks.evalita.app.records import load_results
from leaderboard.tracks.evalita.app.tables import TIER_COLUMN, ranking_table
from leaderboard.tracks.evalita.app.views import ranking
from leaderboard.tracks.evalita.app.views.metrics import metrics_banner
from leaderboard.tracks.evalita.cps_intervals import METHOD_VERSION
from leaderboard.tracks.evalita.schema import ResultsFile
from leaderboard.tracks.evalita.uncertainty import MEAN_CPS_FIGURE, MEAN_CPS_TIE_FIGURE
from tests.support.synthetic.details import old_style, write_synthetic_store


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[Path, dict]]:
    """A store whose four runs carry an old-style block; returns it and the current blocks."""
    root = tmp_path / "eval-data"
    write_synthetic_store(root, n_models=2, items=6, per_item=True)
    current = {}
    for path in sorted((root / "results").rglob("results_*.json")):
        results = ResultsFile.from_json(path.read_bytes(), str(path))
        assert results.uncertainty is not None
        current[path] = results.uncertainty.model_dump(mode="json")
        path.write_bytes(results.model_copy(update={"uncertainty": old_style(results.uncertainty)}).to_json())
    monkeypatch.setenv("EVALITA_DATA_DIR", str(root))
    for name in ("EVALITA_RESULTS_REPO", "EVALITA_REQUESTS_REPO"):
        monkeypatch.delenv(name, raising=False)
    return root, current


def _raw(root: Path) -> dict[Path, dict]:
    return {p: json.loads(p.read_text(encoding="utf-8")) for p in sorted((root / "results").rglob("*.json"))}


def _tiers(root: Path) -> list[object]:
    loaded = load_results(open_stores(Settings(data_dir=root)).results)
    return ranking_table(loaded)[TIER_COLUMN].tolist()


def test_rescore_rewrites_an_outdated_uncertainty_block_and_the_run_gets_a_tier_again(
    store: tuple[Path, dict[Path, dict]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, current = store
    before = _raw(root)
    assert all(pd.isna(t) for t in _tiers(root))  # old blocks: no tier

    assert rescore.main(["--all", "--dry-run"]) == rescore.EXIT_OK
    out = capsys.readouterr().out
    assert out.count(f"; lm-eval intervals ({METHOD_VERSION}) would be written") == 4, out
    assert _raw(root) == before  # a dry run writes nothing

    assert rescore.main(["--all"]) == rescore.EXIT_OK
    out = capsys.readouterr().out
    assert out.count(f"; lm-eval intervals ({METHOD_VERSION}) written") == 4, out
    for path, raw in _raw(root).items():
        assert raw["tasks"] == before[path]["tasks"]  # the harness's numbers, untouched
        block = UncertaintySummary.model_validate(raw["uncertainty"])
        assert METHOD_VERSION in block.method
        assert {MEAN_CPS_FIGURE, MEAN_CPS_TIE_FIGURE} <= set(block.draws)
        # What the worker computes from the same per-item file, to the last bit.
        assert raw["uncertainty"] == current[path]
    tiers = _tiers(root)
    assert len(tiers) == 4 and all(isinstance(t, int) and t >= 1 for t in tiers), tiers

    assert rescore.main(["--all"]) == rescore.EXIT_OK  # idempotent: a current block is left alone
    out = capsys.readouterr().out
    assert "0 written" in out and "intervals (" not in out


def test_a_current_block_without_per_task_draws_gets_them_so_a_custom_average_has_an_interval(
    store: tuple[Path, dict[Path, dict]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, current = store
    for path, block in current.items():  # a block of the current method, written before issue 32
        raw = json.loads(path.read_text(encoding="utf-8"))
        raw["uncertainty"] = {
            **block,
            "draws": {k: v for k, v in block["draws"].items() if k in (MEAN_CPS_FIGURE, MEAN_CPS_TIE_FIGURE)},
        }
        path.write_text(json.dumps(raw), encoding="utf-8")
    board = views.Board(load_results(open_stores(Settings(data_dir=root)).results))
    shown = views.ranking_view(board, "0", views.RankingFilters(average_over=("te", "sa"))).table
    assert (shown[ranking.CUSTOM_CI] == views.NO_INTERVAL).all()  # no per-task draws: "—"

    assert rescore.main(["--all"]) == rescore.EXIT_OK
    out = capsys.readouterr().out
    assert out.count(f"; lm-eval intervals ({METHOD_VERSION}) written") == 4, out
    for path, raw in _raw(root).items():
        assert raw["uncertainty"] == current[path]  # what the worker writes, to the last bit
    board = views.Board(load_results(open_stores(Settings(data_dir=root)).results))
    shown = views.ranking_view(board, "0", views.RankingFilters(average_over=("te", "sa"))).table
    assert (shown[ranking.CUSTOM_CI] != views.NO_INTERVAL).all()
    assert rescore.main(["--all"]) == rescore.EXIT_OK  # and a second pass writes nothing
    assert "0 written" in capsys.readouterr().out


def test_an_outdated_block_without_its_per_item_file_is_kept_and_exits_1(
    store: tuple[Path, dict[Path, dict]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = store
    [items, *_] = sorted((root / "details").rglob("items.parquet"))
    items.unlink()
    before = _raw(root)

    assert rescore.main(["--all"]) == rescore.EXIT_PROBLEMS
    out = capsys.readouterr().out
    assert out.count("outdated lm-eval intervals kept (no per-item file") == 1, out
    assert "1 with outdated lm-eval intervals kept" in out
    after = _raw(root)
    kept = [p for p in after if after[p]["uncertainty"] == before[p]["uncertainty"]]
    assert len(kept) == 1  # the three others were refreshed


def test_only_the_lm_eval_set_refreshes_the_file_block(
    store: tuple[Path, dict[Path, dict]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = store
    before = _raw(root)
    rescore.main(["--all", "--metric-set", "as-specified"])
    assert "lm-eval intervals" not in capsys.readouterr().out
    assert all(raw["uncertainty"] == before[p]["uncertainty"] for p, raw in _raw(root).items())


# --------------------------------------------------------------------------- the as-specified set's intervals

AS_SPECIFIED = "as-specified"


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store as the worker publishes it (current intervals), without as-specified blocks yet."""
    root = tmp_path / "eval-data"
    write_synthetic_store(root, n_models=2, items=6, per_item=True)
    monkeypatch.setenv("EVALITA_DATA_DIR", str(root))
    for name in ("EVALITA_RESULTS_REPO", "EVALITA_REQUESTS_REPO"):
        monkeypatch.delenv(name, raising=False)
    return root


def _board(root: Path, metrics: str = AS_SPECIFIED) -> views.Board:
    return views.Board(load_results(open_stores(Settings(data_dir=root)).results)).with_metrics(metrics)


def _shown(root: Path) -> pd.DataFrame:
    return views.ranking_view(_board(root), "0", views.RankingFilters()).table


def test_a_rescored_run_has_as_specified_intervals_and_tiers(
    fresh: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rescore.main(["--all"]) == rescore.EXIT_OK
    out = capsys.readouterr().out
    assert (
        out.count(f"as-specified/2 written (wic, hs, ls, ner, re, sum), intervals ({METHOD_VERSION}) written")
        == 4
    )
    differs = 0
    for raw in _raw(fresh).values():
        [block] = raw["metric_sets"]
        own = UncertaintySummary.model_validate(block["uncertainty"])
        lm_eval = UncertaintySummary.model_validate(raw["uncertainty"])
        assert METHOD_VERSION in own.method and {MEAN_CPS_FIGURE, MEAN_CPS_TIE_FIGURE} <= set(own.draws)
        assert set(own.intervals) == set(lm_eval.intervals)  # every prompt, every task CPS, the mean
        # The tasks both sets score alike: the same items, the same draws, the same intervals.
        for task in ("te", "sa", "faq", "at"):
            shared = [f for f in lm_eval.intervals if f.startswith(f"tasks/{task}/")]
            assert all(own.intervals[f] == lm_eval.intervals[f] for f in shared), task
        assert own.draws[MEAN_CPS_FIGURE].key == lm_eval.draws[MEAN_CPS_FIGURE].key  # paired
        differs += own.intervals["tasks/ner/cps"] != lm_eval.intervals["tasks/ner/cps"]
    assert differs, "the as-specified NER intervals are those of its own metric"
    table = _shown(fresh)
    assert len(table) == 2
    assert all(text != views.NO_INTERVAL for text in table[views.CI])
    assert all(isinstance(t, int) and t >= 1 for t in table[views.TIER]), table[views.TIER]
    # The numbers shown are the block's, on the page's 0–100 scale.
    loaded = _board(fresh).loaded
    ranking = tables.ranking_table(loaded, 0).set_index("model")
    for record in loaded.records:
        if record.key[3] == 0:
            low, _ = record.uncertainty.intervals[MEAN_CPS_FIGURE]
            assert ranking.loc[record.key[0], "avg_cps_low"] == percent(low)
    banner = metrics_banner(_board(fresh), "0")
    assert "without intervals" not in banner and "shows none" not in banner
    # The app's cold start (the contents table's record_json) keeps the block's intervals.
    storage = open_stores(Settings(data_dir=fresh)).results
    cold = records_of_table(rebuild(storage).table)
    assert len(cold) == 4
    for path, (_, record) in cold.items():
        raw = json.loads(storage.read(path))
        shown = record.for_metric_set(AS_SPECIFIED).uncertainty
        assert shown is not None and shown.model_dump(mode="json") == raw["metric_sets"][0]["uncertainty"]


def test_an_older_as_specified_block_shows_its_scores_with_dashes_until_rescore_adds_intervals(
    fresh: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rescore.main(["--all", "--metric-set", AS_SPECIFIED]) == rescore.EXIT_OK
    for path, raw in _raw(fresh).items():  # as written before the set had intervals
        del raw["metric_sets"][0]["uncertainty"]
        path.write_text(json.dumps(raw, indent=2, ensure_ascii=False), encoding="utf-8")
    capsys.readouterr()
    before = _raw(fresh)

    table = _shown(fresh)
    assert len(table) == 2 and table[views.AVG].notna().all()  # the scores are shown
    assert list(table[views.CI]) == [views.NO_INTERVAL] * 2
    assert table[views.TIER].isna().all()
    assert "2 run(s) have as-specified scores without intervals" in metrics_banner(_board(fresh), "0")

    assert rescore.main(["--all", "--dry-run"]) == rescore.EXIT_OK
    out = capsys.readouterr().out
    assert (
        out.count(
            f"as-specified/2 unchanged (wic, hs, ls, ner, re, sum), intervals ({METHOD_VERSION}) would be written"
        )
        == 4
    )
    assert _raw(fresh) == before

    assert rescore.main(["--all"]) == rescore.EXIT_OK
    out = capsys.readouterr().out
    assert (
        out.count(
            f"as-specified/2 unchanged (wic, hs, ls, ner, re, sum), intervals ({METHOD_VERSION}) written"
        )
        == 4
    )
    for path, raw in _raw(fresh).items():
        [block] = raw["metric_sets"]
        old = before[path]["metric_sets"][0]
        assert {k: v for k, v in block.items() if k != "uncertainty"} == old  # its scores untouched
        assert raw["tasks"] == before[path]["tasks"]
        assert METHOD_VERSION in block["uncertainty"]["method"]
    table = _shown(fresh)
    assert all(text != views.NO_INTERVAL for text in table[views.CI])
    assert table[views.TIER].notna().all()
    assert rescore.main(["--all"]) == rescore.EXIT_OK and "0 written" in capsys.readouterr().out


def test_the_worker_publishes_the_as_specified_block_with_the_intervals_rescore_computes(
    fresh: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``specified_block`` (what the worker publishes) from a run's details and per-item file:
    the block and intervals that ``rescore`` writes from the same stored files."""
    [path, *_] = sorted((fresh / "results").rglob("results_*.json"))
    results = ResultsFile.from_json(path.read_bytes(), str(path))
    folder = fresh / "details" / str(results.run.details_path)
    details = {p.name: p.read_bytes() for p in folder.glob("*.jsonl")}
    items = (folder / "items.parquet").read_bytes()

    published = specified_block(results.tasks, details, results.run.finished_at, items)
    assert rescore.main([str(path.relative_to(fresh / "results"))]) == rescore.EXIT_OK
    [stored] = _raw(fresh)[path]["metric_sets"]
    assert published.uncertainty is not None
    assert published.uncertainty.model_dump(mode="json") == stored["uncertainty"]
    assert published.model_dump(mode="json", include={"tasks", "skipped"}) == {
        k: stored[k] for k in ("tasks", "skipped")
    }
    # Without a per-item file: the block, without intervals (as the lm-eval scores then have none).
    assert specified_block(results.tasks, details, results.run.finished_at).uncertainty is None
    # Statistics that do not reproduce the published scores: no intervals, and a warning.
    wrong = {**details, "te_p1.jsonl": details["te_p2.jsonl"]}
    assert specified_block(results.tasks, wrong, results.run.finished_at, items).uncertainty is None
    assert "no as-specified intervals for this run" in caplog.text
