"""``rescore`` and intervals: an outdated ``uncertainty`` block is recomputed from the run's
per-item file and rewritten in place, and the app tiers the run again.

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
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.core.summary import UncertaintySummary
from leaderboard.tracks.evalita.app.results import load_results
from leaderboard.tracks.evalita.app.tables import TIER_COLUMN, ranking_table
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
    assert out.count(f"intervals ({METHOD_VERSION}) would be written") == 4, out
    assert _raw(root) == before  # a dry run writes nothing

    assert rescore.main(["--all"]) == rescore.EXIT_OK
    out = capsys.readouterr().out
    assert out.count(f"intervals ({METHOD_VERSION}) written") == 4, out
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
    assert "0 written" in out and "intervals" not in out


def test_an_outdated_block_without_its_per_item_file_is_kept_and_exits_1(
    store: tuple[Path, dict[Path, dict]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = store
    [items, *_] = sorted((root / "details").rglob("items.parquet"))
    items.unlink()
    before = _raw(root)

    assert rescore.main(["--all"]) == rescore.EXIT_PROBLEMS
    out = capsys.readouterr().out
    assert out.count("outdated intervals kept (no per-item file") == 1, out
    assert "1 with outdated intervals kept" in out
    after = _raw(root)
    kept = [p for p in after if after[p]["uncertainty"] == before[p]["uncertainty"]]
    assert len(kept) == 1  # the three others were refreshed


def test_only_the_lm_eval_set_refreshes_the_file_block(
    store: tuple[Path, dict[Path, dict]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = store
    before = _raw(root)
    rescore.main(["--all", "--metric-set", "as-specified"])
    assert "intervals (" not in capsys.readouterr().out
    assert all(raw["uncertainty"] == before[p]["uncertainty"] for p, raw in _raw(root).items())
