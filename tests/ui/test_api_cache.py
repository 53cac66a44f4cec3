"""Many visitors at once: an API endpoint's outputs are serialised once per (view, results version,
state) and handed back to every later caller; what gradio does per session is made lazily.

Correctness first: a kept response is exactly what gradio would have sent, a new results
version or another state is computed afresh, and a tab that does not declare its render a
public view shares nothing.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

import gradio as gr
import pytest
from gradio.state_holder import SessionState

from leaderboard.state import PageState
from leaderboard.ui import gradio_costs, registry, render_cache
from leaderboard.ui.common import to_update
from leaderboard.ui.context import AppContext
from leaderboard.ui.layout import build_app
from leaderboard.ui.page import Page, Session
from leaderboard.ui.tab import Api, Rendered, Tab, TabParts
from tests.ui.store import sample_app_context


@pytest.fixture
def ctx(tmp_path: Path) -> AppContext:
    return sample_app_context(tmp_path)


class CountedTab(Tab):
    """A tab counting its renders; shared or not as the test makes it."""

    id = "counted"
    label = "Counted"
    apis: ClassVar[Mapping[str, Api]] = MappingProxyType({"counted": Api(("search",), ("shown",))})

    def __init__(self, shared: bool) -> None:
        self.shared_render = shared  # type: ignore[misc]
        self.renders = 0

    def build(self, page: Page) -> TabParts:
        return TabParts(controls={}, outputs={"shown": gr.Markdown()})

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        self.renders += 1
        return Rendered({"shown": f"search {state.get('search')!r}, version {ctx.version}"})


def _app(ctx: AppContext, tabs) -> tuple[gr.Blocks, Page]:
    with gr.Blocks() as demo:
        built = Page(ctx, tabs)
        built.build_header()
        built.build_tabs()
    return demo, built


def _endpoint(demo: gr.Blocks, api_name: str):
    return next(fn for fn in demo.fns.values() if fn.api_name == api_name)


@pytest.fixture
def serialised(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The outputs serialised (by component type), counted."""
    made: list[str] = []
    real = render_cache.serialise

    def counting(component: gr.components.Component, value: object) -> object:
        made.append(type(component).__name__)
        return real(component, value)

    monkeypatch.setattr(render_cache, "serialise", counting)
    return made


def test_two_calls_of_one_view_render_and_serialise_it_once(ctx: AppContext, serialised: list[str]) -> None:
    tab = CountedTab(shared=True)
    demo, _ = _app(ctx, [tab])
    endpoint = _endpoint(demo, "counted")
    assert endpoint.postprocess is False  # the endpoint hands back what it serialised
    first = endpoint.fn(search="llm")
    second = endpoint.fn(search="llm")
    assert (tab.renders, len(serialised)) == (1, 1)
    assert first == second == ("search 'llm', version 0",)


def test_another_state_or_results_version_is_computed_afresh(ctx: AppContext, serialised: list[str]) -> None:
    tab = CountedTab(shared=True)
    demo, _ = _app(ctx, [tab])
    endpoint = _endpoint(demo, "counted")
    llm = endpoint.fn(search="llm")
    other = endpoint.fn(search="other")
    assert other != llm and tab.renders == 2  # two states share nothing
    ctx._version += 1  # the results changed (what a re-read that found new files does)
    assert endpoint.fn(search="llm") == ("search 'llm', version 1",)
    assert tab.renders == 3 and len(serialised) == 3


def test_a_tab_not_declared_a_public_view_is_rendered_for_each_call(
    ctx: AppContext, serialised: list[str]
) -> None:
    tab = CountedTab(shared=False)
    demo, built = _app(ctx, [tab])
    endpoint = _endpoint(demo, "counted")
    endpoint.fn(search="llm")
    endpoint.fn(search="llm")
    assert (tab.renders, len(serialised)) == (2, 2)
    assert built.renders.computed == 0  # nothing of it kept


def test_the_tabs_with_a_visitors_own_things_share_no_render() -> None:
    """Sign-in and the submission form answer each visitor: never a shared render; the shared
    tabs' renders take only the results and the link state (no request, no visitor)."""
    tabs = {tab.id: tab for tab in registry.default_registry().tabs}
    assert not tabs["submit"].shared_render
    for tab in tabs.values():
        if tab.shared_render:
            assert list(type(tab).render.__annotations__) == ["ctx", "state", "return"]


def test_every_endpoints_kept_response_is_what_gradio_would_have_sent(ctx: AppContext) -> None:
    demo, built = _app(ctx, registry.default_registry().tabs)
    checked = []
    for tab in built.tabs.values():
        for api_name, api in tab.apis.items():
            endpoint = _endpoint(demo, api_name)
            parts = built.parts[tab.id]
            sent, again = endpoint.fn(), endpoint.fn()
            # Each call gets its own update dicts (gradio edits them), equal to the last call's.
            for one, two in zip(sent, again, strict=True):
                assert one == two and (one is not two or not isinstance(one, dict))
            # What gradio makes of the plain updates (postprocess=True), and of the kept ones.
            state = replace(built.blank, tab=tab.id)  # the endpoint's state with no fields given
            values = built.render(tab, state).rendered.values
            plain = [to_update(parts.outputs[name], values[name]) for name in api.outputs]
            endpoint.postprocess = True
            expected = asyncio.run(demo.postprocess_data(endpoint, plain, SessionState(demo)))
            endpoint.postprocess = False
            got = asyncio.run(demo.postprocess_data(endpoint, list(sent), SessionState(demo)))
            assert got == expected, api_name
            checked += [f"{api_name}.{name}" for name, value in zip(api.outputs, got, strict=True) if value]
    # The views visitors ask for most, with a table and a figure among them, were compared.
    assert {"ranking.table", "task.models", "task.heatmap", "model.header"} <= set(checked)
    assert {name.split(".")[0] for name in checked} >= {"ranking", "task", "model", "plots", "judges"}


def test_a_lazy_session_shows_the_deep_link_route_what_gradio_would(ctx: AppContext) -> None:
    demo = build_app(ctx)
    assert gradio_costs.install()
    lazy = SessionState(demo)
    assert lazy.config_values == {}  # nothing configured until read
    eager = SessionState.__new__(SessionState)
    gradio_costs._GRADIO_INIT(eager, demo)
    assert len(eager.config_values) > 100  # gradio's own: every component of the page
    assert list(lazy.components) == list(eager.components)
    # A component a call updated is configured with its new value, as gradio's session has it.
    some = next(key for key, config in eager.config_values.items() if "props" in config)
    for session in (lazy, eager):
        session._update_value_in_config(some, "new value")
    assert list(lazy.components) == list(eager.components)


def test_an_optional_module_that_cannot_be_imported_is_marked_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "no_such_plotting_lib", raising=False)
    assert gradio_costs.mark_absent_modules(("no_such_plotting_lib", "json")) == ["no_such_plotting_lib"]
    with pytest.raises(ImportError):
        importlib.import_module("no_such_plotting_lib")
    monkeypatch.delitem(sys.modules, "no_such_plotting_lib")


def test_the_queue_summarises_its_events_for_monitoring_once_per_thousand_not_after_each(
    ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GRADIO_ANALYTICS_CACHE_FREQUENCY", raising=False)
    demo = build_app(ctx).queue()
    assert demo._queue.ANAYLTICS_CACHE_FREQUENCY == gradio_costs.ANALYTICS_EVERY > 1
    monkeypatch.setenv("GRADIO_ANALYTICS_CACHE_FREQUENCY", "7")  # an operator's setting wins
    assert build_app(ctx).queue()._queue.ANAYLTICS_CACHE_FREQUENCY == 7


def test_visitors_of_one_view_get_its_kept_outputs_and_only_their_own_shell(
    ctx: AppContext, serialised: list[str]
) -> None:
    demo, built = _app(ctx, registry.default_registry().tabs)
    table = built.parts["ranking"].outputs["table"]
    first, second = Session(), Session()
    for session in (first, second):
        session.browser = True
    ctx.store()  # the results read (as the app does before its first visitor)
    plain, _ = PageState.from_query({}, tabs=built.tabs, extra_fields=built.url_fields)
    sent_first = built.show(first, plain)
    made = len(serialised)
    state, notices = PageState.from_query({"setting": "7"}, tabs=built.tabs, extra_fields=built.url_fields)
    sent_second = built.show(second, state, notices=tuple(notices))
    assert len(serialised) == made  # the same view: nothing serialised again
    assert sent_second[table] == sent_first[table] and sent_second[table] is not sent_first[table]
    assert sent_second[built.session] is second and sent_first[built.session] is first
    assert "7" in sent_second[built.notice] and not sent_first.get(built.notice)  # one visitor's notice
    # Every page event hands gradio what _send serialised; a form (the submission) is gradio's to
    # postprocess, for the visitor who sent it.
    for fn in demo.fns.values():
        if built.session in fn.outputs and fn.api_name != "submit":
            assert fn.postprocess is False
    assert _endpoint(demo, "submit").postprocess is True


def test_an_event_postprocesses_only_what_it_changed_and_sends_what_gradio_would(
    ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = build_app(ctx)  # installs gradio_costs
    assert gradio_costs.install_changed_only_postprocess()
    built_load = next(fn for fn in demo.fns.values() if fn.name == "_load")
    outputs = list(built_load.outputs)
    assert len(outputs) > 50  # an event of the page may show any tab: every tab's outputs
    session, status, tabbar = outputs[0], outputs[2], outputs[4]
    assert isinstance(status, gr.Markdown) and isinstance(tabbar, gr.Tabs)
    # What a landing returns: the session, a changed status, the tab selected; the rest unchanged.
    returned = {session: Session(), status: "results of today", tabbar: gr.Tabs(selected="task")}
    made: list[type] = []
    real_init = gr.blocks.Block.__init__

    def counting_init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(type(self))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(gr.blocks.Block, "__init__", counting_init)
    got = asyncio.run(demo.postprocess_data(built_load, dict(returned), SessionState(demo)))
    ours = len(made)
    expected = asyncio.run(
        gradio_costs._GRADIO_POSTPROCESS(demo, built_load, dict(returned), SessionState(demo))
    )
    assert got == expected
    assert got[2] == "results of today" and got[4]["selected"] == "task"
    htmls = sum(isinstance(output, gr.HTML) for output in outputs)
    assert sum(value == gradio_costs.EMPTY_UPDATE for value in got) == len(outputs) - 3 - htmls
    # Gradio constructs a copy of every output left unchanged; the page's events construct only
    # the update that carries something (the tab bar) and the HTML outputs' (left to gradio).
    assert set(made[:ours]) == {gr.Tabs, gr.HTML} and htmls
    assert {gr.Dataframe, gr.Plot, gr.Dropdown} <= set(made[ours:])
    # A state left unchanged is sent as nothing, as gradio does (it stays on the server).
    no_session = {status: "results of today"}
    got = asyncio.run(demo.postprocess_data(built_load, dict(no_session), SessionState(demo)))
    assert got[0] is None
    assert got == asyncio.run(
        gradio_costs._GRADIO_POSTPROCESS(demo, built_load, dict(no_session), SessionState(demo))
    )
