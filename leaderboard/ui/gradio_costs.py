"""What gradio does for every session and every call, made cheap where this page needs none of it.

Many visitors at once (issue 32): profiled under the load bench, most of a call's time was
not this app's views but gradio's own work, repeated per call:

* **A session's config of every component.**  For each new session gradio (6.31) computes the
  config of every component of the page into ``SessionState.config_values`` — about 200
  components here: tens of milliseconds of CPU and about 370 KB — which only its deep-link
  route (``/gradio_api/deep_link``, for a ``gr.DeepLinkButton``; this page has none) reads.
  An API call without a session (``/gradio_api/run/<name>``, ``/gradio_api/call/<name>``)
  makes a new session each time, and the queue's are kept (up to ``state_session_capacity``,
  10,000): most of the server's CPU, and memory growing with the calls.  :func:`install` makes
  a session fill in a component's config when it is first read instead; what the deep-link
  route reads is the same (``tests/ui/test_api_cache.py`` compares it with gradio's).
* **A summary of every event so far, after each event.**  Gradio's queue keeps the last 10,000
  events for its monitoring dashboard and, after each event, rebuilds their summary (a pandas
  frame, grouped by endpoint) on a worker thread: a per-call cost that grows with the calls
  served, there for a dashboard this app does not enable.  :func:`install` has it rebuilt once
  every :data:`ANALYTICS_EVERY` events (gradio's ``GRADIO_ANALYTICS_CACHE_FREQUENCY``; an
  operator's own setting wins).
* **Imports that fail on every call.**  Every event enters gradio's matplotlib guard
  (``import matplotlib``) and every plot's config asks for bokeh (``import bokeh``); neither is
  installed here, and Python does not remember a failed import, so each one searches every
  ``sys.path`` folder again (``stat`` calls, slow on a busy disk).  :func:`install` records the
  ones that cannot be imported as absent, so the import fails at once, as it would have.

:func:`install` runs from :func:`leaderboard.ui.layout.build_app` (a second time, it does
nothing).  If gradio's ``SessionState`` no longer has the shape this was written for, it is
left as it is (slower, still correct) and the log says why.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from gradio.state_holder import SessionState

logger = logging.getLogger(__name__)

#: Events between two rebuilds of the queue's monitoring summary (gradio's default: every event).
ANALYTICS_EVERY = 1000
#: Optional libraries gradio tries to import on every call or every component config.
PROBED_OPTIONAL_MODULES = ("matplotlib", "bokeh")

_GRADIO_INIT = SessionState.__init__
_GRADIO_COMPONENTS = SessionState.__dict__.get("components")


def _lazy_init(self: SessionState, blocks: Any) -> None:
    # Gradio's own __init__, given no components to configure (it builds ``config_values`` from
    # ``blocks.blocks`` alone); the page's components are remembered to configure when read.
    _GRADIO_INIT(self, SimpleNamespace(default_config=blocks.default_config, blocks={}))
    self._page_blocks = blocks.blocks  # shared with the Blocks: not a copy


def _lazy_components(self: SessionState) -> Iterator[dict]:
    """Gradio's ``SessionState.components``, configuring on first read what was not configured."""
    page_blocks = getattr(self, "_page_blocks", {})
    for key, block in self.blocks_config.blocks.items():
        if key in page_blocks and key not in self.config_values:
            self.config_values[key] = self.blocks_config.config_for_block(key, [], block)
    ordered = [key for key in self.blocks_config.blocks if key in self.config_values]
    ordered += [key for key in self.config_values if key not in self.blocks_config.blocks]
    for key in ordered:
        if self.config_values[key]:
            yield self.config_values[key]


def mark_absent_modules(names: tuple[str, ...] = PROBED_OPTIONAL_MODULES) -> list[str]:
    """Record each of ``names`` that cannot be imported as absent (``import`` then fails at once
    with ``ModuleNotFoundError``, as it would have after searching); returns the ones marked."""
    marked = []
    for name in names:
        if name not in sys.modules and importlib.util.find_spec(name) is None:
            sys.modules[name] = None  # type: ignore[assignment]  # Python's own "known absent" mark
            marked.append(name)
    return marked


def install() -> bool:
    """Make new gradio sessions configure their components lazily and mark the optional modules
    gradio probes as absent when they are, and have the queue's monitoring summary rebuilt
    every :data:`ANALYTICS_EVERY` events; True if the sessions are lazy.  Run it before the
    queue is made (``demo.queue()`` reads the setting)."""
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(ANALYTICS_EVERY))
    if SessionState.__init__ is _lazy_init:
        return True
    mark_absent_modules()
    shaped = (
        isinstance(_GRADIO_COMPONENTS, property)
        and callable(getattr(SessionState, "_update_value_in_config", None))
        and "config_values" in _GRADIO_INIT.__code__.co_names
    )
    if not shaped:
        logger.warning("gradio's SessionState changed shape: its sessions are left eager (slower)")
        return False
    SessionState.__init__ = _lazy_init  # type: ignore[method-assign]
    SessionState.components = property(_lazy_components)  # type: ignore[method-assign,assignment]
    return True
