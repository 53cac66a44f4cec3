"""The metric switch: one scoring path, parametrised by the set; the URL keeps it; export carries both.

The UI store's six paper LLMs carry made-up as-specified blocks (``tests.rescore.blocks``: WIC
and HS reversed); its other runs have none, as runs published before issue 20.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from eval_queue.storage import LocalStorage
from leaderboard.core.numbers import percent
from leaderboard.state import PageState
from leaderboard.tracks.evalita.app import tables, views
from leaderboard.tracks.evalita.app.records import load_results
from leaderboard.tracks.evalita.app.views.metrics import metrics_banner, rank_changes, rank_changes_markdown
from leaderboard.tracks.evalita.metric_sets import MetricSet
from leaderboard.tracks.evalita.metrics import score_task
from leaderboard.tracks.evalita.schema import ResultsFile
from leaderboard.tracks.evalita.vocabulary import Aggregate
from tests.paper_tables import PAPER_ORG
from tests.rescore.blocks import made_up_block, made_up_score
from tests.support.entry_point import run_main
from tests.support.synthetic.results import write_synthetic_results
from tests.ui.conftest import REPO
from tests.ui.store import SAMPLE_MODEL, XSS_MODEL, write_results

LLM5 = f"{PAPER_ORG}/LLM-5"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("switch")
    write_results(root / "results", root / "details")
    return root


@pytest.fixture(scope="module")
def board(store: Path) -> views.Board:
    return views.Board(load_results(LocalStorage(store / "results")))


def _avg(board: views.Board, model: str, setting: str = "0") -> float:
    table = views.ranking_view(board, setting, views.RankingFilters()).table.set_index(views.MODEL)
    return float(table.loc[model, views.AVG])


def test_the_as_specified_board_is_the_same_tables_over_the_other_scores(board: views.Board) -> None:
    specified = board.with_metrics("as-specified")
    assert specified.metrics is MetricSet.AS_SPECIFIED and board.metrics is MetricSet.LM_EVAL
    assert specified.with_metrics("lm-eval") is board and board.with_metrics("as-specified") is specified
    expected = tables.ranking_table(board.loaded.for_metric_set("as-specified"), 0).set_index("model")
    lm_eval = tables.ranking_table(board.loaded, 0).set_index("model")

    assert _avg(specified, LLM5) == pytest.approx(expected.loc[LLM5, "avg_cps"])
    assert _avg(specified, LLM5) != pytest.approx(_avg(board, LLM5))
    for task in ("te", "sa", "faq", "at"):  # the same in both sets
        assert expected.loc[LLM5, f"{task}_cps"] == lm_eval.loc[LLM5, f"{task}_cps"]
    # A changed task is scored from the block, through the same §5 functions.
    record = next(r for r in board.loaded.records if r.key[0] == LLM5 and r.key[3] == 0)
    scores = {p: made_up_score("wic", s) for p, s in record.prompt_scores["wic"].items()}
    from leaderboard.tracks.evalita.definition import TASKS

    assert expected.loc[LLM5, "wic_cps"] == percent(score_task(TASKS["wic"], scores).cps)


def test_a_run_without_as_specified_scores_is_shown_unranked_and_said_so(board: views.Board) -> None:
    specified = board.with_metrics("as-specified")
    rows = specified.rows(0).set_index("model")
    assert pd.isna(rows.loc[XSS_MODEL, "avg_cps"]) and pd.isna(rows.loc[XSS_MODEL, "_rank"])
    assert pd.isna(rows.loc[XSS_MODEL, "wic_cps"]) and not pd.isna(rows.loc[XSS_MODEL, "te_cps"])
    assert board.rows(0).set_index("model").loc[XSS_MODEL, "_rank"] > 0
    banner = metrics_banner(specified, "0")
    assert "Metrics as specified" in banner and "2 run(s) have no as-specified scores" in banner
    assert metrics_banner(board, "0") == ""


def test_the_task_page_names_the_models_whose_rank_the_metrics_change(board: views.Board) -> None:
    changes = rank_changes(board, "wic", 0)
    lm_eval = views.task_models_view(board, "wic", 0).set_index(views.MODEL)["CPS"]
    specified = views.task_models_view(board.with_metrics("as-specified"), "wic", 0).set_index(views.MODEL)[
        "CPS"
    ]
    assert changes  # WIC reversed
    for change in changes:
        before = int((lm_eval > lm_eval[change.run.model]).sum()) + 1 if change.lm_eval else None
        assert change.lm_eval == before
        if change.as_specified is not None:
            assert change.as_specified == int((specified > specified[change.run.model]).sum()) + 1
    text = rank_changes_markdown(board, "wic", 0)
    assert text.startswith("**Ranks change with the metrics:**") and "F1\\-macro" in text  # escaped
    assert "LLM\\-5 6 → 1" in text
    assert "&lt;img src=x" in text and "<img" not in text  # a run without the block loses its rank, as text
    assert "scored alike" in rank_changes_markdown(board, "te", 0)


def test_the_switch_is_kept_in_the_link() -> None:
    state, notices = PageState.from_query(
        {"tab": "task", "metrics": "as-specified"}, tabs=("ranking", "task")
    )
    assert state.get("metrics") == "as-specified" and not notices
    assert "metrics=as-specified" in state.to_query()
    assert "metrics" not in PageState().to_query()
    state, notices = PageState.from_query({"metrics": "<b>paper</b>"})
    assert state.get("metrics") == "lm-eval"
    assert [n.field for n in notices] == ["metrics"]
    assert PageState().with_value("metrics", "as-specified").control_value("metrics") == "as-specified"


def _export(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m leaderboard export --format json ARGS``, its ``main`` run in this process
    (tests/support/entry_point.py; test_export_cli.py runs the real command line too)."""
    from leaderboard.__main__ import main

    env = {**os.environ, "EVALITA_DATA_DIR": str(store), "PYTHONPATH": str(REPO)}
    env = {k: v for k, v in env.items() if not k.startswith("EVALITA_") or k == "EVALITA_DATA_DIR"}
    return run_main(main, ["export", "--format", "json", *args], env)


def test_export_carries_both_sets(store: Path) -> None:
    rows = {}
    for metrics in ("lm-eval", "as-specified"):
        done = _export(store, "--fewshot", "0", "--metrics", metrics)
        assert done.returncode == 0, done.stderr
        rows[metrics] = {row["model"]: row for row in json.loads(done.stdout)}
        assert {row["metrics"] for row in rows[metrics].values()} == {metrics}
    default = _export(store, "--fewshot", "0")
    assert {r["model"]: r["avg_cps"] for r in json.loads(default.stdout)} == {
        m: r["avg_cps"] for m, r in rows["lm-eval"].items()
    }
    assert rows["lm-eval"][LLM5]["te_cps"] == rows["as-specified"][LLM5]["te_cps"]
    assert rows["lm-eval"][LLM5]["wic_cps"] != rows["as-specified"][LLM5]["wic_cps"]
    assert "as-specified scores" in _export(store, "--metrics", "as-specified").stderr

    both = _export(store, "--fewshot", "0", "--metrics", "both", "--include-noncomparable")
    table = json.loads(both.stdout)
    assert [r["metrics"] for r in table] == ["lm-eval"] * (len(table) // 2) + ["as-specified"] * (
        len(table) // 2
    )
    assert {r["model"] for r in table} >= {LLM5, SAMPLE_MODEL}
    assert "have no as-specified scores yet" in both.stderr


def test_export_refuses_metrics_a_track_does_not_have(store: Path) -> None:
    done = _export(store, "--track", "judge", "--metrics", "as-specified")
    assert done.returncode == 2 and "judge track" in done.stderr
    assert _export(store, "--metrics", "as-published").returncode == 2


def test_prompt_export_in_each_set(store: Path) -> None:
    done = _export(store, "--prompts", "--fewshot", "0", "--metrics", "as-specified")
    rows = [r for r in json.loads(done.stdout) if r["task"] == "wic"]
    assert len(rows) == 6 and all(r["metrics"] == "as-specified" for r in rows)
    assert Aggregate.CPS.value in rows[0]


def test_a_set_block_without_intervals_shows_none_of_the_lm_eval_ones_and_they_come_back_with_the_switch(
    tmp_path: Path,
) -> None:
    write_synthetic_results(tmp_path, 2)
    storage = LocalStorage(tmp_path)
    for path in storage.list(""):
        if path.endswith(".json"):
            results = ResultsFile.from_json(storage.read(path), path)
            storage.write(
                path, results.model_copy(update={"metric_sets": [made_up_block(results)]}).to_json()
            )
    loaded = load_results(storage)
    assert loaded.records and all(r.uncertainty is not None for r in loaded.records)
    specified = loaded.for_metric_set(MetricSet.AS_SPECIFIED)
    assert specified.missing_in(MetricSet.AS_SPECIFIED) == ()  # every run has its as-specified scores
    # A block without intervals of its own (made up, as older ones): no interval of the lm-eval
    # scores in its place, in the record and its rows (tests/rescore/test_rescore_intervals.py:
    # a rescored block's own intervals are shown).
    assert all(r.uncertainty is None for r in specified.records)
    assert all(row[5:] == (None, None) for r in specified.records for row in r.score_rows)
    back = specified.for_metric_set(MetricSet.LM_EVAL)
    assert back.records == loaded.records
