"""The Judges tab and the judge panels on the Evalita pages, rendered from a real local store.

Rendering is what the page sends (values by output name); the browser test
(``test_browser.py``) drives the same views in Chromium.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest

from eval_queue.settings import Settings
from eval_queue.vocabulary import RunRef
from leaderboard.state import PageState
from leaderboard.tracks.judge.app.panels import ModelJudgePanel, TaskJudgePanel
from leaderboard.tracks.judge.app.tab import CRITERION_FIELD, SET_FIELD, JudgesTab
from leaderboard.tracks.judge.app.tables import NOT_ENOUGH_DATA
from leaderboard.tracks.judge.definition import Criterion, JudgeProtocol
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.ui.common import Choices, Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.registry import default_registry
from tests.judge.test_items import _publish_sum_run
from tests.judge.test_results_tables import _generations_file, _meta_file, set_key


@pytest.fixture
def ctx(tmp_path: Path) -> AppContext:
    context = AppContext.from_settings(Settings(data_dir=tmp_path))
    stores = context.stores
    _publish_sum_run(stores)  # org/model's SUM outputs (sample data, ROUGE-1 p1 = 0.2)
    judged = _generations_file("org/model", {"sum/p1/0": 4, "sum/p1/1": 2, "sum/p2/0": None, "sum/p2/1": 5})
    runs = [
        judged,
        _meta_file("org/good", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}),
        _meta_file("org/poor", {"a": 5, "b": 3, "c": 1, "d": 2, "e": 4}),
        _meta_file("org/mute", {"a": None, "b": None, "c": None, "d": None, "e": None}, data="sample"),
        # The project protocol on the real set: not the paper's measurement.
        _meta_file("org/plain", {"a": 1, "b": 2, "c": 3, "d": 5, "e": 4}, protocol=JudgeProtocol.PROJECT),
        # The paper protocol on another real set: never ranked beside the judges of the first.
        _meta_file("org/elsewhere", {"a": 2, "b": 2, "c": 3, "d": 4, "e": 5}, data="local:other-set"),
    ]
    for run in runs:
        stores.results.write(run.path, run.results.to_json())
    return context


def test_the_judges_tab_comes_after_the_evalita_tabs_and_its_panels_are_registered() -> None:
    registry = default_registry()
    ids = [tab.id for tab in registry.tabs]
    assert ids.index("plots") < ids.index("judges") < ids.index("submit")
    task, model = registry.tabs[1], registry.tabs[2]
    # Other tracks may add panels of their own beside the judge's.
    assert [p.id for p in task.panels if p.id.startswith("judge")] == ["judge-task"]
    assert [p.id for p in model.panels if p.id.startswith("judge")] == ["judge-model"]
    about = registry.tabs[-1]
    [section] = [text for text in (make() for make in about.sections) if "Annotation guidelines" in text]
    # Derived from the rubric: every criterion's guideline, and how to point a judge at few-shot examples.
    assert all(c.label in section for c in CRITERIA) and "Annotation guidelines" in section
    assert "--few-shot FILE" in section and "no-derivatives" in section


def test_the_judges_table_shows_table_1_figures_and_hides_sample_runs_by_default(ctx: AppContext) -> None:
    values = JudgesTab().render(ctx, PageState(tab="judges")).values

    table = values["table"]
    assert isinstance(table, Table) and table.na_rep == NOT_ENOUGH_DATA
    assert list(table.frame["judge"]) == ["org/good", "org/poor"]
    assert table.frame.loc[0, "overall ρ"] == 1.0 and table.frame.loc[0, "overall MAE"] == 0.0
    for criterion in CRITERIA:
        for figure in ("ρ", "p", "MAE", "bias", "unparsed"):
            assert f"{criterion.label.lower()} {figure}" in table.frame.columns
    caption = str(values["caption"])
    assert (
        "2 run(s) not comparable" in caption
        and "hub:org/set" in caption
        and set_key("hub:org/set") in caption
    )
    assert "1 other set(s)" in caption
    heatmap = values["heatmap"]
    assert isinstance(heatmap, go.Figure)
    assert list(heatmap.data[0].x) == ["org/good", "org/poor"] and heatmap.data[0].z[0][0] == 1.0
    assert isinstance(values["distributions"], go.Figure)


def test_a_judge_with_no_parsed_answer_shows_not_enough_data_never_a_number(ctx: AppContext) -> None:
    extra = ((CRITERION_FIELD, Criterion.FLUENCY.value), (SET_FIELD, set_key("sample")))
    state = PageState(tab="judges", extra=extra).with_values(all_runs=True)

    values = JudgesTab().render(ctx, state).values

    frame = values["table"].frame
    mute = frame[frame["judge"] == "org/mute"].iloc[0]
    assert mute["overall ρ"] is pd.NA and mute["fluency MAE"] is pd.NA and mute["overall unparsed"] == 1.0
    assert not frame.select_dtypes("number").isin([float("nan")]).any().any()
    assert "fluency" in values["heatmap"].layout.title.text


def test_the_set_selector_lists_each_annotated_set_and_shows_one_at_a_time(ctx: AppContext) -> None:
    default = JudgesTab().render(ctx, PageState(tab="judges")).values
    choices = default[SET_FIELD]
    assert isinstance(choices, Choices) and choices.value == set_key("hub:org/set")
    labels = dict((value, label) for label, value in choices.options)
    assert list(labels) == [set_key("hub:org/set"), set_key("local:other-set")]  # most judges first
    assert (
        labels[set_key("hub:org/set")].startswith("hub:org/set · sha256 ")
        and "2 judges" in labels[choices.value]
    )

    other = PageState(tab="judges", extra=((SET_FIELD, set_key("local:other-set")),))
    values = JudgesTab().render(ctx, other).values
    assert list(values["table"].frame["judge"]) == ["org/elsewhere"]
    assert list(values["heatmap"].data[0].x) == ["org/elsewhere"]

    everything = JudgesTab().render(ctx, PageState(tab="judges").with_values(all_runs=True)).values
    # The comparable runs first, then (ranked apart) the project-protocol one.
    assert list(everything["table"].frame["judge"]) == ["org/good", "org/poor", "org/plain"]
    assert list(everything["table"].frame["protocol"]) == ["paper", "paper", "project"]
    assert list(everything["table"].frame["standing"]) == [
        "comparable with Table 1",
        "comparable with Table 1",
        "not comparable",
    ]
    assert len(everything[SET_FIELD].options) == 3  # and the sample


def test_a_link_to_an_annotated_set_is_kept_and_an_unknown_one_falls_back_with_a_notice(
    ctx: AppContext,
) -> None:
    key = set_key("local:other-set")
    state, notices = PageState.from_query(
        {"tab": "judges", SET_FIELD: key}, tabs=("judges",), extra_fields=JudgesTab.url_fields
    )
    assert state.get(SET_FIELD) == key and not notices and f"{SET_FIELD}={key}" in state.to_query()

    rendered = JudgesTab().render(ctx, PageState(tab="judges", extra=((SET_FIELD, "f" * 64),)))

    assert rendered.values[SET_FIELD].value == set_key("hub:org/set")
    [notice] = rendered.notices
    assert notice.given == "f" * 64 and "hub:org/set" in notice.used
    assert rendered.state is not None and rendered.state.get(SET_FIELD) == ""  # unset: the default


def test_the_sum_page_shows_each_judges_criterion_means_beside_rouge(ctx: AppContext) -> None:
    values = TaskJudgePanel().render(ctx, PageState(tab="task").with_values(task="sum"))

    assert values["box"]["visible"] is True
    frame = values["table"].frame
    row = frame.iloc[0]
    assert (row["model"], row["judge"]) == ("org/model", "org/judge@cccccccccccc")
    assert row["ROUGE-1 p1"] == 20.0
    # p1: 4 and 2 → 3.0; p2: unparsed and 5 → 5.0; pooled: (4 + 2 + 5) / 3
    assert row["coherence"] == pytest.approx(3.67, abs=0.01) and row["unparsed"] == 0.25
    other = TaskJudgePanel().render(ctx, PageState(tab="task").with_values(task="te"))
    assert other["box"]["visible"] is False


def test_the_model_page_shows_the_models_five_criterion_means(ctx: AppContext) -> None:
    key = RunRef("org/model", "a" * 40, "bfloat16").key
    values = ModelJudgePanel().render(ctx, PageState(tab="model").with_values(model=key))

    frame = values["table"].frame
    assert list(frame["task"]) == ["SUM"] and list(frame["judge"]) == ["org/judge@cccccccccccc"]
    assert [c for c in frame.columns if c in {c.label.lower() for c in CRITERIA}] == [
        c.label.lower() for c in CRITERIA
    ]
