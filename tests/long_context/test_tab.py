"""The "Long context" tab's render: Table 5 layout, the plot, each question's answer (all escaped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage, Stores
from leaderboard.state import PageState
from leaderboard.tracks.long_context.app.tab import LongContextTab
from leaderboard.ui.context import AppContext
from tests.long_context.store import write_long_context_runs


@pytest.fixture
def ctx(tmp_path: Path) -> AppContext:
    for name in ("requests", "results", "details"):
        (tmp_path / name).mkdir()
    stores = Stores(*(LocalStorage(tmp_path / name) for name in ("requests", "results", "details")))
    return AppContext(
        settings=Settings.from_env({"EVALITA_DATA_DIR": str(tmp_path)}), stores=stores, queue=None
    )


def _state(**extra: str) -> PageState:
    return PageState(tab="long-context", extra=tuple(sorted(extra.items())))


def test_the_table_is_the_table5_layout_with_the_best_in_bold_and_names_escaped(ctx, tmp_path) -> None:
    write_long_context_runs(tmp_path / "results", tmp_path / "details")
    html = LongContextTab().render(ctx, _state()).values["table"]
    assert html.index("10K-word context") < html.index("Full book context")
    for label in ("Summary", "Local", "Local alt.", "Entity", "unparsed", "Book seen"):
        assert label in html
    # Paper Table 5, 10K: Llama3.1-8B's Local ACC 43.83 beats ANITA-8B's 38.08 (bold); ANITA's is not.
    assert "<b>43.83</b>" in html and "<b>38.08</b>" not in html and "38.08" in html
    assert "&lt;img src=x" in html and "<img" not in html
    assert "2 / 1 of 10" in html and "60%" in html  # items cut by the setting / by the window, book seen


def test_the_plot_draws_a_line_per_run_over_the_settings(ctx, tmp_path) -> None:
    write_long_context_runs(tmp_path / "results", tmp_path / "details")
    figure = LongContextTab().render(ctx, _state(lc_plot="local_acc")).values["plot"]
    assert len(figure.data) == 2
    assert list(figure.data[0].x) == ["10K-word context", "Full book context"]
    assert sorted(y for trace in figure.data for y in trace.y) == [38.08, 38.08, 43.83, 43.83]


def test_drilling_down_shows_each_question_with_its_letter_and_scores(ctx, tmp_path) -> None:
    paths = write_long_context_runs(tmp_path / "results", tmp_path / "details")
    tab = LongContextTab()
    values = tab.render(ctx, _state(lc_run=paths[1], lc_setting="full", lc_set="local_mc")).values
    assert values["lc_run"].value == paths[1] and values["status"] == "2 answers"
    answers = values["answers"].frame
    assert list(answers["Letter"]) == ["C ✓", "unparsed ✗ (correct: C)"]
    assert answers.iloc[0]["Question"].startswith("Domanda 0 <script>")  # text; the table renders it as text
    oe = tab.render(ctx, _state(lc_run=paths[1], lc_set="entity_oe")).values["answers"].frame
    assert list(oe.iloc[0][["EM", "METEOR", "METEOR (it)"]]) == [100.0, 50.0, 60.0]
    assert (
        oe.iloc[0]["References"] == "Giacometta | la giovane"
        and oe.iloc[0]["Book seen"] == "2000 / 4000 tokens"
    )


def test_a_setting_the_run_did_not_evaluate_or_a_missing_details_file_says_so(ctx, tmp_path) -> None:
    paths = write_long_context_runs(tmp_path / "results", tmp_path / "details")
    tab = LongContextTab()
    values = tab.render(ctx, _state(lc_run=paths[0], lc_setting="50k")).values
    assert "did not evaluate the 50k setting" in values["status"] and values["answers"].frame.empty
    folder = tab.records(ctx)[paths[0]].run.details_path
    (tmp_path / "details" / folder / "indaqa2_summary_oe_10k.jsonl").write_text('{"doc_id": "x"\n')
    values = tab.render(ctx, _state(lc_run=paths[0], lc_set="summary_oe")).values
    assert "could not be read" in values["status"]


def test_an_empty_store_shows_no_rows_and_no_plot(ctx) -> None:
    values = LongContextTab().render(ctx, _state()).values
    assert "No long-context results yet" in values["table"] and values["plot"] is None
    assert values["status"] == "No long-context run yet."


def test_an_unknown_run_in_a_link_falls_back_to_the_newest(ctx, tmp_path) -> None:
    paths = write_long_context_runs(tmp_path / "results", tmp_path / "details")
    values = LongContextTab().render(ctx, _state(lc_run="nope/results_x.json")).values
    assert values["lc_run"].value in paths
