"""A link's tab is selected in the page's config itself (leaderboard/ui/landing.py)."""

from __future__ import annotations

import asyncio
import json

from leaderboard.ui.landing import CONFIG_END, CONFIG_START, LandingTabMiddleware, select_tab


def _page(config: dict) -> str:
    from gradio.routes import toorjson

    return f"<html><head><script>{CONFIG_START}{toorjson(config)}{CONFIG_END}<script>x</script></head></html>"


def _config(html: str) -> dict:
    start = html.index(CONFIG_START) + len(CONFIG_START)
    return json.loads(html[start : html.index(CONFIG_END, start)])


CONFIG = {
    "components": [
        {"id": 1, "type": "markdown", "props": {"value": "</script><script>alert(1)</script>"}},
        {"id": 2, "type": "tabs", "props": {"elem_id": "other-tabs", "selected": "a"}},
        {"id": 3, "type": "tabs", "props": {"elem_id": "page-tabs", "selected": "ranking"}},
    ]
}


def test_the_page_tab_bar_starts_on_the_linked_tab_and_nothing_else_changes() -> None:
    html = select_tab(_page(CONFIG), "task", "page-tabs")
    config = _config(html)
    assert config["components"][2]["props"]["selected"] == "task"
    assert config["components"][:2] == CONFIG["components"][:2]  # a value, another tab bar: untouched
    assert "</script><script>alert" not in html  # a value's markup stays escaped, as gradio wrote it


def test_a_page_without_a_config_it_can_read_is_left_as_it_is() -> None:
    assert select_tab("<html>no config</html>", "task", "page-tabs") == "<html>no config</html>"
    broken = f"<script>{CONFIG_START}{{not json{CONFIG_END}"
    assert select_tab(broken, "task", "page-tabs") == broken


def _serve(middleware: LandingTabMiddleware, path: str, query: str) -> tuple[dict, bytes]:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def receive() -> dict:
        return {"type": "http.request"}

    scope = {"type": "http", "method": "GET", "path": path, "query_string": query.encode()}
    asyncio.run(middleware(scope, receive, send))
    return sent[0], b"".join(m.get("body", b"") for m in sent[1:])


def test_the_middleware_rewrites_only_a_page_request_naming_a_known_other_tab() -> None:
    page = _page(CONFIG).encode()

    async def app(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        headers = [
            (b"content-type", b"text/html; charset=utf-8"),
            (b"content-length", str(len(page)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": page[:100], "more_body": True})
        await send({"type": "http.response.body", "body": page[100:]})

    middleware = LandingTabMiddleware(
        app, tabs=("ranking", "task"), default="ranking", tabs_elem_id="page-tabs"
    )
    start, body = _serve(middleware, "/", "tab=task&task=ls")
    assert _config(body.decode())["components"][2]["props"]["selected"] == "task"
    assert dict(start["headers"])[b"content-length"] == str(len(body)).encode()
    for path, query in (
        ("/", "tab=ranking"),
        ("/", "tab=bogus"),
        ("/", ""),
        ("/gradio_api/info", "tab=task"),
    ):
        _, body = _serve(middleware, path, query)
        assert body == page, (path, query)
