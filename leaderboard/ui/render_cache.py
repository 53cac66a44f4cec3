"""Renders computed once per (results version, tab, state) and shared by every visitor.

Most visitors ask for the same few views (the default ranking, the top tasks, the leading
models): a tab that opts in (:attr:`leaderboard.ui.tab.Tab.shared_render`) is rendered once per
results version and link state, and every later visitor — and every API client — gets that
render, with the digest of each value (:func:`leaderboard.ui.common.fingerprint`: what the
page compares with what a browser shows) computed once too.  Visitors asking for a view being
computed wait for it rather than compute it again (one flight per key), so concurrent visitors
add no work and no memory.  The oldest renders are dropped beyond :data:`RENDER_CACHE_SIZE`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

from leaderboard.ui.common import fingerprint
from leaderboard.ui.tab import Rendered

#: Renders kept (each a page of a table, a few small figures, or a plot of every run).
RENDER_CACHE_SIZE = 256


@dataclass(frozen=True)
class SharedRender:
    """A tab's render and the digest of each of its values (by output name)."""

    rendered: Rendered
    digests: Mapping[str, str]


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
            rendered = render()
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
