"""Which tabs the page has, in order, and which panels other tracks add to the Evalita pages.

This is the one place a track registers its UI: a tab module (a :class:`~leaderboard.ui.tab.Tab`)
is added to :func:`default_registry`'s list, a panel for the Evalita task or model page
(a :class:`~leaderboard.ui.tab.Panel`) to its panel lists.  No tab imports another.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from leaderboard.ui.about import AboutTab
from leaderboard.ui.submit import SubmitTab
from leaderboard.ui.tab import Panel, Tab


#: Panels other tracks contribute to the Evalita task page (e.g. judge rubric scores on SUM).
def lazy(reference: str) -> Callable[[], Any]:
    """``"module:attribute"`` → a callable that imports it when first called and calls it.

    Tracks are named, not imported, here: a track's UI module imports ``leaderboard.ui``, so
    importing it while this package initialises would be circular.
    """

    def make() -> Any:
        module_name, _, attribute = reference.partition(":")
        return getattr(importlib.import_module(module_name), attribute)()

    make.__qualname__ = f"lazy({reference})"
    return make


TASK_PANELS: tuple[Callable[[], Panel], ...] = (lazy("leaderboard.tracks.judge.app.panels:TaskJudgePanel"),)
#: Panels other tracks contribute to the Evalita model page (e.g. a judge's criterion means).
MODEL_PANELS: tuple[Callable[[], Panel], ...] = (lazy("leaderboard.tracks.judge.app.panels:ModelJudgePanel"),)
#: Tabs of other tracks, after the Evalita ones (each a fresh instance per page).
TRACK_TABS: tuple[Callable[[], Tab], ...] = (
    lazy("leaderboard.tracks.long_context.app.tab:LongContextTab"),
    lazy("leaderboard.tracks.judge.app.tab:JudgesTab"),
)
#: Sections other tracks add to the About page (Markdown, derived from their definitions).
ABOUT_SECTIONS: tuple[Callable[[], str], ...] = (
    lazy("leaderboard.tracks.long_context.definition:about_markdown"),
    lazy("leaderboard.tracks.judge.definition:about_markdown"),
)


@dataclass(frozen=True)
class Registry:
    """The page's tabs, in order (fresh instances: a tab holds the components it built)."""

    tabs: tuple[Tab, ...]

    def with_tab(self, tab: Tab, *, before: str | None = None) -> Registry:
        """This registry with ``tab`` added before the tab ``before`` (at the end without one)."""
        ids = [t.id for t in self.tabs]
        at = ids.index(before) if before is not None else len(ids)
        return Registry((*self.tabs[:at], tab, *self.tabs[at:]))


def default_registry(
    task_panels: Sequence[Callable[[], Panel]] = TASK_PANELS,
    model_panels: Sequence[Callable[[], Panel]] = MODEL_PANELS,
) -> Registry:
    """The leaderboard's tabs: Evalita's ranking, task, model and plots pages, the other tracks', then
    the shared ones."""
    return Registry(
        (
            _tab("leaderboard.tracks.evalita.app.tab.ranking:RankingTab")(),
            _tab("leaderboard.tracks.evalita.app.tab.task:TaskTab")([make() for make in task_panels]),
            _tab("leaderboard.tracks.evalita.app.tab.model:ModelTab")([make() for make in model_panels]),
            _tab("leaderboard.tracks.evalita.app.tab.plots:PlotsTab")(),
            *(make() for make in TRACK_TABS),
            SubmitTab(),
            AboutTab(ABOUT_SECTIONS),
        )
    )


def _tab(reference: str) -> Any:
    module_name, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
