"""Test-wide environment: no network, no telemetry, nothing from the user's own setup."""

from __future__ import annotations

import os

# Set before anything imports gradio or huggingface_hub.
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ.pop("HF_TOKEN", None)
os.environ.pop("EVALITA_REQUESTS_REPO", None)
os.environ.pop("EVALITA_RESULTS_REPO", None)

from collections.abc import Iterator
from typing import Any

import pytest

# submitit configures logging when first imported (``logging.config.dictConfig``), which closes
# every existing handler — among them absl's (imported with rouge_score), whose stream is a
# pytest capture file when absl was imported inside a test: a later test then fails on a closed
# file.  Imported here, before any test imports absl, it closes nothing of ours.
import submitit  # noqa: F401


@pytest.fixture
def toy_track(monkeypatch: pytest.MonkeyPatch):
    """The toy fourth track registered for this test (and the processes it starts), then forgotten."""
    from eval_queue.tracks import EXTRA_TRACKS_ENV, track_registry
    from tests.support.toy_track import REGISTRATION

    monkeypatch.setenv(EXTRA_TRACKS_ENV, REGISTRATION)
    track_registry.cache_clear()
    yield track_registry().spec("toy")
    monkeypatch.delenv(EXTRA_TRACKS_ENV)
    track_registry.cache_clear()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One headless chromium per browser test file, shared by its tests.

    Not one per test process: while playwright's sync API is open, its event loop runs in the
    process's main thread, so a later file's ``asyncio.run`` (tests/ui/test_api_cache.py) or a
    second playwright would fail, depending on which files the worker happened to run first.
    """
    from tests.support.browser import launched_chromium

    with launched_chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def browser_context(browser: Any, request: pytest.FixtureRequest) -> Iterator[object]:
    """The file's browser context: its pages share the HTTP cache, each test wipes what it stored.

    A test takes a page of its own with :func:`tests.support.browser.clean_page`; the window is
    the file's ``BROWSER_VIEWPORT`` when it names one.
    """
    from tests.support.browser import VIEWPORT

    context = browser.new_context(viewport=getattr(request.module, "BROWSER_VIEWPORT", VIEWPORT))
    yield context
    context.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, the longest files first, so the two workers end together (tests/support/schedule.py).

    Every worker collects, and must collect the same order (xdist checks): the order is a pure
    function of the node ids.  A serial run (``-n 0``) keeps pytest's own order.
    """
    if hasattr(config, "workerinput"):
        from tests.support.schedule import longest_first

        items[:] = longest_first(items, lambda item: item.nodeid)
