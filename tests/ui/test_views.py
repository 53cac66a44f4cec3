"""Pure display shaping: filters, ranks, the both-settings view, escaping, URL state, the queue."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from eval_queue.errors import MalformedFileError
from eval_queue.queue import QueueListing
from eval_queue.requests import EvalRequest, Status
from eval_queue.storage import LocalStorage
from eval_queue.vocabulary import RunRef
from leaderboard.core.schema import results_file_path
from leaderboard.state import PageState
from leaderboard.tracks.evalita.app import plots, tables, views
from leaderboard.tracks.evalita.app.records import SCORE_COLUMNS, load_results
from leaderboard.tracks.evalita.app.views.recipe import COST_FIELDS
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.vocabulary import Aggregate, Setting
from leaderboard.ui.common import HtmlTable
from tests.paper_tables import write_paper_store
from tests.ui.store import FINISHED_AT, SAMPLE_MODEL, XSS_MODEL, _results, write_results
from tests.ui.user_views_store import write_user_views_store

TABS = ("ranking", "task", "model", "plots", "submit", "about")


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> views.Board:
    root = tmp_path_factory.mktemp("views")
    write_results(root / "results", root / "details")
    return views.Board(load_results(LocalStorage(root / "results")))


def test_ranking_numbers_are_those_of_the_tables_module(board: views.Board) -> None:
    every = views.RankingFilters(
        columns=(Aggregate.CPS, Aggregate.MAXP, Aggregate.AVGP, Aggregate.BEST_PROMPT)
    )
    for setting in ("0", "5"):
        shown = views.ranking_view(board, setting, every).table.set_index(views.MODEL)
        expected = tables.ranking_table(board.loaded, int(setting))
        checked = 0
        for row in expected.to_dict("records"):
            assert shown.loc[row["model"], views.AVG] == pytest.approx(row["avg_cps"], nan_ok=True)
            for task in ("wic", "te", "sa", "hs", "faq", "at", "ls", "ner", "re", "sum"):
                label = views.task_label(task)
                assert shown.loc[row["model"], f"{label} CPS"] == pytest.approx(
                    row[f"{task}_cps"], nan_ok=True
                )
                best = row[f"{task}_best_prompt"]
                assert shown.loc[row["model"], f"{label} best prompt"] == ("" if pd.isna(best) else best)
                checked += 1
        assert checked >= 60


def test_rank_is_global_and_unranked_rows_come_last(board: views.Board) -> None:
    five = views.ranking_view(board, "5", views.RankingFilters()).table
    assert list(five[views.RANK])[:5] == [1, 2, 3, 4, 5]
    assert five.iloc[-1][views.MODEL] == "paper-dev/LLM-1" and five.iloc[-1][views.RANK] is None
    only = views.ranking_view(board, "0", views.RankingFilters(search="llm-3")).table
    assert list(only[views.RANK]) == [5]


def test_filters_by_type_size_and_precision(board: views.Board) -> None:
    pretrained = views.ranking_view(board, "0", views.RankingFilters(model_types=("pretrained",))).table
    assert list(pretrained[views.MODEL]) == [XSS_MODEL]
    small = views.ranking_view(board, "0", views.RankingFilters(sizes=("< 3B",))).table
    assert list(small[views.MODEL]) == [XSS_MODEL]
    none = views.ranking_view(board, "0", views.RankingFilters(precisions=("float32",))).table
    assert none.empty and list(none.columns)[:3] == [views.RANK, views.MODEL, views.AVG]


def test_column_chooser_picks_the_per_task_columns(board: views.Board) -> None:
    table = views.ranking_view(
        board, "0", views.RankingFilters(columns=(Aggregate.MAXP, Aggregate.BEST_PROMPT))
    ).table
    assert "TE MaxP" in table.columns and "TE best prompt" in table.columns and "TE CPS" not in table.columns


def test_sample_runs_are_hidden_then_marked_and_never_ranked(board: views.Board) -> None:
    hidden = views.ranking_view(board, "0", views.RankingFilters())
    assert SAMPLE_MODEL not in set(hidden.table[views.MODEL])
    shown = views.ranking_view(board, "0", views.RankingFilters(show_noncomparable=True))
    row = shown.table[shown.table[views.MODEL] == SAMPLE_MODEL].iloc[0]
    assert row[views.NOTE] == "sample data" and row[views.RANK] is None
    assert "not comparable" in shown.banner


def test_a_store_with_only_sample_runs_shows_them_under_a_banner(tmp_path: Path) -> None:
    results = _results(SAMPLE_MODEL, 0.4, data="sample")
    path = tmp_path / "results" / SAMPLE_MODEL / "results_x.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(results.to_json())
    board = views.Board(load_results(LocalStorage(tmp_path / "results")))
    view = views.ranking_view(board, "0", views.RankingFilters())
    assert list(view.table[views.MODEL]) == [SAMPLE_MODEL]
    assert "No comparable run yet" in view.banner and "sample" in view.banner
    side = views.prompt_side_view(board, "te", 0).set_index("Prompt")  # the same models as the table
    assert side.loc["p1", "MaxP"] == pytest.approx(40.0)
    assert view.table.iloc[0][views.NOTE] == "sample data"
    assert view.table.iloc[0][views.AVG] == pytest.approx(40.0)


def test_both_view_has_each_setting_and_the_difference(board: views.Board) -> None:
    table = views.ranking_view(board, "both", views.RankingFilters(search="LLM-2")).table
    row = table.iloc[0]
    assert (row["Avg CPS 0-shot"], row["Avg CPS 5-shot"], row["Avg CPS Δ"]) == (41.14, 54.0, 12.86)
    assert row["TE CPS Δ"] == pytest.approx(70.52 - 63.33)


def test_task_view_rows_come_from_the_tables_module(board: views.Board) -> None:
    models = views.task_models_view(board, "te", 0).set_index(views.MODEL)
    assert models.loc["paper-dev/LLM-5", "p2"] == 78.75
    assert models.loc["paper-dev/LLM-5", ["MaxP", "AvgP", "CPS", "Best prompt"]].tolist() == [
        78.75,
        70.08,
        71.93,
        "p2",
    ]
    side = views.prompt_side_view(board, "te", 0).set_index("Prompt")
    assert side.loc["p4", "MaxP"] == 74.75 and side.loc["p4", "Paper id"] == "p4"


def test_model_views(board: views.Board) -> None:
    run = RunRef("paper-dev/LLM-2", "main", "bfloat16")
    field = views.model_vs_field(board, run, 0).table.set_index("Task")
    assert field.loc["FAQ", "CPS"] == 53.30 and field.loc["FAQ", "Position"] == "1 / 7"
    settings = views.model_settings_view(board, run).set_index("Task")
    assert settings.loc["Average CPS", "Δ (5 − 0)"] == 12.86
    assert len(plots.model_vs_field(field.reset_index(), run.model).data) == 3


def test_model_run_metadata_comes_from_the_loaded_runs_without_reading_the_store(tmp_path: Path) -> None:
    write_results(tmp_path / "results", tmp_path / "details")
    board = views.Board(load_results(LocalStorage(tmp_path / "results")))
    shutil.rmtree(tmp_path / "results")  # the view must not go back to the files
    table = views.run_metadata_view(board, RunRef(XSS_MODEL, "abcdef1234567890", "bfloat16")).set_index(
        "Field"
    )
    assert list(table.columns) == ["0-shot"]
    shown = table["0-shot"].to_dict()
    assert shown["Harness"] == "lm-eval 0.4.13" and shown["Backend"] == "hf"
    assert shown["Hardware"] == "test CPU" and shown["Duration (s)"] == "12.5"
    assert shown["Started"] == shown["Finished"] == "2025-02-01T10:00:00Z"
    assert shown["Data"] == "hub" and shown["Limit (items per prompt)"] == "—" and shown["Batch size"] == "—"
    assert shown["Results file"] == results_file_path(_results(XSS_MODEL, 0.10), FINISHED_AT)
    both = views.run_metadata_view(board, RunRef("paper-dev/LLM-2", "main", "bfloat16"))
    assert list(both.columns) == ["Field", "0-shot", "5-shot"]
    nothing = views.run_metadata_view(board, None)
    # + the cost rows and the results file
    assert list(nothing.columns) == ["Field"] and len(nothing) == len(views.RUN_FIELDS) + len(COST_FIELDS) + 1


def test_user_text_is_inert_in_markdown_and_html() -> None:
    assert "<" not in views.md_text("<img src=x onerror=alert(1)>")
    assert views.md_text("[click](javascript:alert(1))").startswith("\\[click\\]\\(")
    assert views.md_text("it's") == "it&#x27;s"
    link = views.model_link('<img src=x onerror="alert(1)">')
    assert "<img" not in link and "&lt;img" in link and 'href="https://huggingface.co/%3Cimg' in link


def test_page_state_round_trips_and_ignores_junk() -> None:
    state = PageState(tab="plots").with_values(
        setting=Setting.BOTH,
        shots=Setting.FIVE,
        models=("a/b|main|bfloat16", "c/d|x|float16"),
        types=("pretrained",),
        search="llama",
        columns=(Aggregate.CPS, Aggregate.MAXP),
        all_runs=True,
    )
    query = dict(pair.split("=", 1) for pair in state.to_query().split("&"))
    assert PageState.from_query(query, tabs=TABS) == (state, [])
    assert PageState().to_query() == ""
    junk, notices = PageState.from_query(
        {"tab": "<script>", "setting": "7", "columns": "evil", "models": ",".join("abcdefgh")}, tabs=TABS
    )
    assert (junk.tab, junk.get("setting"), junk.get("columns"), len(junk.get("models"))) == (
        "ranking",
        "0",
        ("cps",),
        6,
    )
    assert [n.field for n in notices] == ["tab", "setting", "columns"]


def test_queue_view_orders_pending_and_escapes_problems() -> None:
    def request(model: str, status: Status, **extra) -> EvalRequest:
        return EvalRequest(model=model, submitted_time="2025-01-01T00:00:00Z", status=status, **extra)

    listing = QueueListing(
        requests=[
            request("o/a", Status.PENDING),
            request("o/b", Status.PENDING, submitted_by="x"),
            request(
                "o/r",
                Status.RUNNING,
                claimed_by="gpu-1",
                history=[{"time": "2025-01-01T10:00:00Z", "status": "RUNNING"}],
            ),
            request("o/f", Status.FAILED, error="boom <b>"),
        ],
        problems=[MalformedFileError("x/<b>.json", "bad *json*")],
    )
    view = views.queue_view(listing, datetime(2025, 1, 1, 11, 30, tzinfo=UTC))
    assert list(view.pending["Position"]) == [1, 2]
    assert view.running.iloc[0]["Worker"] == "gpu-1" and view.running.iloc[0]["Age"] == "1h 30m"
    assert view.failed.iloc[0]["Reason"] == "boom <b>"  # a table cell: rendered as text
    assert "<b>" not in view.problems and "\\*json\\*" in view.problems
    assert "2 pending" in view.summary


def test_csv_is_the_table_as_shown(board: views.Board) -> None:
    table = views.ranking_view(board, "0", views.RankingFilters(search="llm")).table
    text = views.to_csv(table)
    assert text.splitlines()[0].split(",")[:3] == [views.RANK, views.MODEL, views.AVG]
    assert len(text.splitlines()) == len(table) + 1
    assert pd.read_csv(__import__("io").StringIO(text))[views.AVG].tolist() == table[views.AVG].tolist()


def test_paper_store_alone_ranks_the_six_dev_llms(tmp_path: Path) -> None:
    write_paper_store(tmp_path)
    board = views.Board(load_results(LocalStorage(tmp_path)))
    table = views.ranking_view(board, "0", views.RankingFilters()).table
    assert table.iloc[0][views.MODEL] == "paper-dev/LLM-5" and table.iloc[0][views.AVG] == 45.57


def test_an_empty_store_renders_every_view(tmp_path: Path) -> None:
    board = views.Board(load_results(LocalStorage(tmp_path / "nothing")))
    for setting in ("0", "5", "both"):
        for show_all in (False, True):
            view = views.ranking_view(board, setting, views.RankingFilters(show_noncomparable=show_all))
            assert view.table.empty and view.total == 0 and views.MODEL in view.table.columns
    assert views.task_models_view(board, "te", 0).empty
    assert len(views.prompt_side_view(board, "te", 0)) == 6
    assert views.run_choices(board) == [] and views.top_runs(board, 3) == []
    assert views.sensitivity_data(board, 0).empty
    assert views.model_vs_field(board, RunRef("a/b", "main", "bfloat16"), 0).table["CPS"].isna().all()


def _spread_store(tmp_path: Path) -> views.Board:
    """One run whose TE prompts give MaxP 12.345 % and AvgP 12.334 %: 0.011 points apart, but
    12.35 − 12.33 = 0.02 once each is rounded for display."""
    from leaderboard.tracks.evalita.definition import get_task
    from leaderboard.tracks.evalita.schema import PromptScore

    results = _results("spread-org/spread-model", 0.5)
    prompts = [p.id for p in get_task("te").prompts]
    best, avg = 0.12345, 0.12334
    rest = (avg * len(prompts) - best) / (len(prompts) - 1)
    results.tasks["te"].prompts = {
        pid: PromptScore(score=best if i == 0 else rest) for i, pid in enumerate(prompts)
    }
    store = LocalStorage(tmp_path / "results")
    store.write(results_file_path(results, FINISHED_AT), results.to_json())
    return views.Board(load_results(store))


def test_prompt_sensitivity_is_taken_from_the_unrounded_scores_not_the_shown_maxp_and_avgp(
    tmp_path: Path,
) -> None:
    board = _spread_store(tmp_path)
    run = RunRef("spread-org/spread-model", "abcdef1234567890", "bfloat16")
    row = tables.ranking_table(board.loaded, 0).iloc[0]
    assert round(row["te_maxp"] - row["te_avgp"], 2) == 0.02  # what re-deriving from the display gave
    expected = row[tables.task_column("te", tables.Aggregate.SPREAD)]
    assert expected == 0.01
    settings = views.model_settings_view(board, run).set_index("Task")
    assert settings.loc["TE", "MaxP − AvgP 0-shot"] == expected
    spread = views.sensitivity_data(board, 0).set_index("Task")
    assert spread.loc["TE", "Spread"] == expected


def test_views_build_no_task_column_name_by_hand_and_look_runs_up_in_one_place() -> None:
    import inspect
    import re

    from leaderboard.tracks.evalita.app.views import labels, model, ranking, task
    from leaderboard.views import common, queue

    modules = (views, labels, common, ranking, task, model, queue)
    source = "".join(inspect.getsource(module) for module in modules)
    hand_built = re.findall(r'f"\{task(?:_id|\.id)\}_', source)
    assert hand_built == [], "use tables.task_column(task_id, Aggregate.X)"
    assert source.count('["revision"] == run.revision') == 1, "one run lookup helper"


def test_radar_leaves_a_gap_for_a_missing_task_and_says_so_never_zero() -> None:
    labels = ["WiC", "TE", "SA"]
    fig = plots.radar({"org/partial": [40.0, None, 60.0], "org/full": [10.0, 20.0, 30.0]}, labels)
    partial, full = fig.data
    assert list(partial.r) == [40.0, None, 60.0, 40.0]  # a gap, not 0
    assert partial.connectgaps is False
    assert "TE" in partial.name and "no score" in partial.name
    assert partial.text[1].startswith("no score")
    assert full.name == "org/full" and None not in list(full.r)


def test_a_plain_table_shows_a_dash_for_every_missing_value_even_in_an_empty_column() -> None:
    frame = pd.DataFrame.from_records(
        [{"CPS 0-shot": 51.85, "CPS 5-shot": None}, {"CPS 0-shot": None, "CPS 5-shot": None}]
    )
    html = HtmlTable(frame).html()
    assert "None" not in html and html.count("—") == 3 and "51.85" in html


@pytest.mark.parametrize("store", ["paper", "user views"])
def test_the_scores_frame_keeps_its_text_as_categories_and_the_pages_show_the_same(
    tmp_path: Path, store: str
) -> None:
    """Issue 32's server memory: the scores frame's text columns are categoricals (a code a row,
    not a string a row); the task and model pages read from it are those of plain text columns."""
    if store == "paper":
        write_results(tmp_path / "results", tmp_path / "details")
    else:
        write_user_views_store(tmp_path / "results")
    compact, plain = (views.Board(load_results(LocalStorage(tmp_path / "results"))) for _ in range(2))
    text = [c for c in SCORE_COLUMNS if isinstance(compact.scores[c].dtype, pd.CategoricalDtype)]
    assert text == ["model", "revision", "precision", "task", "prompt"]
    # The frame as it was kept before: every text column a plain string column.
    plain.loaded.__dict__["scores"] = compact.scores.astype(dict.fromkeys(text, str))
    assert not any(isinstance(plain.scores[c].dtype, pd.CategoricalDtype) for c in SCORE_COLUMNS)
    pd.testing.assert_frame_equal(
        compact.scores.astype(dict.fromkeys(text, str)), plain.scores, check_exact=True
    )
    shown = 0
    for task in SUITE:
        for num_fewshot in (0, 5):
            for noncomparable in (False, True):
                mine = views.task_models_view(compact, task.id, num_fewshot, noncomparable)
                theirs = views.task_models_view(plain, task.id, num_fewshot, noncomparable)
                pd.testing.assert_frame_equal(mine, theirs, check_exact=True)
                shown += len(mine)
    assert shown > 0
    runs = compact.runs[list(RunRef.COLUMNS)].drop_duplicates().itertuples(index=False)
    for model, revision, precision in runs:
        run = RunRef(str(model), str(revision), str(precision))
        for num_fewshot in (0, 5):
            for view in (views.model_prompt_scores, views.model_prompt_table):
                mine, theirs = view(compact, run, num_fewshot), view(plain, run, num_fewshot)
                pd.testing.assert_frame_equal(mine, theirs, check_exact=True)
