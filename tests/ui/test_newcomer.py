"""What a newcomer tripped over (issue 14 §3) and the display facts defined once (issue 9), pinned."""

from __future__ import annotations

from pathlib import Path

import gradio as gr
import pandas as pd
import pytest

from eval_queue.storage import LocalStorage
from eval_queue.vocabulary import RunRef
from leaderboard.core.schema import results_file_path
from leaderboard.state import PageState
from leaderboard.tracks.evalita.app import plots, views
from leaderboard.tracks.evalita.app.records import load_results
from leaderboard.tracks.evalita.app.tab.ranking import caption
from leaderboard.tracks.evalita.definition import TASKS
from leaderboard.tracks.evalita.schema import PromptScore
from leaderboard.tracks.evalita.vocabulary import Setting
from leaderboard.ui.common import Table, table_update
from tests.ui.store import FINISHED_AT, SAMPLE_MODEL, _results, write_results

SMALL = "tiny-org/small-model"


def _board(tmp_path: Path, *extra) -> views.Board:
    write_results(tmp_path / "results", tmp_path / "details")
    store = LocalStorage(tmp_path / "results")
    for results in extra:
        store.write(results_file_path(results, FINISHED_AT), results.to_json())
    return views.Board(load_results(store))


def _shown(frame: pd.DataFrame, row: int, column: str) -> str:
    """The text a page's table shows in a cell (gradio's own postprocessing of our update)."""
    update = table_update(Table(frame, link_models=False))
    data = gr.Dataframe().postprocess(update["value"])
    return data.metadata["display_value"][row][list(data.headers).index(column)]


def _small_model(answer_cap: int | None = None) -> object:
    """0.00125 on every TE prompt (0.125 points: the rounding's half), 0.1345 B parameters,
    stderr 0.0123 on every prompt, and what the run used recorded as the worker records it
    (an answer-length cap makes the run a development one, not ranked by default)."""
    results = _results(SMALL, 0.5)
    results.model.params_b = 0.1345
    for task in results.tasks.values():
        for prompt in task.prompts.values():
            prompt.stderr = 0.0123
    results.tasks["te"].prompts = {
        p: PromptScore(score=0.00125, stderr=0.0123) for p in TASKS["te"].prompt_ids
    }
    results.run = results.run.model_copy(
        update={
            "dtype": "float32",
            "device": "cpu",
            "max_gen_toks": answer_cap,
            "bootstrap_iters": 1000,
            "chat_template": True,
        }
    )
    return results


def test_a_score_shows_the_same_on_every_page(tmp_path: Path) -> None:
    """0.00125 is 0.125 points: 0.13 as the paper rounds (halves up), never 0.12 on one page."""
    board = _board(tmp_path, _small_model())
    ranking = views.ranking_view(board, Setting.ZERO, views.RankingFilters(search="small-model"))
    task = views.task_models_view(board, "te", 0)
    model = views.model_prompt_table(board, RunRef(SMALL, "abcdef1234567890", "bfloat16"), 0)
    small = task.index[task[views.MODEL] == SMALL][0]
    assert _shown(ranking.table, 0, "TE CPS") == "0.13"
    assert _shown(task, small, "p1") == "0.13"
    assert model.set_index("Task").loc["TE", "p1"].startswith("0.13 ± ")


def test_parameters_are_formatted_one_way_everywhere(tmp_path: Path) -> None:
    board = _board(tmp_path, _small_model())
    ranking = views.ranking_view(board, Setting.ZERO, views.RankingFilters(search="small-model")).table
    header = views.model_header_markdown(board, RunRef(SMALL, "abcdef1234567890", "bfloat16"))
    assert _shown(ranking, 0, views.PARAMS) == views.format_params(0.1345) == "0.13"
    assert "**Params:** 0.13 B" in header and "0.1345" not in header


def test_the_model_page_shows_what_the_run_used_and_each_prompts_stderr(tmp_path: Path) -> None:
    board = _board(tmp_path, _small_model(answer_cap=64))
    run = RunRef(SMALL, "abcdef1234567890", "bfloat16")
    used = views.run_metadata_view(board, run).set_index("Field")["0-shot"]
    assert used["Dtype (as run)"] == "float32" and used["Device"] == "cpu"
    assert used["Answer-length cap (tokens)"] == "64" and used["Chat template"] == "yes"
    assert used["Bootstrap iterations (stderr)"] == "1000"
    header = views.model_header_markdown(board, run)
    assert "**Precision:** bfloat16 requested, run as float32" in header
    prompts = views.model_prompt_table(board, run, 0).set_index("Task")
    assert prompts.loc["WIC", "p1"] == "50.00 ± 1.23"
    # A file that does not record them says so rather than guessing.
    other = views.run_metadata_view(board, RunRef("paper-dev/LLM-2", "main", "bfloat16")).set_index("Field")
    assert other.loc["Dtype (as run)", "0-shot"] == "—"
    assert "run as" not in views.model_header_markdown(board, RunRef("paper-dev/LLM-2", "main", "bfloat16"))


def test_a_sample_run_is_compared_only_with_runs_made_the_same_way(tmp_path: Path) -> None:
    board = _board(tmp_path)
    sample = views.model_vs_field(board, RunRef(SAMPLE_MODEL, "abcdef1234567890", "bfloat16"), 0)
    positions = set(sample.table["Position"])
    assert positions == {"1 / 1"}  # never "1 / 10" against full runs it is not comparable with
    assert "sample data" in sample.note and "never with full runs" in sample.note
    full = views.model_vs_field(board, RunRef("paper-dev/LLM-2", "main", "bfloat16"), 0)
    assert (
        SAMPLE_MODEL not in set(full.table["Best model"]) and full.table["Position"].str.endswith("/ 7").all()
    )
    assert "7 comparable" in full.note


def test_prompt_scores_are_drawn_side_by_side_with_no_labels_over_each_other(tmp_path: Path) -> None:
    board = _board(tmp_path, _small_model())
    figure = plots.prompt_spread(
        views.model_prompt_scores(board, RunRef(SMALL, "abcdef1234567890", "bfloat16"), 0)
    )
    assert figure is not None and figure.layout.scattermode == "group"
    assert [trace.name for trace in figure.data] == ["p1", "p2", "p3", "p4", "p5", "p6"]
    assert all(trace.mode == "markers" and trace.text is None for trace in figure.data)
    assert all(trace.error_y.visible for trace in figure.data)  # the stderr, as error bars


def test_a_search_with_no_match_says_so(tmp_path: Path) -> None:
    board = _board(tmp_path)
    filters = views.RankingFilters(search="<no-such>")
    view = views.ranking_view(board, Setting.ZERO, filters)
    text = caption(view, views.paged(view.table, 1), filters)
    assert text == "No run matches “&lt;no\\-such&gt;”."
    assert "click a row" not in text


def test_a_plot_with_nothing_to_draw_is_hidden_not_an_empty_box(tmp_path: Path) -> None:
    from leaderboard.ui.common import plot_update

    board = views.Board(load_results(LocalStorage(tmp_path / "empty")))
    assert plots.heatmap(views.task_models_view(board, "te", 5), ["p1"], "TE") is None
    assert plots.model_vs_field(views.model_vs_field(board, RunRef("a", "b", "c"), 5).table, "a") is None
    assert plot_update(None)["visible"] is False


def test_sorting_is_a_visible_control_served_by_the_server(tmp_path: Path) -> None:
    board = _board(tmp_path)
    rows = views.ranking_view(board, Setting.ZERO, views.RankingFilters(), "model").table
    assert list(rows[views.MODEL]) == sorted(rows[views.MODEL], key=str.lower)
    by_size = views.ranking_view(board, Setting.ZERO, views.RankingFilters(), "params-asc").table
    assert by_size[views.PARAMS].is_monotonic_increasing
    by_wic = views.ranking_view(board, Setting.ZERO, views.RankingFilters(), "wic").table
    assert by_wic["WIC CPS"].is_monotonic_decreasing
    top = by_wic.iloc[0]
    assert (top[views.MODEL], top[views.RANK]) == ("paper-dev/LLM-4", 4)  # sorted by WIC, ranked overall


def test_prompts_are_shown_as_text_with_the_slots_marked() -> None:
    shown = views.prompts_html("wic")
    assert "{{" not in shown and "}}" not in shown
    assert '<span class="slot">[word in sentence1]</span>' in shown
    assert '<span class="slot">[sentence2]</span>' in shown
    assert views.slot_label("A") == "option A"


@pytest.mark.parametrize("setting", list(Setting))
def test_every_table_listing_runs_ends_with_the_hidden_key(tmp_path: Path, setting: Setting) -> None:
    board = _board(tmp_path)
    ranking = views.ranking_view(board, setting, views.RankingFilters())
    assert ranking.table.columns[-1] == views.KEY_COLUMN
    assert all(RunRef.parse(key) is not None for key in ranking.table[views.KEY_COLUMN])
    task = views.task_models_view(board, "te", 0)
    assert task.columns[-1] == views.KEY_COLUMN
    assert views.KEY_COLUMN not in views.to_csv(ranking.table).splitlines()[0].split(",")


def test_the_ranking_is_computed_once_per_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from leaderboard.tracks.evalita.app import tables

    board = _board(tmp_path)  # comparable and sample runs: the case that once needed two tables
    calls = []
    real = tables.ranking_table
    monkeypatch.setattr(tables, "ranking_table", lambda *a, **k: calls.append(a[1:]) or real(*a, **k))
    for setting in (Setting.ZERO, Setting.FIVE, Setting.BOTH, Setting.ZERO):
        views.ranking_view(board, setting, views.RankingFilters(show_noncomparable=True))
    assert sorted(calls) == [(0,), (5,)]
    # …and its rank is the comparable-only table's rank.
    ranked = real(board.loaded, 0).set_index("model")["rank"]
    shown = board.rows(0).set_index("model")["_rank"]
    assert shown[shown.notna()].astype(int).to_dict() == ranked.astype(int).to_dict()


def test_url_state_keeps_the_setting_typed() -> None:
    state = PageState().with_values(setting=Setting.BOTH)
    assert state.to_query() == "setting=both" and state.control_value("setting") == "both"
