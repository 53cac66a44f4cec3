"""Renders computed once per (results version, tab, state) and shared by every visitor.

Most visitors ask for the same few views (the default ranking, the top tasks, the leading
models): a tab that opts in (:attr:`leaderboard.ui.tab.Tab.shared_render`) is rendered once per
results version and link state, and every later visitor — and every API client — gets that
render, with the digest of each value (:func:`leaderboard.ui.common.fingerprint`: what the
page compares with what a browser shows) computed once too.  What an API endpoint sends — each value as gradio serialises it (a table's
cells formatted, a figure as JSON) — is kept with the render too (:meth:`SharedRender.served`),
for the page's events and the API endpoints alike (they are wired ``postprocess=False``), so a
call for a view already asked for does no more than hand it back (issue 32: the table
and figure formatting was most of a cached call).  Only tabs that declare their render a
public view of the results share it; a tab that shows a visitor's own things (sign-in, the
submission form) does not opt in, and its renders are made per call and never kept.  Visitors asking for a view being
computed wait for it rather than compute it again (one flight per key), so concurrent visitors
add no work and no memory.  The oldest renders are dropped beyond :data:`RENDER_CACHE_SIZE`.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gradio as gr
from gradio.data_classes import GradioModel, GradioRootModel
from gradio.utils import is_prop_update

from leaderboard import heap
from leaderboard.ui.common import fingerprint, to_update
from leaderboard.ui.tab import Rendered

#: Renders kept (each a page of a table, a few small figures, or a plot of every run).
RENDER_CACHE_SIZE = 256
#: A render computed in at least this many seconds hands the C heap's free pages back after it
#: (:func:`leaderboard.heap.trim`): a long view (a custom average over 10,000 runs) leaves tens to
#: hundreds of MB of temporaries free but resident otherwise.  Not after every render: a trim walks
#: the heap (tens of ms at a GB), which a quick view's step would feel.  0.2 s since the custom
#: average's tiers are asked only for the rows shown (its render fell from ~3 s to ~0.3 s at 10,000
#: runs, under the 0.5 s this was, and the server's RSS after the browser bench rose above 1 GB).
TRIM_AFTER_S = 0.2


@dataclass(frozen=True)
class SharedRender:
    """A tab's render and the digest of each of its values (by output name)."""

    rendered: Rendered
    digests: Mapping[str, str]
    #: What gradio is sent for each output of this render (by output name), made when first sent.
    _served: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    def served(self, name: str, component: gr.components.Component) -> object:
        """Output ``name`` serialised for ``component`` (:func:`serialise`): made once, then handed
        back (to every visitor and API caller of this render).

        Two threads asking at once may both make it (the same value): no lock on the path every
        call takes.  Hand gradio :func:`sendable` copies: it edits an update dict in place.
        """
        value = self._served.get(name, _MISSING)
        if value is _MISSING:
            value = self._served[name] = serialise(component, self.rendered.values[name])
        return value


_MISSING = object()


def sendable(value: object) -> object:
    """A served value as gradio may be handed it: a copy of an update dict (gradio pops its value
    and drops its empty props in place), the value inside shared and never changed."""
    return dict(value) if isinstance(value, dict) else value


def serialise(component: gr.components.Component, value: object) -> object:
    """What gradio sends to ``component`` for a view value, as its postprocessing makes it: for an
    endpoint wired with ``postprocess=False``, which then sends it as it is.

    An update is postprocessed by a component made from ``component``'s arguments and the
    update's, as gradio does for each call; a plain value by ``component`` itself.
    """
    update = to_update(component, value)
    if not is_prop_update(update):
        return _dumped(component.postprocess(update))
    props = {k: v for k, v in update.items() if k not in ("value", "__type__")}
    served: dict[str, Any] = {**props, "__type__": "update"}
    if "value" in update:
        kwargs = {**component.constructor_args, **props, "render": False}
        kwargs.pop("value", None)
        # Made in a context of its own: inside an event gradio reads a component's constructor as
        # an update and leaves the component half made.
        made = contextvars.Context().run(lambda: type(component)(**kwargs))
        served["value"] = _dumped(made.postprocess(update["value"]))
    return served


def _dumped(value: object) -> object:
    return value.model_dump() if isinstance(value, GradioModel | GradioRootModel) else value


class RenderCache:
    """An LRU of :class:`SharedRender` by key, one computation per key at a time (thread-safe)."""

    def __init__(self, size: int = RENDER_CACHE_SIZE) -> None:
        self.size = size
        self._done: OrderedDict[Hashable, SharedRender] = OrderedDict()
        self._running: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()
        #: Renders computed and renders served from the cache (for the benchmarks and tests).
        self.computed = 0
        self.served = 0

    def get(self, key: Hashable, render: Callable[[], Rendered]) -> SharedRender:
        """The render of ``key``: kept, being computed by another caller (waited for), or computed now."""
        while True:
            with self._lock:
                if key in self._done:
                    self._done.move_to_end(key)
                    self.served += 1
                    return self._done[key]
                running = self._running.get(key)
                if running is None:
                    running = self._running[key] = threading.Event()
                    break
            running.wait()  # another caller's computation: then read its result (or compute, if it failed)
        try:
            started = time.perf_counter()
            rendered = render()
            if time.perf_counter() - started >= TRIM_AFTER_S:
                heap.trim()
            shared = SharedRender(rendered, {name: fingerprint(v) for name, v in rendered.values.items()})
            with self._lock:
                self._done[key] = shared
                self.computed += 1
                while len(self._done) > self.size:
                    self._done.popitem(last=False)
            return shared
        finally:
            with self._lock:
                del self._running[key]
            running.set()
