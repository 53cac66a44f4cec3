"""What a tab is: the protocol a tab module (or another track's panel) implements.

A tab subclasses :class:`Tab`: ``build(page)`` lays out its components inside its ``gr.Tab`` and
returns them as :class:`TabParts` — *controls* keyed by the :class:`~leaderboard.state.PageState`
field each sets, *outputs* keyed by name — and ``render(ctx, state)`` returns a :class:`Rendered`
whose values are keyed by those output names (view values: see :mod:`leaderboard.ui.common`).
A :class:`Panel` is a block another track contributes to a page it does not own (the default
track's task or model page).  :class:`leaderboard.ui.page.Page` wires both by name; a tab registers in
:mod:`leaderboard.ui.registry`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import gradio as gr

from leaderboard.state import Notice, PageState, UrlField
from leaderboard.ui.context import AppContext

if TYPE_CHECKING:  # a tab's build receives the page it is wired into
    from leaderboard.ui.page import Page

Component = gr.components.Component


@dataclass(frozen=True)
class TabParts:
    """A tab's components by name: controls keyed by the state field they set, and outputs."""

    controls: Mapping[str, Component]
    outputs: Mapping[str, Component]


@dataclass(frozen=True)
class Rendered:
    """A render: values by output name; the state as shown when the tab corrected it (an unknown
    model in a link falls back to the best one), with a notice saying so."""

    values: Mapping[str, object]
    state: PageState | None = None
    notices: tuple[Notice, ...] = ()


@dataclass(frozen=True)
class Api:
    """A named endpoint for ``gradio_client``: the state fields it takes and the outputs it returns."""

    fields: tuple[str, ...]
    outputs: tuple[str, ...]


class Tab(ABC):
    """One tab of the page; subclasses set :attr:`id` (its ``?tab=`` value) and :attr:`label`."""

    id: ClassVar[str]
    label: ClassVar[str]
    #: Link fields this tab owns beyond :class:`PageState`'s own (a track's own setting).
    url_fields: ClassVar[Mapping[str, UrlField]] = {}
    #: Re-rendered on every refresh while open, even when the results did not change (the queue).
    live: ClassVar[bool] = False
    #: Endpoints for ``gradio_client`` (name → fields taken, outputs returned).
    apis: ClassVar[Mapping[str, Api]] = {}
    #: ``render`` depends only on the results version and the state: rendered once per pair and
    #: shared by every visitor (:mod:`leaderboard.ui.render_cache`).
    shared_render: ClassVar[bool] = False
    #: Link queries (without ``tab``) of this tab's views rendered at each warm-up, before any
    #: visitor asks (a shared tab's plain view always is): the views most visitors open first.
    warm_queries: ClassVar[tuple[Mapping[str, str], ...]] = ()

    @abstractmethod
    def build(self, page: Page) -> TabParts:
        """Lay out the tab's components (inside its ``gr.Tab``) and name them."""

    @abstractmethod
    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        """The tab's outputs for ``state`` (called only while the tab is shown)."""


class Panel(ABC):
    """A block another track contributes to a page it does not own (the task or the model page).

    Its outputs are namespaced by :attr:`id` inside the host tab; ``render`` returns values
    keyed by the names ``build`` gave.
    """

    id: ClassVar[str]

    @abstractmethod
    def build(self) -> Mapping[str, Component]:
        """Lay out the panel's components where the host places it, and name them."""

    @abstractmethod
    def render(self, ctx: AppContext, state: PageState) -> Mapping[str, object]:
        """The panel's values for the host page's state."""


def build_panels(panels: Sequence[Panel]) -> dict[str, Component]:
    """Build contributed panels; their outputs, namespaced ``<panel id>.<name>``."""
    outputs: dict[str, Component] = {}
    for panel in panels:
        outputs.update({f"{panel.id}.{name}": c for name, c in panel.build().items()})
    return outputs


def render_panels(panels: Sequence[Panel], ctx: AppContext, state: PageState) -> dict[str, object]:
    values: dict[str, object] = {}
    for panel in panels:
        values.update({f"{panel.id}.{name}": v for name, v in panel.render(ctx, state).items()})
    return values
