"""The views most visitors open first are rendered at the warm-up, before any visitor asks: the
first visitor of a results version is served a kept render, not one computed for it."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import gradio as gr

from leaderboard.state import PageState
from leaderboard.tracks.evalita.app.views import board as board_module
from leaderboard.tracks.evalita.definition import TRACK
from leaderboard.tracks.evalita.vocabulary import Setting
from leaderboard.ui import registry
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page, Session
from tests.ui.store import sample_app_context


def _ctx(tmp_path: Path) -> AppContext:
    return sample_app_context(tmp_path)


def _app(tmp_path: Path) -> tuple[AppContext, Page]:
    ctx = _ctx(tmp_path)
    with gr.Blocks():
        page = Page(ctx, registry.default_registry().tabs)
        page.build_header()
        page.build_tabs()
    return ctx, page


def test_the_first_visitor_of_a_version_is_served_renders_made_at_the_warm_up(tmp_path: Path) -> None:
    ctx, page = _app(tmp_path)
    assert page.renders.computed == 0
    ctx.warm()  # what app.py starts in a background thread
    warmed = page.renders.computed
    shared = [tab for tab in page.tabs.values() if tab.shared_render]
    assert warmed >= len(shared) + 1  # each shared tab's plain view, and the ranking's other setting

    session = Session()
    session.browser = True
    plain, _ = PageState.from_query({}, tabs=page.tabs, extra_fields=page.url_fields)
    page.show(session, plain)  # a plain visit
    page.show(session, session.state.with_value("setting", Setting.FIVE))  # the other setting
    back = session.state.with_value("setting", Setting.ZERO)
    page.show(session, back)
    for tab in ("task", "model", "plots"):  # each tab opened from the plain ranking
        page.show(session, replace(back, tab=tab))
    assert page.renders.computed == warmed  # every one served from the warm-up's renders
    assert page.renders.served >= 6


def test_visitors_arriving_while_the_view_is_built_wait_for_that_one_build(
    tmp_path: Path, monkeypatch
) -> None:
    ctx = _ctx(tmp_path)
    ctx.store()
    built = []
    build = board_module.Board.of_store.__func__

    def slow(cls, store):  # the warm-up's build, slow enough for visitors to arrive meanwhile
        built.append(1)
        time.sleep(0.3)
        return build(cls, store)

    monkeypatch.setattr(board_module.Board, "of_store", classmethod(slow))
    got = []
    visitors = [threading.Thread(target=lambda: got.append(ctx.snapshot(TRACK))) for _ in range(4)]
    for visitor in visitors:
        visitor.start()
    for visitor in visitors:
        visitor.join()
    assert len(built) == 1 and len(got) == 4 and all(view is got[0] for view in got)


def test_the_first_visitors_view_is_rendered_before_the_rest_of_the_warm_up(
    tmp_path: Path, monkeypatch
) -> None:
    """A visitor arriving at start waits for the default view alone: it is rendered as soon as the
    board exists, before the board's other settings and metric sets are warmed."""
    ctx, page = _app(tmp_path)
    order: list[str] = []
    board_warm = board_module.Board.warm
    first_render = page.warm_first_render

    def warm_board(self) -> None:
        order.append("board warmed")
        board_warm(self)

    def first() -> None:
        first_render()
        order.append(f"first render ({page.renders.computed} computed)")

    monkeypatch.setattr(board_module.Board, "warm", warm_board)
    ctx.first_views[ctx.first_views.index(first_render)] = first
    ctx.warm()
    assert order == ["first render (1 computed)", "board warmed"]
    plain, _ = PageState.from_query({}, tabs=page.tabs, extra_fields=page.url_fields)
    computed = page.renders.computed
    session = Session()
    session.browser = True
    page.show(session, plain)  # the plain visit: the render made first
    assert page.renders.computed == computed
