"""The toy track's page side: its About text and its tab (its parser and export: ``export.py``)."""

from __future__ import annotations

import gradio as gr

from leaderboard.state import PageState
from leaderboard.ui.common import Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Rendered, Tab, TabParts
from tests.support.toy_track.export import score_table
from tests.support.toy_track.spec import TRACK


def about_markdown() -> str:
    return "### Toy track\n\nScores the length of a model id: a track for the tests."


class ToyTab(Tab):
    id = "toy"
    label = "Toy"

    def build(self, page: Page) -> TabParts:
        scores = gr.Dataframe(interactive=False, elem_id="toy-scores")
        return TabParts(controls={}, outputs={"scores": scores})

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        return Rendered({"scores": Table(score_table(ctx.track_records(TRACK), True), link_models=False)})
