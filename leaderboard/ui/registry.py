"""Which tabs the page has, in order: every track's, as its spec lists them, then the shared ones.

A track's tabs, the panels it adds to other tracks' pages and its About section are named in
its :class:`~eval_queue.tracks.TrackSpec` (``tabs``, ``panels``, ``about``) and imported here
when the page is built: nothing in the UI names a track.  A tab whose id a panel names (the
default track's ``task`` and ``model`` pages) receives the panels in its constructor (``panels=``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from eval_queue.tracks import TrackRegistry, TrackSpec, load_reference, track_registry
from leaderboard.ui.about import AboutTab
from leaderboard.ui.submit import SubmitTab
from leaderboard.ui.tab import Panel, Tab


@dataclass(frozen=True)
class Registry:
    """The page's tabs, in order (fresh instances: a tab holds the components it built)."""

    tabs: tuple[Tab, ...]

    def with_tab(self, tab: Tab, *, before: str | None = None) -> Registry:
        """This registry with ``tab`` added before the tab ``before`` (at the end without one)."""
        ids = [t.id for t in self.tabs]
        at = ids.index(before) if before is not None else len(ids)
        return Registry((*self.tabs[:at], tab, *self.tabs[at:]))


def track_tabs(specs: Sequence[TrackSpec]) -> list[Tab]:
    """Every track's tabs in registry order, each given the panels other tracks add to its page."""
    panels: dict[str, list[Callable[[], Panel]]] = {}
    for spec in specs:
        for ref in spec.panels:
            panels.setdefault(ref.page, []).append(load_reference(ref.panel))
    tabs: list[Tab] = []
    for spec in specs:
        for reference in spec.tabs:
            tab_class: Any = load_reference(reference)
            contributed = [make() for make in panels.get(tab_class.id, ())]
            tabs.append(tab_class(panels=contributed) if contributed else tab_class())
    return tabs


def about_sections(specs: Sequence[TrackSpec]) -> list[Callable[[], str]]:
    """Each track's About section (Markdown from its definition), in registry order."""
    return [spec.load("about") for spec in specs if spec.about is not None]


def default_registry(tracks: TrackRegistry | None = None) -> Registry:
    """The leaderboard's tabs: every track's (the default track's first: the landing page), then
    the submission form and the About page."""
    specs = (tracks or track_registry()).specs()
    return Registry((*track_tabs(specs), SubmitTab(), AboutTab(about_sections(specs))))
