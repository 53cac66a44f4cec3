"""The whole page: header, status line, the registered tabs, the refresh timer.

``build_app(ctx)`` only builds the Blocks: nothing is read from the stores until the page
loads.  The tabs come from :func:`leaderboard.ui.registry.default_registry` (or the
registry given); :class:`~leaderboard.ui.page.Page` wires them by name.
"""

from __future__ import annotations

import gradio as gr
from starlette.middleware import Middleware

from leaderboard.state import DEFAULT_TAB
from leaderboard.ui import gradio_costs
from leaderboard.ui.context import AppContext
from leaderboard.ui.landing import LandingTabMiddleware
from leaderboard.ui.page import TABS_ELEM_ID, Page
from leaderboard.ui.registry import Registry, default_registry
from leaderboard.ui.submit import QUEUE_OUTPUTS, SubmitTab, render_queue

CSS = """
#ranking-table table { font-size: 0.86rem; }
.gradio-container .cell-wrap a, #model-header a { color: var(--link-text-color); text-decoration: underline; }
.prompts { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
.prompts td, .prompts th { border: 1px solid var(--border-color-primary); padding: 4px 8px; vertical-align: top; }
.prompt-text { white-space: pre-wrap; font-family: var(--font-mono); font-size: 0.82rem; }
.slot { background: var(--color-accent-soft); border-radius: 3px; padding: 0 2px; font-style: italic; }
#header h1 { margin-bottom: 0; }
.plain-table { border-collapse: collapse; font-size: 0.86rem; width: 100%; }
.plain-table th, .plain-table td { border-bottom: 1px solid var(--border-color-primary); padding: 3px 8px; text-align: left; }
/* The last column of a keyed table is the run's key: data for a click, not for reading. */
.keyed-table .header-cell:last-child, .keyed-table .virtual-row .body-cell:last-child,
.keyed-table .sizing-body td:last-child { display: none; }
/* A copyable script (CodeBlock) wraps its long lines, as the code editor it replaced did. */
#model-recipe pre, #model-recipe pre code { white-space: pre-wrap; overflow-wrap: anywhere; }
/* Paged tables are sorted by the server (the visible Sort control), not one page at a time. */
.keyed-table .cell-menu-button { display: none; }
"""

HEADER = (
    "# Evalita-LLM Leaderboard\n"
    "Large Language Models on **native Italian** tasks — the ten tasks of the Evalita-LLM benchmark, several "
    "prompts each, ranked by the average **Combined Performance Score** (CPS, 0–100).  See *About* for the metrics."
)


def build_app(ctx: AppContext, registry: Registry | None = None) -> gr.Blocks:
    """The page with ``registry``'s tabs (the default ones unless given)."""
    registry = registry or default_registry()
    gradio_costs.install()  # gradio's per-session and per-call work this page does not need
    with gr.Blocks(
        title="Evalita-LLM Leaderboard", analytics_enabled=False, delete_cache=(3600, 3600)
    ) as demo:
        gr.Markdown(HEADER, elem_id="header")
        page = Page(ctx, registry.tabs)
        demo.landing_tabs = tuple(page.tabs)  # type: ignore[attr-defined]  # read by landing_middleware
        refresh = page.build_header()
        page.build_tabs()
        timer = gr.Timer(ctx.refresh_s)
        page.on_load(demo)
        # Freshness: each page's timer re-reads results once the shared snapshot is older than the
        # period; the button at most once per ``min_reread_s``.  Only what changed is re-sent.
        page.on_refresh([timer.tick], force=False)
        page.on_refresh([refresh.click], force=True)
        _refresh_endpoint(page)
    return demo


def landing_middleware(demo: gr.Blocks) -> list[Middleware]:
    """The server middleware for ``demo`` (``launch(app_kwargs={"middleware": ...})``): a link's tab
    selected in the page's config (:mod:`leaderboard.ui.landing`)."""
    tabs = getattr(demo, "landing_tabs", ())
    return [Middleware(LandingTabMiddleware, tabs=tabs, default=DEFAULT_TAB, tabs_elem_id=TABS_ELEM_ID)]


def _refresh_endpoint(page: Page) -> None:
    """``/refresh`` for ``gradio_client``: the status line and, when the page has it, the queue."""
    queue = next((page.parts[tab.id].outputs for tab in page.tabs.values() if isinstance(tab, SubmitTab)), {})

    def refresh(ctx: AppContext) -> dict[str, object]:
        ctx.refresh()
        values: dict[str, object] = {"status": ctx.status_line()}
        if queue:
            values.update(render_queue(ctx))
        return values

    outputs = {"status": page.status, **{name: queue[name] for name in QUEUE_OUTPUTS if name in queue}}
    page.bind([page.api_trigger.click], refresh, {}, outputs, api_name="refresh")
