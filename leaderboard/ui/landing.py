"""A link's tab selected in the page's config itself, so that the browser mounts that tab first.

Gradio inlines the page's config in the HTML (``window.gradio_config``), the same for every
address: the tab bar starts on the default tab.  A link to another tab (``?tab=task&task=ls``)
then mounted the ranking (its table, its ~30 controls) before the load call, and dropped it for
the linked tab when the call answered: measured in the renderer (main-thread CPU, 1,000 models),
about 0.12 s of a task link's work after the load call.  :class:`LandingTabMiddleware` rewrites
the page's HTML for a link that names a known tab other than the default: the tab bar's
``selected`` set to it, every other byte of the config as gradio wrote it (re-encoded with
gradio's own filter, so a ``</script>`` in a value stays escaped).  Anything unexpected (no
config found, a config that does not parse) leaves the page as gradio made it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from typing import Any
from urllib.parse import parse_qs

from gradio.routes import toorjson

logger = logging.getLogger(__name__)

CONFIG_START = "window.gradio_config = "
CONFIG_END = ";</script>"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def select_tab(html: str, tab: str, tabs_elem_id: str) -> str:
    """``html`` with the tab bar ``tabs_elem_id`` of its inlined config starting on ``tab`` (the
    page unchanged if its config cannot be found or read)."""
    start = html.find(CONFIG_START)
    end = html.find(CONFIG_END, start)
    if start < 0 or end < 0:
        return html
    start += len(CONFIG_START)
    try:
        config = json.loads(html[start:end])
    except ValueError:
        logger.warning("the page's inlined config did not parse: the link's tab is selected after load")
        return html
    for component in config.get("components", ()):
        props = component.get("props") or {}
        if component.get("type") == "tabs" and props.get("elem_id") == tabs_elem_id:
            props["selected"] = tab
            return html[:start] + str(toorjson(config)) + html[end:]
    return html


class LandingTabMiddleware:
    """ASGI middleware: the page's HTML for ``?tab=<id>`` (one of ``tabs``, not ``default``) starts
    on that tab (:func:`select_tab`); every other request passes through untouched."""

    def __init__(self, app: Any, tabs: Collection[str], default: str, tabs_elem_id: str) -> None:
        self.app = app
        self.tabs = frozenset(tabs)
        self.default = default
        self.tabs_elem_id = tabs_elem_id

    def linked_tab(self, scope: Scope) -> str | None:
        """The known, non-default tab a page request names, else None."""
        if scope.get("type") != "http" or scope.get("method") != "GET" or scope.get("path") != "/":
            return None
        tab = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("tab", [None])[0]
        return tab if tab in self.tabs and tab != self.default else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tab = self.linked_tab(scope)
        if tab is None:
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def buffered(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            headers = dict(start.get("headers", []))
            html = headers.get(b"content-type", b"").startswith(b"text/html")
            if html and b"content-encoding" not in headers and start.get("status") == 200:
                body = select_tab(body.decode("utf-8"), tab, self.tabs_elem_id).encode("utf-8")
                start["headers"] = [
                    (k, str(len(body)).encode() if k == b"content-length" else v)
                    for k, v in start.get("headers", [])
                ]
            await send(start)
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, buffered)
