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
* **A new component for every output left unchanged.**  The page's events return only the
  outputs whose value changed (:meth:`leaderboard.ui.page.Page._send`); gradio fills in every
  other output of the event (about 100: each event may show any tab) with ``gr.skip()``, and
  for each such empty update it constructs a new component from the old one's arguments, to
  put an identical copy in the session (random ids, upload-folder paths: system calls, slow on
  a busy or sandboxed machine).  Measured on the landing page's load call (1,000 models, in
  process, a stack sampler): nearly all of the call's 0.1–0.4 s, against 0.5 ms for the page's
  own handler.  :func:`install` has gradio postprocess only the outputs that carry something and
  hands an empty update on as the ``{"__type__": "update"}`` gradio would have sent for it
  (an HTML output's, which gradio sends with its own ``props``, is left to gradio).
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

import copy
import importlib.util
import inspect
import logging
import os
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from gradio.blocks import Block, Blocks, convert_component_dict_to_list
from gradio.components import HTML
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


_GRADIO_POSTPROCESS = Blocks.postprocess_data
#: What gradio sends for an output left unchanged (``gr.skip()``, postprocessed).
EMPTY_UPDATE = {"__type__": "update"}


def _is_empty_update(value: object) -> bool:
    return isinstance(value, dict) and value == EMPTY_UPDATE


async def _postprocess_changed_only(self: Blocks, block_fn: Any, predictions: Any, state: Any) -> list[Any]:
    """Gradio's ``postprocess_data`` over the outputs that carry something; an empty update is
    passed on as is (gradio would construct a copy of its component first, and send the same)."""
    outputs = list(block_fn.outputs)
    if isinstance(predictions, dict) and predictions and all(isinstance(key, Block) for key in predictions):
        predictions = convert_component_dict_to_list(outputs, predictions)
    if (
        block_fn.batch
        or getattr(block_fn, "is_validator_function", False)
        or len(outputs) < 2
        or not isinstance(predictions, list | tuple)
    ):
        return await _GRADIO_POSTPROCESS(self, block_fn, predictions, state)
    if len(predictions) != len(outputs):  # gradio's own check says what is wrong
        return await _GRADIO_POSTPROCESS(self, block_fn, predictions, state)
    # An HTML output's empty update is sent with its own ``props`` (gradio's HTML case) and a
    # state's as nothing (it stays on the server): both left to gradio.
    kept = [
        i
        for i, value in enumerate(predictions)
        if not _is_empty_update(value) or isinstance(outputs[i], HTML) or outputs[i].stateful
    ]
    if len(kept) == len(outputs):
        return await _GRADIO_POSTPROCESS(self, block_fn, predictions, state)
    done: list[Any] = []
    if kept:
        some = copy.copy(block_fn)
        some.outputs = [outputs[i] for i in kept]
        # One output: gradio expects its value itself, not a one-item list.
        values = predictions[kept[0]] if len(kept) == 1 else [predictions[i] for i in kept]
        done = await _GRADIO_POSTPROCESS(self, some, values, state)
    merged: list[Any] = [dict(EMPTY_UPDATE) for _ in outputs]
    for i, value in zip(kept, done, strict=True):
        merged[i] = value
    return merged


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
    """Make new gradio sessions configure their components lazily, have gradio postprocess only
    the outputs an event changes, mark the optional modules gradio probes as absent when they
    are, and have the queue's monitoring summary rebuilt every :data:`ANALYTICS_EVERY` events;
    True if the sessions are lazy.  Run it before the
    queue is made (``demo.queue()`` reads the setting)."""
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(ANALYTICS_EVERY))
    if SessionState.__init__ is _lazy_init:
        return True
    mark_absent_modules()
    install_changed_only_postprocess()
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


def install_changed_only_postprocess() -> bool:
    """Have gradio postprocess only the outputs an event changes (see the module's docstring);
    True if installed (or already), False if gradio's ``postprocess_data`` changed shape."""
    if Blocks.postprocess_data is _postprocess_changed_only:
        return True
    parameters = list(inspect.signature(_GRADIO_POSTPROCESS).parameters)
    if parameters != ["self", "block_fn", "predictions", "state"] or not inspect.iscoroutinefunction(
        _GRADIO_POSTPROCESS
    ):
        logger.warning("gradio's postprocess_data changed shape: every output is postprocessed (slower)")
        return False
    Blocks.postprocess_data = _postprocess_changed_only  # type: ignore[method-assign]
    return True
