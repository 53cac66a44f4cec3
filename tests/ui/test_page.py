"""The tab mechanism: tabs declare their parts by name, a new tab is one module, only changes are sent."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType, SimpleNamespace
from typing import ClassVar

import gradio as gr
import pytest

from leaderboard.state import PageState, UrlField
from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.evalita.app.tab import task as task_tab
from leaderboard.tracks.evalita.app.tab.ranking import RankingTab, open_clicked_run
from leaderboard.tracks.evalita.app.tab.task import TaskTab
from leaderboard.tracks.evalita.vocabulary import Setting
from leaderboard.ui import layout, registry
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page, Session
from leaderboard.ui.tab import Api, Panel, Rendered, Tab, TabParts
from tests.ui.conftest import REPO
from tests.ui.store import XSS_MODEL, sample_app_context


class FlavourTab(Tab):
    """A tab another track could add: its own link field, a control for it and one output."""

    id = "flavour"
    label = "Flavour"
    url_fields: ClassVar[Mapping[str, UrlField]] = MappingProxyType(
        {"flavour": UrlField("plain", ("plain", "spicy"))}
    )
    apis: ClassVar[Mapping[str, Api]] = MappingProxyType({"flavour": Api(("flavour",), ("shown",))})

    def build(self, page: Page) -> TabParts:
        choice = gr.Radio(["plain", "spicy"], value="plain", elem_id="flavour-pick")
        shown = gr.Markdown(elem_id="flavour-shown")
        return TabParts(controls={"flavour": choice}, outputs={"shown": shown})

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        runs = len(views.current_board(ctx).runs)
        return Rendered({"shown": f"{state.get('flavour') or 'plain'} over {runs} runs"})


class CountPanel(Panel):
    """A panel another track could put on the Evalita task page."""

    id = "counter"

    def build(self) -> Mapping[str, gr.components.Component]:
        return {"line": gr.Markdown(elem_id="counter-line")}

    def render(self, ctx: AppContext, state: PageState) -> Mapping[str, object]:
        return {"line": f"rubric scores for {state.get('task')}"}


@pytest.fixture
def ctx(tmp_path: Path) -> AppContext:
    return sample_app_context(tmp_path)


def _page(ctx: AppContext, tabs) -> tuple[gr.Blocks, Page]:
    with gr.Blocks() as demo:
        built = Page(ctx, tabs)
        built.build_header()
        built.build_tabs()
    return demo, built


def _browser() -> Session:
    session = Session()
    session.browser = True
    return session


def _sent(updates: dict, built: Page, tab_id: str) -> set[str]:
    """The names of ``tab_id``'s outputs (and controls) an update dict sends."""
    parts = built.parts[tab_id]
    named = {**{f"control:{k}": c for k, c in parts.controls.items()}, **parts.outputs}
    return {name for name, component in named.items() if component in updates}


def test_a_tab_is_added_by_registering_one_module_and_the_others_are_untouched(ctx: AppContext) -> None:
    default = registry.default_registry()
    extended = registry.default_registry().with_tab(FlavourTab(), before="submit")
    assert [t.id for t in extended.tabs] == [
        "ranking",
        "task",
        "model",
        "plots",
        "compare",
        "long-context",
        "judges",
        "contamination",
        "flavour",
        "submit",
        "about",
    ]
    demo, built = _page(ctx, extended.tabs)
    # The new tab's link field is read and written like the page's own.
    state, notices = PageState.from_query(
        {"tab": "flavour", "flavour": "spicy"}, tabs=built.tabs, extra_fields=built.url_fields
    )
    assert notices == [] and state.get("flavour") == "spicy" and "flavour=spicy" in state.to_query()
    updates = built.show(_browser(), state)
    assert updates[built.parts["flavour"].outputs["shown"]] == "spicy over 14 runs"
    # Its control is wired like any other (by name), its endpoint exists, and the other tabs
    # declare exactly what they declare without it.
    assert any(fn.api_name == "flavour" for fn in demo.fns.values())
    _, plain = _page(ctx, default.tabs)
    for tab_id, parts in plain.parts.items():
        assert list(built.parts[tab_id].outputs) == list(parts.outputs)
        assert list(built.parts[tab_id].controls) == list(parts.controls)


def test_an_unknown_value_of_a_tabs_own_link_field_falls_back_with_a_notice() -> None:
    state, notices = PageState.from_query({"flavour": "<b>hot</b>"}, extra_fields=FlavourTab.url_fields)
    assert state.get("flavour") == "plain"  # the default the notice names
    assert [(n.field, n.given, n.used) for n in notices] == [("flavour", "<b>hot</b>", "plain")]


def test_another_track_adds_a_panel_to_the_task_page_without_the_task_tab_importing_it(
    ctx: AppContext,
) -> None:
    _, built = _page(ctx, [RankingTab(), TaskTab([CountPanel()])])
    updates = built.show(_browser(), replace(PageState().with_values(task="sum"), tab="task"))
    assert updates[built.parts["task"].outputs["counter.line"]] == "rubric scores for sum"
    source = inspect.getsource(task_tab)
    assert "CountPanel" not in source and "judge" not in source


def test_a_value_the_browser_already_shows_is_not_sent_again(ctx: AppContext) -> None:
    _, built = _page(ctx, registry.default_registry().tabs)
    session = _browser()
    first = built.show(session, PageState())
    assert {"table", "caption"} <= _sent(first, built, "ranking")
    # The CSV is made only when asked (its button; the API endpoint): a render never sends it.
    assert "csv" not in _sent(first, built, "ranking")
    again = built.show(session, PageState())
    assert set(again) == {built.session}  # nothing new: only the server-side session is kept
    five = built.show(session, PageState().with_values(setting=Setting.FIVE))
    assert "table" in _sent(five, built, "ranking") and "banner" not in _sent(five, built, "ranking")
    # Another tab is computed only when it is shown, and its unchanged parts are not re-sent later.
    assert not _sent(first, built, "task")
    task = built.show(session, replace(PageState(), tab="task"))
    assert {"models", "prompts", "heatmap"} <= _sent(task, built, "task")
    back = built.show(session, replace(PageState().with_values(setting=Setting.FIVE), tab="ranking"))
    assert not _sent(back, built, "ranking")


def test_an_api_caller_always_gets_every_value(ctx: AppContext) -> None:
    _, built = _page(ctx, registry.default_registry().tabs)
    session = Session()  # never loaded a page: a gradio_client caller
    built.show(session, PageState())
    again = built.show(session, PageState())
    assert {"table", "caption", "banner"} <= _sent(again, built, "ranking")
    assert "csv" not in _sent(again, built, "ranking")  # the endpoint resolves it (tests/ui/test_client.py)


def test_a_clicked_row_is_resolved_by_its_hidden_key_not_by_its_cells() -> None:
    key = f"{XSS_MODEL}|abcdef1234567890|bfloat16"
    # The cells the browser sends back may be anything (a link, an escaped name, sorted columns):
    # only the last one, the hidden key, names the run.
    evt = SimpleNamespace(row_value=[1, '<a href="x">paper-dev/LLM-5</a>', 45.57, key])
    state = open_clicked_run(PageState(), evt)  # type: ignore[arg-type]
    assert (state.tab, state.get("model")) == ("model", key)
    assert open_clicked_run(PageState(), SimpleNamespace(row_value=[])) == PageState()  # type: ignore[arg-type]


def test_no_tab_listens_to_a_tab_items_own_select_event(ctx: AppContext) -> None:
    """The cause of links landing on the wrong tab: a tab item fires ``select`` when it is mounted
    (the first tab always does), which raced with the link's own selection and overwrote it.
    Only the tab bar's ``select`` (a person's click) is listened to."""
    demo, built = _page(ctx, registry.default_registry().tabs)
    tab_items = {block._id for block in demo.blocks.values() if isinstance(block, gr.Tab)}
    triggers = [(t[0], t[1]) for fn in demo.fns.values() for t in fn.targets]
    assert not [t for t in triggers if t[0] in tab_items]
    assert (built.tabbar._id, "select") in triggers


def test_layout_wires_nothing_by_position_and_every_ui_function_fits_a_screen() -> None:
    source = (REPO / "leaderboard" / "ui" / "layout.py").read_text()
    tree = ast.parse(source)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    positional_io = [
        c
        for c in calls
        for k in c.keywords
        if k.arg in ("inputs", "outputs") and isinstance(k.value, ast.List)
    ]
    assert positional_io == []
    long = []
    for path in sorted((REPO / "leaderboard" / "ui").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if lines > 80:
                    long.append(f"{path.name}:{node.name} ({lines} lines)")
    assert long == []
    assert len(inspect.getsource(layout.build_app).splitlines()) < 40


def test_tab_ids_must_be_unique(ctx: AppContext) -> None:
    with pytest.raises(ValueError, match="unique"), gr.Blocks():
        Page(ctx, [FlavourTab(), FlavourTab()])
