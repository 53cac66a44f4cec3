"""Debian's headless chromium for the browser tests (through playwright, never ``playwright install``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: The window a browser test file sees unless it names another (``BROWSER_VIEWPORT`` in the file).
VIEWPORT = {"width": 1400, "height": 1000}
#: How long a page waits for an element or a condition: the CI box is shared, so renders can
#: queue behind other work.
PAGE_TIMEOUT_MS = 45_000


@contextmanager
def launched_chromium() -> Iterator[object]:
    """A launched chromium (playwright's ``Browser``); skips the test when chromium or playwright is missing."""
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("Debian chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@contextmanager
def clean_page(context: Any) -> Iterator[Any]:
    """A new page in a test file's shared browser context; what it stored is wiped when it closes.

    The file's pages share one context so that the second page onwards loads the app's
    JavaScript from the HTTP cache, compiled once (a page in a fresh context cost about
    2.6 CPU-seconds of chromium and server, one in a warm context 1.5).  What a test could
    see of an earlier one is wiped: the context's cookies and the app origin's local and
    session storage (gradio keeps its browser state there; it uses no IndexedDB and no
    service worker).  Dialogs are dismissed and recorded in ``page.dialogs``.
    """
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield page
    finally:
        if page.url.startswith("http"):
            page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        context.clear_cookies()
        page.close()
