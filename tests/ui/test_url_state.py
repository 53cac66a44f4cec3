"""A link's values: an unknown one falls back to the default with a notice the page shows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from eval_queue.queue import RequestQueue
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage, Stores
from leaderboard.state import PageState, notices_markdown
from leaderboard.tracks.evalita.app.tab.model import ModelTab
from leaderboard.tracks.evalita.app.tab.plots import PlotsTab
from leaderboard.tracks.evalita.vocabulary import Aggregate, Setting
from leaderboard.ui.context import AppContext
from tests.ui.store import write_results

TABS = ("ranking", "task", "model", "plots", "submit", "about")


def _read(**params: str) -> tuple[PageState, list]:
    return PageState.from_query(params, tabs=TABS)


@pytest.mark.parametrize(
    ("field", "given", "used"),
    [
        ("task", "nope", "WIC"),
        ("setting", "7", "0-shot"),
        ("shots", "both", "0-shot"),  # the task/model/plots pages show one setting
        ("sort", "<script>", "Rank (best average CPS first)"),
        ("tab", "admin", "ranking"),
        ("ranking_page", "two", "1"),
        ("task_page", "0x2", "1"),
    ],
)
def test_an_unknown_value_in_a_link_falls_back_to_the_default_with_a_notice(
    field: str, given: str, used: str
) -> None:
    state, notices = _read(**{field: given})
    assert state.get(field) == PageState().get(field)
    assert [(n.field, n.given, n.used) for n in notices] == [(field, given, used)]
    shown = notices_markdown(notices)
    assert "The link" in shown and field.replace("_", "\\_") in shown and "<" not in shown  # escaped


def test_unknown_values_in_a_list_are_dropped_and_the_known_ones_kept() -> None:
    state, notices = _read(columns="maxp,evil", types="pretrained,alien", precisions="int3")
    assert state.get("columns") == (Aggregate.MAXP,) and state.get("types") == ("pretrained",)
    assert state.get("precisions") == ()
    assert {(n.field, n.given) for n in notices} == {
        ("columns", "evil"),
        ("types", "alien"),
        ("precisions", "int3"),
    }


def test_a_known_link_gives_no_notice_and_round_trips() -> None:
    state, notices = _read(tab="task", task="sa", shots="5", sort="te", setting="both", search="llama")
    assert notices == []
    assert (state.tab, *(state.get(f) for f in ("task", "shots", "sort", "setting"))) == (
        "task",
        "sa",
        Setting.FIVE,
        "te",
        Setting.BOTH,
    )
    again, _ = PageState.from_query(dict(p.split("=", 1) for p in state.to_query().split("&")), tabs=TABS)
    assert again == state


def test_an_answers_prompt_of_another_task_falls_back_to_the_tasks_first() -> None:
    state, _ = _read(answers_task="sum", answers_prompt="p6")
    assert (state.get("answers_task"), state.get("answers_prompt")) == ("sum", "p1")


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> AppContext:
    root = tmp_path_factory.mktemp("url-state")
    write_results(root / "results", root / "details")
    stores = Stores(
        requests=LocalStorage(root / "requests"),
        results=LocalStorage(root / "results"),
        details=LocalStorage(root / "details"),
    )
    return AppContext(
        settings=Settings(data_dir=Path(root)), stores=stores, queue=RequestQueue(stores.requests)
    )


def test_an_unknown_model_in_a_link_shows_the_best_model_with_a_notice(ctx: AppContext) -> None:
    rendered = ModelTab().render(
        ctx, replace(PageState().with_values(model="no-org/nothing|main|bf16"), tab="model")
    )
    assert [(n.field, n.given, n.used) for n in rendered.notices] == [
        ("model", "no-org/nothing|main|bf16", "paper-dev/LLM-5")
    ]
    assert "paper-dev/LLM-5" in str(rendered.values["header"])  # a page, not an error
    assert rendered.state is not None and rendered.state.get("model") == ""  # the address no longer names it


def test_a_known_model_in_a_link_gives_no_notice(ctx: AppContext) -> None:
    rendered = ModelTab().render(
        ctx, replace(PageState().with_values(model="paper-dev/LLM-2|main|bfloat16"), tab="model")
    )
    assert rendered.notices == () and "LLM-2" in str(rendered.values["header"])


def test_unknown_models_chosen_for_the_radar_are_dropped_with_a_notice(ctx: AppContext) -> None:
    state = replace(
        PageState().with_values(models=("paper-dev/LLM-2|main|bfloat16", "ghost|x|y")), tab="plots"
    )
    rendered = PlotsTab().render(ctx, state)
    assert [(n.field, n.given) for n in rendered.notices] == [("model", "ghost|x|y")]
    assert rendered.state is not None and rendered.state.get("models") == ("paper-dev/LLM-2|main|bfloat16",)


def test_a_notice_repeats_at_most_a_short_part_of_a_huge_link_value() -> None:
    _, notices = _read(task="x" * 100_000)
    assert len(notices[0].text) < 200 and notices[0].text.count("x") == 79


def test_no_link_field_is_one_gradio_reserves() -> None:
    """gradio reads ``?page=`` itself (multipage apps): a field of that name broke the page."""
    assert "page" not in PageState().fields
    state = PageState().with_values(ranking_page=3)
    assert state.to_query() == "ranking_page=3"


def test_a_page_beyond_the_last_shows_the_last_and_the_link_says_so(ctx: AppContext) -> None:
    from leaderboard.tracks.evalita.app.tab.ranking import RankingTab

    rendered = RankingTab().render(ctx, PageState().with_values(ranking_page=99))
    assert rendered.state is not None and rendered.state.get("ranking_page") == 1  # 7 runs: one page
    assert rendered.values["caption"].startswith("rows 1–7 of 7")
