"""About: what the leaderboard is, then each track's own section (its spec's ``about``, Markdown)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gradio as gr

from leaderboard.state import PageState
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Rendered, Tab, TabParts

INTRODUCTION = (
    "## About\n\n"
    "The public leaderboard for Large Language Models on **native Italian** tasks.  Each benchmark is a "
    "*track* with its own tables; tracks never mix into each other's scores.  Every number comes from "
    "lm-evaluation-harness runs made by this leaderboard's workers, and every run's answers can be "
    "browsed."
)
#: Formulas in the tracks' sections are written between single dollars.
LATEX = [{"left": "$", "right": "$", "display": False}]


class AboutTab(Tab):
    id = "about"
    label = "About"

    def __init__(self, sections: Sequence[Callable[[], str]] = ()) -> None:
        #: Each track's section (Markdown from its spec's ``about``), in registry order.
        self.sections = tuple(sections)

    def build(self, page: Page) -> TabParts:
        gr.Markdown(INTRODUCTION)
        for number, section in enumerate(self.sections, start=1):
            gr.Markdown(section(), latex_delimiters=LATEX, elem_id=f"about-track-{number}")
        return TabParts(controls={}, outputs={})

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        return Rendered({})  # static text, laid out once
