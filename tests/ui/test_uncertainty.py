"""Every figure with its uncertainty in the app: intervals, tiers, "A vs B", and "—" without data.

The store: four synthetic models whose results carry the worker's ``uncertainty`` block and whose
per-item files sit in the details store (``tests.ui.store.write_synthetic_results``), beside the
paper's six dev LLMs, whose files have no per-item data (as results imported from elsewhere).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from eval_queue.settings import Settings
from eval_queue.vocabulary import RunRef
from leaderboard.__main__ import main as leaderboard_main
from leaderboard.state import PageState
from leaderboard.tracks.evalita.app import tables, views
from leaderboard.tracks.evalita.app.tab.compare import A_FIELD, B_FIELD, CompareTab, compare_state
from leaderboard.tracks.evalita.app.views.task import prompt_interval_column
from leaderboard.tracks.evalita.vocabulary import Aggregate, Setting
from leaderboard.ui.context import AppContext
from tests.paper_tables import write_paper_store
from tests.support.synthetic.results import synthetic_model, write_synthetic_results

PAPER = RunRef("paper-dev/LLM-2", "main", "bfloat16")
SYNTHETIC = 4


def _ref(i: int) -> RunRef:
    return RunRef(synthetic_model(i), f"{i:040x}", "bfloat16")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("uncertainty-store")
    write_synthetic_results(root / "results", SYNTHETIC, details_root=root / "details")
    write_paper_store(root / "results")
    return root


@pytest.fixture(scope="module")
def ctx(data_dir: Path) -> AppContext:
    return AppContext.from_settings(Settings(data_dir=data_dir))


@pytest.fixture(scope="module")
def board(ctx: AppContext) -> views.Board:
    return views.current_board(ctx)


def test_the_ranking_shows_the_mean_cps_interval_and_the_tier_and_a_dash_without_per_item_data(board):
    table = views.ranking_view(board, Setting.ZERO, views.RankingFilters()).table.set_index(views.MODEL)
    for i in range(SYNTHETIC):
        row = table.loc[synthetic_model(i)]
        low, high = (float(x) for x in row[views.CI].split("–"))
        assert low < high and isinstance(row[views.TIER], int) and row[views.TIER] >= 1
    paper = table.loc[PAPER.model]
    assert paper[views.CI] == views.NO_INTERVAL and paper[views.TIER] is None
    assert isinstance(paper[views.RANK], int)  # ranked as before: the tier says which ranks are real
    # A tier is 1 + the runs significantly better: 1 for the runs nobody beats, at most N.
    tiers = [t for t in table.sort_values(views.RANK)[views.TIER] if t is not None]
    assert min(tiers) == 1 and max(tiers) <= len(tiers)


def test_the_task_page_says_the_smallest_gap_the_data_can_detect(board):
    text = views.detectable_gaps_markdown(board, "wic", 0)
    assert "Smallest gap the data can detect" in text and "WIC CPS" in text and "mean CPS" in text
    # 2.80 × √2 × the median standard error (interval width / 3.92) of the comparable runs.
    rows = board.rows(0)
    rows = rows[rows["comparable"].astype(bool)] if rows["comparable"].any() else rows
    widths = (rows["wic_cps_high"] - rows["wic_cps_low"]).dropna().astype(float)
    expected = 2.8016 * 2**0.5 * widths.median() / 3.92
    assert f"**{expected:.1f} points**" in text


def test_the_interval_and_tier_are_those_the_tables_module_computes(board):
    shown = views.ranking_view(board, Setting.FIVE, views.RankingFilters()).table.set_index(views.MODEL)
    expected = tables.ranking_table(board.loaded, 5).set_index("model")
    checked = 0
    for i in range(SYNTHETIC):
        row = expected.loc[synthetic_model(i)]
        low, high = row[tables.low_column("avg_cps")], row[tables.high_column("avg_cps")]
        assert shown.loc[synthetic_model(i), views.CI] == f"{low:.2f}–{high:.2f}"
        assert shown.loc[synthetic_model(i), views.TIER] == row[tables.TIER_COLUMN]
        checked += 1
    assert checked == SYNTHETIC


def test_both_settings_show_each_settings_interval_and_tier(board):
    table = views.ranking_view(board, Setting.BOTH, views.RankingFilters()).table.set_index(views.MODEL)
    row = table.loc[synthetic_model(0)]
    assert "–" in row[f"{views.CI} 0-shot"] and "–" in row[f"{views.CI} 5-shot"]
    assert row[f"{views.TIER} 0-shot"] >= 1 and row[f"{views.TIER} 5-shot"] >= 1
    assert table.loc[PAPER.model, f"{views.CI} 0-shot"] == views.NO_INTERVAL


def test_the_task_page_shows_each_prompt_scores_interval_and_the_cps_interval(board):
    table = views.task_models_view(board, "ner", 0).set_index(views.MODEL)
    mine = table.loc[synthetic_model(1)]
    for prompt in ("p1", "p2"):
        low, high = (float(x) for x in mine[prompt_interval_column(prompt)].split("–"))
        assert 0 <= low <= high <= 100
    assert "–" in mine[f"CPS {views.CI}"]
    paper = table.loc[PAPER.model]
    assert paper[prompt_interval_column("p1")] == views.NO_INTERVAL == paper[f"CPS {views.CI}"]
    assert isinstance(paper["p1"], float)  # the score itself is shown as always


def test_the_model_page_shows_each_prompt_score_with_its_interval(board):
    prompts = views.model_prompt_table(board, _ref(2), 0).set_index("Task")
    assert (
        pd.Series(prompts.loc["WIC", ["p1", "p2"]]).str.fullmatch(r"\d+\.\d\d \[\d+\.\d\d–\d+\.\d\d\]").all()
    )
    old = views.model_prompt_table(board, PAPER, 0).set_index("Task")
    assert "[" not in old.loc["WIC", "p1"]


def test_the_ranking_csv_carries_the_interval_and_the_tier(board):
    view = views.ranking_view(board, Setting.ZERO, views.RankingFilters())
    rows = list(csv.DictReader(io.StringIO(views.to_csv(view.table))))
    by_model = {row[views.MODEL]: row for row in rows}
    assert by_model[synthetic_model(0)][views.TIER].isdigit()
    assert "–" in by_model[synthetic_model(0)][views.CI]
    assert by_model[PAPER.model][views.CI] == views.NO_INTERVAL and by_model[PAPER.model][views.TIER] == ""


def test_export_carries_tiers_and_intervals_and_leaves_them_empty_without_data(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("EVALITA_DATA_DIR", str(data_dir))
    assert leaderboard_main(["export", "--fewshot", "0", "--format", "csv"]) == 0
    rows = {row["model"]: row for row in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    mine, paper = rows[synthetic_model(3)], rows[PAPER.model]
    assert mine["tier"].isdigit()
    low, high, score = (float(mine[c]) for c in ("avg_cps_low", "avg_cps_high", "avg_cps"))
    assert low < high and abs(score - (low + high) / 2) < 10
    assert float(mine["ner_cps_low"]) <= float(mine["ner_cps_high"])
    assert paper["tier"] == paper["avg_cps_low"] == paper["ner_cps_high"] == ""
    assert paper["avg_cps"] == "41.14"  # every older column unchanged


def test_a_vs_b_gives_a_verdict_per_task_the_mean_and_the_items_that_differ(ctx, board):
    tab = CompareTab()
    state = compare_state(PageState(), _ref(0).key, _ref(1).key).with_values(task="te")
    rendered = tab.render(ctx, state)
    verdict = str(rendered.values["verdict"])
    assert "better on" in verdict and "no difference on" in verdict
    table = rendered.values["table"].frame  # type: ignore[attr-defined]
    assert list(table["Task"]) == [
        views.task_label(t) for t in ("wic", "te", "sa", "hs", "faq", "at", "ls", "ner", "re", "sum")
    ]
    assert table["Verdict"].str.match(r"(A \(|B \(|no difference)").all()
    assert table["Δ 95% CI"].str.fullmatch(r"\[[+-]\d+\.\d\d, [+-]\d+\.\d\d\]").all()
    assert "Mean CPS over the ten tasks" in str(rendered.values["mean"])
    items = rendered.values["disagreements"].frame  # type: ignore[attr-defined]
    assert (
        list(items["Prompt"]) == ["p1", "p2", "p3", "p4", "p5", "p6"] and items["Items that differ"].sum() > 0
    )
    # The address names both runs: the link restores this comparison.
    assert rendered.state is not None
    query = rendered.state.to_query()
    restored, notices = PageState.from_query(
        dict(pair.split("=", 1) for pair in query.split("&")),
        tabs=("ranking", "compare"),
        extra_fields=CompareTab.url_fields,
    )
    assert not notices and restored.get(A_FIELD) == _ref(0).key and restored.get(B_FIELD) == _ref(1).key


def test_a_run_against_itself_differs_nowhere(ctx):
    rendered = CompareTab().render(ctx, compare_state(PageState(), _ref(2).key, _ref(2).key))
    assert "two different runs" in str(rendered.values["verdict"])


def test_a_run_without_per_item_data_is_not_compared_and_the_page_says_why(ctx):
    rendered = CompareTab().render(ctx, compare_state(PageState(), _ref(0).key, PAPER.key))
    assert str(rendered.values["verdict"]).endswith("### —")
    assert "no per-item data" in str(rendered.values["note"]) and rendered.values["table"].frame.empty  # type: ignore[attr-defined]


def test_an_unknown_run_in_a_compare_link_falls_back_to_the_best_with_a_notice(ctx, board):
    state = compare_state(PageState(), "ghost|x|y", _ref(1).key)
    rendered = CompareTab().render(ctx, state)
    [notice] = rendered.notices
    assert notice.field == A_FIELD and notice.given == "ghost|x|y"
    best = views.run_of_key(board, views.top_runs(board, 1)[0])
    assert rendered.state is not None and rendered.state.get(A_FIELD) == best.key  # type: ignore[union-attr]


def test_a_vs_b_from_the_ranking_takes_the_first_two_rows_shown(ctx, board):
    from leaderboard.tracks.evalita.app.tab.ranking import compare_first_two

    state = PageState().with_values(search="bench-org", sort="model")
    opened = compare_first_two(ctx, state)
    assert opened.tab == "compare"
    assert (opened.get(A_FIELD), opened.get(B_FIELD)) == (_ref(0).key, _ref(1).key)


def test_a_vs_b_from_a_model_page_compares_it_with_the_next_run_in_the_ranking(ctx, board):
    from leaderboard.tracks.evalita.app.tab.model import _compare_with
    from leaderboard.tracks.evalita.app.views.compare import neighbour

    order = views.top_runs(board, 20, 0)
    first, second, last = (RunRef.parse(order[i]) for i in (0, 1, -1))
    assert neighbour(board, first, 0) == second  # the next one down
    assert neighbour(board, last, 0) == RunRef.parse(order[-2])  # the last: the one above
    opened = _compare_with(ctx, replace(PageState().with_values(model=first.key), tab="model"))
    assert (opened.tab, opened.get(A_FIELD), opened.get(B_FIELD)) == ("compare", first.key, second.key)


def test_the_about_page_says_what_is_estimated_what_an_interval_and_a_tier_are():
    from leaderboard.tracks.evalita.app.about import about_markdown
    from leaderboard.tracks.evalita.app.tab.ranking import TIER_SENTENCE

    text = " ".join(about_markdown().split())
    assert "**What is estimated.**" in text and "**95 % interval**" in text
    assert (
        "**A tier** is 1 + the number of runs significantly better than this one" in text and "Holm" in text
    )
    assert "**The smallest gap the data can detect.**" in text
    assert "1 + the number of runs significantly better than this one" in TIER_SENTENCE


def test_synthetic_store_files_carry_what_the_worker_writes(data_dir):
    results = sorted((data_dir / "results").rglob("results_*_0shot.json"))
    # The kept draws: the mean CPS's two sets (about 11 KB) and each task's first 200 resamples
    # (about 21 KB, for the custom average): a file stays small.
    assert results and os.path.getsize(results[0]) < 60_000
    assert len(list((data_dir / "details").rglob("items.parquet"))) == 2 * SYNTHETIC


@pytest.mark.parametrize("aggregate", [Aggregate.CPS])
def test_the_ranking_keeps_its_sort_and_rank_with_the_new_columns(board, aggregate):
    table = views.ranking_view(board, Setting.ZERO, views.RankingFilters(columns=(aggregate,))).table
    assert list(table.columns)[:5] == [views.RANK, views.MODEL, views.AVG, views.CI, views.TIER]
    ranked = [r for r in table[views.RANK] if r is not None]
    assert ranked == sorted(ranked)
