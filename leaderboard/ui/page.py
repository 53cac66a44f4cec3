"""The tab mechanism: one typed page state per visitor, tabs that declare their parts by name.

A tab is a :class:`~leaderboard.ui.tab.Tab` (``leaderboard/ui/tab.py``): ``build`` lays out its
components and names them (:class:`~leaderboard.ui.tab.TabParts`), ``render(ctx, state)``
returns values keyed by those names (:class:`~leaderboard.ui.tab.Rendered`).  The :class:`Page` wires
everything by name: a control's input sets its field and re-renders the open tab; choosing
a tab renders it (only then: a tab is computed when it is first shown); a row click or a
link is a state transition like any other.  Nothing is matched by position.

What a visitor sees is remembered per session (:class:`Session`, kept on the server): a
value is sent only when its :func:`~leaderboard.ui.common.fingerprint` differs from what
the browser already shows, so an unchanged table or plot is never sent again.  Programmatic
API callers (``gradio_client``) never load the page and always get every value.

Other tracks add a tab by writing one module with a ``Tab`` and registering it in
:func:`leaderboard.ui.registry.default_registry`; they add a ``Panel`` to another track's task
or model page the same way, without that page importing them.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import gradio as gr

from leaderboard.state import (
    DEFAULT_TAB,
    Notice,
    PageState,
    UrlField,
    notices_markdown,
    registered_url_fields,
)
from leaderboard.ui.common import ERROR_TEXT, LazyFile, fingerprint, to_update
from leaderboard.ui.context import AppContext
from leaderboard.ui.render_cache import RenderCache, SharedRender, sendable, serialise
from leaderboard.ui.tab import Api, Component, Tab, TabParts

logger = logging.getLogger(__name__)

#: Page events answer in one HTTP round trip (``queue=False``: no queue join and event stream);
#: they only read the in-memory snapshot.  Store I/O (a submission) stays on the queue.
QUEUED = False
#: A state transition: the current state and the event's named values → the new state.
Step = Callable[..., PageState]


class Session:
    """One visitor's page, kept on the server: its state and what its browser shows.

    A plain class, not a dataclass: gradio serialises dataclass values of a ``gr.State`` into
    the page config, and this one holds a lock and must stay on the server.
    """

    def __init__(
        self,
        state: PageState | None = None,
        browser: bool = False,
        shown: dict[int, str] | None = None,
        version: int = -1,
    ) -> None:
        self.state = state or PageState()
        #: A page was loaded in a browser (API callers never load one, and always get every value).
        self.browser = browser
        #: Component id → fingerprint of the value the browser shows.
        self.shown: dict[int, str] = shown or {}
        #: The results version the open tab was last rendered from.
        self.version = version
        self.lock = threading.Lock()

    def __deepcopy__(self, memo: dict) -> Session:
        # gradio deep-copies the initial value for each new visitor; a lock is made anew, not copied.
        return Session(self.state, self.browser, dict(self.shown), self.version)


#: The page's tab bar (a link's tab is selected in the page's config: :mod:`leaderboard.ui.landing`).
TABS_ELEM_ID = "page-tabs"

# Writes the page state into the address bar without reloading (shareable links).
URL_JS = """(query) => {
  const url = new URL(window.location.href);
  url.search = query ? "?" + query : "";
  window.history.replaceState(window.history.state, "", url);
  return [];
}"""

# After the first render: the address, then the tab the link names made sure of.  If the tab
# bar mounted only after the load's update arrived, that selection was lost; a click on the
# tab's button is what a person would do (it comes back as a select of the tab already
# rendered: nothing is re-sent).  Then marks the page as rendered for tests and monitors.
LANDING_JS = """(query) => {
  const url = new URL(window.location.href);
  url.search = query ? "?" + query : "";
  window.history.replaceState(window.history.state, "", url);
  const tab = new URLSearchParams(query || "").get("tab") || "DEFAULT_TAB";
  const land = (tries) => {
    const button = document.querySelector(`#page-tabs button[data-tab-id="${CSS.escape(tab)}"]`);
    if (button && button.getAttribute("aria-selected") !== "true") button.click();
    if (!button && tries > 0) { setTimeout(() => land(tries - 1), 100); return; }
    document.body.dataset.evalitaReady = "1";
  };
  land(100);
  return [];
}""".replace("DEFAULT_TAB", DEFAULT_TAB)


class Page:
    """The page's shell (session, tabs, status, notice, address) and the wiring by name."""

    def __init__(self, ctx: AppContext, tabs: Sequence[Tab]) -> None:
        ids = [tab.id for tab in tabs]
        if len(set(ids)) != len(ids):
            raise ValueError(f"tab ids must be unique, got {ids}")
        self.ctx = ctx
        self.tabs: dict[str, Tab] = {tab.id: tab for tab in tabs}
        self.parts: dict[str, TabParts] = {}
        #: The link fields its tabs own (a field several tabs declare: the first declaration).
        self.url_fields: dict[str, UrlField] = {}
        for tab in tabs:
            for name, url_field in tab.url_fields.items():
                self.url_fields.setdefault(name, url_field)
        #: The state of a plain address on this page.
        self.blank = PageState(fields=MappingProxyType({**registered_url_fields(), **self.url_fields}))
        # Each visitor gets a deep copy of this pristine session (see Session.__deepcopy__).
        self.session = gr.State(Session(self.blank))
        self.address = gr.Textbox(visible=False, elem_id="page-address")
        self.api_trigger = gr.Button(visible=False)
        self.status = gr.Markdown(elem_id="status", render=False)
        self.notice = gr.Markdown(elem_id="notice", render=False)
        self.tabbar: gr.Tabs | None = None
        self._pending: list[Callable[[], None]] | None = []
        self.renders = RenderCache()
        ctx.first_views.append(self.warm_first_render)
        ctx.after_warm.append(self.warm_renders)

    # -- building ---------------------------------------------------------------------------

    def build_header(self) -> gr.Button:
        """Lay out the status line (with its Refresh button) and the notice line; returns the button."""
        with gr.Row():
            self.status.render()
            refresh = gr.Button("↻ Refresh", size="sm", scale=0, elem_id="refresh")
        self.notice.render()
        return refresh

    def build_tabs(self) -> None:
        """Lay out every tab in order and wire its controls and endpoints."""
        with gr.Tabs(selected=DEFAULT_TAB, elem_id=TABS_ELEM_ID) as self.tabbar:
            for tab in self.tabs.values():
                with gr.Tab(tab.label, id=tab.id, elem_id=f"tab-{tab.id}"):
                    self.parts[tab.id] = tab.build(self)
        for tab in self.tabs.values():
            for name, control in self.parts[tab.id].controls.items():
                self._wire_control(name, control)
            for api_name, api in tab.apis.items():
                self._wire_api(tab, api_name, api)
        # The tabs' own transitions (row clicks, pagers) need every tab's outputs: wired now.
        pending, self._pending = self._pending, None
        for wire in pending or ():
            wire()
        self._seed_shown()
        self.tabbar.select(
            self._guarded(self._on_tab_select),
            inputs_kwargs={"session": self.session},
            outputs=self._all_outputs(),
            api_visibility="private",
            show_progress="hidden",
            queue=QUEUED,
            postprocess=False,  # _send hands gradio serialised values
        ).then(None, self.address, None, js=URL_JS, api_visibility="private", queue=False)

    def _seed_shown(self) -> None:
        """A new visitor's page shows what the page config holds: the controls' initial values, the
        first tab, an empty address.  The pristine session knows it, so a plain visit is sent only
        what differs (the ranking), not every control again."""
        assert self.tabbar is not None
        pristine: Session = self.session.value
        pristine.shown[self.tabbar._id] = fingerprint(DEFAULT_TAB)
        pristine.shown[self.address._id] = fingerprint("")
        for parts in self.parts.values():
            for component in parts.controls.values():
                pristine.shown[component._id] = fingerprint(component.value)

    def _all_outputs(self) -> list[Component]:
        shell = [self.session, self.address, self.status, self.notice]
        assert self.tabbar is not None
        shell.append(self.tabbar)
        seen: dict[int, Component] = {c._id: c for c in shell}
        for parts in self.parts.values():
            for component in (*parts.controls.values(), *parts.outputs.values()):
                seen.setdefault(component._id, component)
        return list(seen.values())

    def _wire_control(self, name: str, control: Component) -> None:
        def step(state: PageState, value: object) -> PageState:
            return state.with_value(name, value)

        # A textbox fires ``input`` only on character keys (not on Backspace, Delete or a paste):
        # its ``change`` catches every edit.  A change the server made repeats the state: a no-op.
        trigger = control.change if isinstance(control, gr.Textbox) else control.input
        self.transition([trigger], step, {"value": control}, echo=False, trigger_mode="always_last")

    def _wire_api(self, tab: Tab, api_name: str, api: Api) -> None:
        parts = self.parts[tab.id]
        inputs = {name: self._api_input(tab, name) for name in api.fields}

        def endpoint(**values: object) -> tuple:
            state = replace(self.blank, tab=tab.id)
            for name, value in values.items():
                state = state.with_value(name, value)
            shared = self.render(tab, state)
            # A shared render keeps what it sends (made once); a tab's own render is made per call.
            return tuple(sendable(shared.served(name, parts.outputs[name])) for name in api.outputs)

        endpoint.__name__ = f"api_{api_name}"
        self.api_trigger.click(
            self._guarded(endpoint),
            inputs_kwargs=inputs,
            outputs=[parts.outputs[name] for name in api.outputs],
            api_name=api_name,
            # As the page's events: one HTTP round trip, no queue join and event stream (the
            # views are shared renders of the in-memory snapshot; issue 32's load bench).
            queue=QUEUED,
            # The endpoint returns its outputs serialised (kept with the shared render).
            postprocess=False,
        )

    def _api_input(self, tab: Tab, name: str) -> Component:
        """The component an endpoint reads ``name`` from: the tab's control for it, else another
        tab's (the ranking's scope checkbox), else a hidden one made for the endpoint."""
        owners = [self.parts[tab.id], *(self.parts[t.id] for t in self.tabs.values() if t is not tab)]
        for parts in owners:
            if name in parts.controls:
                return parts.controls[name]
        default = self.blank.get(name)
        if isinstance(default, int) and not isinstance(default, bool):
            return gr.Number(value=default, precision=0, visible=False, label=name)
        return gr.Textbox(value=str(default or ""), visible=False, label=name)

    # -- events -----------------------------------------------------------------------------

    def transition(
        self,
        triggers: Sequence[Any],
        step: Step,
        inputs: Mapping[str, Component] | None = None,
        *,
        event_data: bool = False,
        echo: bool = True,
        trigger_mode: str | None = None,
    ) -> None:
        """Wire an event that changes the page state: ``step(state, **inputs[, evt])`` returns the
        new state; the tab it names is rendered and shown, and the address rewritten.

        With ``echo=False`` (a control's own input) the triggering control is not sent back: the
        browser already shows what the visitor typed.
        """
        if self._pending is not None:  # still building the tabs: wire once every output exists
            self._pending.append(
                lambda: self.transition(
                    triggers, step, inputs, event_data=event_data, echo=echo, trigger_mode=trigger_mode
                )
            )
            return
        inputs = dict(inputs or {})

        def apply(session: Session, values: dict[str, object]) -> dict:
            with session.lock:
                new_state = step(session.state, **values)
                if not echo:
                    for name, component in inputs.items():
                        session.shown[component._id] = fingerprint(self._shown_value(values[name]))
                return self.show(session, new_state)

        def _transition(session: Session, **values: object) -> dict:
            return apply(session, values)

        def _transition_on(session: Session, evt: gr.SelectData, **values: object) -> dict:
            return apply(session, {**values, "evt": evt})

        gr.on(
            triggers,
            self._guarded(_transition_on if event_data else _transition),
            inputs_kwargs={"session": self.session, **inputs},
            outputs=self._all_outputs(),
            api_visibility="private",
            show_progress="hidden",
            queue=QUEUED,
            trigger_mode=trigger_mode,  # type: ignore[arg-type]
            postprocess=False,  # _send hands gradio serialised values
        ).then(None, self.address, None, js=URL_JS, api_visibility="private", queue=False)

    def download(self, triggers: Sequence[Any], tab: Tab, name: str) -> None:
        """Wire ``triggers`` (a visible button) to make ``tab``'s :class:`~leaderboard.ui.common.LazyFile`
        output ``name`` for the view the visitor sees, hand it to that output (a hidden
        ``gr.DownloadButton``) and click it in the browser (gradio issue #9230's pattern): a
        render never sends a lazy file, most visitors never ask for it."""
        if self._pending is not None:  # still building the tabs: wire once every output exists
            self._pending.append(lambda: self.download(triggers, tab, name))
            return
        component = self.parts[tab.id].outputs[name]

        def _download(session: Session) -> object:
            with session.lock:
                state = replace(session.state, tab=tab.id)
            # The render the visitor sees (a kept one: the same view, its file made once).
            return to_update(component, self.render(tab, state).rendered.values[name])

        _download.__name__ = f"download_{tab.id}_{name}"
        gr.on(
            triggers,
            self._guarded(_download),
            inputs_kwargs={"session": self.session},
            outputs=[component],
            api_visibility="private",
            show_progress="hidden",
            queue=QUEUED,
        ).then(
            None,
            None,
            None,
            js=f"() => document.querySelector({('#' + str(component.elem_id))!r})?.click()",
            api_visibility="private",
            queue=False,
        )

    @staticmethod
    def _shown_value(value: object) -> object:
        # A control's value as :meth:`PageState.control_value` would give it (lists, not tuples).
        return list(value) if isinstance(value, tuple) else value

    def bind(
        self,
        triggers: Sequence[Any],
        fn: Callable[..., Mapping[str, object]],
        inputs: Mapping[str, Component],
        outputs: Mapping[str, Component],
        *,
        api_name: str | None = None,
        request: bool = False,
    ) -> None:
        """Wire a handler that is not a state transition (a form): ``fn(ctx[, request], **inputs)``
        returns values by output name; they are always sent (and remembered as shown)."""

        def _bound(session: Session, request_: gr.Request, **values: object) -> dict:
            extra = {"request": request_} if request else {}
            result = fn(self.ctx, **extra, **values)
            updates = {}
            for name, value in result.items():
                component = outputs[name]
                session.shown[component._id] = fingerprint(value)
                updates[component] = to_update(component, value)
            return updates

        gr.on(
            triggers,
            self._guarded(_bound),
            inputs_kwargs={"session": self.session, **inputs},
            outputs=list(outputs.values()),
            api_name=api_name,
            api_visibility="public" if api_name else "private",
        )

    def on_load(self, demo: gr.Blocks) -> None:
        """The first render: the link's state, the tab it names (and only that one)."""

        def _load(session: Session, request: gr.Request) -> dict:
            params = dict(request.query_params) if request is not None else {}
            state, notices = PageState.from_query(params, tabs=self.tabs, extra_fields=self.url_fields)
            self.ctx.fresh()  # a visitor after a quiet spell gets re-read results, not a stale snapshot
            with session.lock:
                session.browser = True
                return self.show(session, state, notices=tuple(notices))

        demo.load(
            self._guarded(_load),
            inputs_kwargs={"session": self.session},
            outputs=self._all_outputs(),
            api_visibility="private",
            show_progress="hidden",
            queue=QUEUED,
            postprocess=False,  # _send hands gradio serialised values
        ).then(None, self.address, None, js=LANDING_JS, api_visibility="private", queue=False)

    def on_refresh(self, triggers: Sequence[Any], *, force: bool) -> None:
        """Re-read the results (throttled by the context) and, if they changed, re-render the open tab."""

        def _reread(session: Session) -> dict:
            self.ctx.refresh(force=force)
            with session.lock:
                tab = self.tabs.get(session.state.tab)
                if session.version == self.ctx.version and not (tab is not None and tab.live):
                    return self._send(session, {self.status: self.ctx.status_line()})
                return self.show(session, session.state)

        gr.on(
            triggers,
            self._guarded(_reread),
            inputs_kwargs={"session": self.session},
            outputs=self._all_outputs(),
            api_visibility="private",
            show_progress="hidden",
            queue=QUEUED,
            postprocess=False,  # _send hands gradio serialised values
        )

    def _on_tab_select(self, session: Session, evt: gr.SelectData) -> dict:
        labels = {tab.label: tab.id for tab in self.tabs.values()}
        data = getattr(evt, "_data", None) or {}
        tab_id = data.get("id") if data.get("id") in self.tabs else labels.get(str(data.get("value")))
        with session.lock:
            if tab_id is None:
                return self._send(session, {})
            return self.show(session, replace(session.state, tab=tab_id))

    # -- rendering --------------------------------------------------------------------------

    def show(self, session: Session, state: PageState, *, notices: tuple[Notice, ...] = ()) -> dict:
        """Render ``state``'s tab and select it; returns only what the browser does not show yet."""
        tab = self.tabs.get(state.tab) or self.tabs[DEFAULT_TAB]
        state = replace(state, tab=tab.id)
        shared = self.render(tab, state)
        rendered = shared.rendered
        state = rendered.state or state
        session.state = state
        session.version = self.ctx.version
        parts = self.parts[tab.id]
        values: dict[Component, object] = {
            self.session: session,
            self.address: state.to_query(),
            self.status: self.ctx.status_line(),
            self.notice: notices_markdown((*notices, *rendered.notices)),
        }
        assert self.tabbar is not None
        values[self.tabbar] = tab.id
        for name, control in parts.controls.items():
            values[control] = state.control_value(name)
        digests: dict[Component, str] = {}
        for name, value in rendered.values.items():
            values[parts.outputs[name]] = value
            digests[parts.outputs[name]] = shared.digests[name]
        return self._send(session, values, digests, served=(shared, parts.outputs))

    def warm_first_render(self) -> None:
        """Render the default tab's plain view (a plain address) now: what a visitor arriving
        while the app starts waits for, computed before the rest of the warm-up."""
        tab = self.tabs.get(DEFAULT_TAB)
        if tab is None or not tab.shared_render:
            return
        self._warm_render(tab, {})

    def warm_renders(self) -> None:
        """Render each shared tab's plain view and its :attr:`~leaderboard.ui.tab.Tab.warm_queries`
        for the current results version, in the order the tabs are laid out (the default tab
        first): the first visitors of a version are then served kept renders."""
        for tab in self.tabs.values():
            if not tab.shared_render:
                continue
            for query in ({}, *tab.warm_queries):
                self._warm_render(tab, query)

    def _warm_render(self, tab: Tab, query: Mapping[str, str]) -> None:
        state, _ = PageState.from_query(
            {**query, "tab": tab.id}, tabs=self.tabs, extra_fields=self.url_fields
        )
        try:
            self.render(tab, state)
        except Exception:  # a background task: log it; a visitor's render reports it
            logger.exception("warming the %s tab's view %s failed", tab.id, query)

    def render(self, tab: Tab, state: PageState) -> SharedRender:
        """``tab``'s render of ``state``: shared by every visitor when the tab allows it."""
        if not tab.shared_render:
            rendered = tab.render(self.ctx, state)
            return SharedRender(rendered, {name: fingerprint(v) for name, v in rendered.values.items()})
        return self.renders.get((tab.id, self.ctx.version, state), lambda: tab.render(self.ctx, state))

    def _send(
        self,
        session: Session,
        values: Mapping[Component, object],
        digests: Mapping[Component, str] = {},
        served: tuple[SharedRender, Mapping[str, Component]] | None = None,
    ) -> dict:
        """The gradio updates for ``values`` the browser does not already show, serialised (the
        events are wired ``postprocess=False``): a render's outputs as ``served`` keeps them.

        Always at least the session (kept on the server, never sent): gradio reads an empty
        dict as one output value, not as "nothing to update".
        """
        kept = {component: name for name, component in served[1].items()} if served else {}
        updates: dict[Component, object] = {self.session: session}
        for component, value in values.items():
            if component is self.session:
                updates[component] = value
                continue
            if component is self.tabbar:
                digest = fingerprint(value)
                if not session.browser or session.shown.get(component._id) != digest:
                    updates[component] = gr.Tabs(selected=value)
                    session.shown[component._id] = digest
                continue
            if isinstance(value, LazyFile):
                continue  # made and sent only when asked (Page.download; an API endpoint resolves it)
            digest = digests.get(component) or fingerprint(value)
            if session.browser and session.shown.get(component._id) == digest:
                continue
            session.shown[component._id] = digest
            if served and component in kept:
                updates[component] = sendable(served[0].served(kept[component], component))
            else:
                updates[component] = serialise(component, value)
        return updates

    # -- error handling -----------------------------------------------------------------------

    @staticmethod
    def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` with unexpected failures logged (with the traceback) and shown as a short message."""

        @functools.wraps(fn)  # keeps the signature: gradio injects gr.Request / gr.SelectData by annotation
        def guarded(*args: object, **kwargs: object) -> Any:
            try:
                return fn(*args, **kwargs)
            except gr.Error:
                raise
            except Exception as exc:  # the outermost UI handler: log it, show a readable message
                logger.exception("UI handler %s failed", getattr(fn, "__qualname__", fn))
                raise gr.Error(ERROR_TEXT) from exc

        return guarded
