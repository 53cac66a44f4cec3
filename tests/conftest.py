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


# --- Running in parallel (``pytest -n 2 --dist loadgroup``, as ``scripts/test.sh`` does) -----------
#
# Each test is put in a group that one xdist worker runs whole, in collection order: its module,
# so module-scoped fixtures (a browser, a loaded task index, a simulated grid) are built once; or,
# for the tests that share one of these session fixtures, the fixture's name, because the fixture
# is expensive (a served app, a real worker run) and its tests read what earlier ones wrote to it.
SHARED_SESSION_FIXTURES = ("served", "published_run", "published_store")


def xdist_group_of(item: pytest.Item) -> str:
    """The group whose tests run on one worker, in order: a shared session fixture's, or the module's."""
    shared = [name for name in SHARED_SESSION_FIXTURES if name in getattr(item, "fixturenames", ())]
    return f"fixture-{shared[0]}" if shared else item.nodeid.split("::")[0]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the tests for xdist, and put the groups with slow tests first so no worker idles at the end.

    The controller hands out groups in collection order (``--no-loadscope-reorder``); a slow group
    handed out last would leave one core idle while the other runs it.  Tests keep their order
    within a group, so a group runs as it does in a serial run.
    """
    if not getattr(config.option, "loadgroup", False):  # set on each xdist worker by ``--dist loadgroup``
        return
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        group = xdist_group_of(item)
        item.add_marker(pytest.mark.xdist_group(group))
        groups.setdefault(group, []).append(item)

    def weight(group: list[pytest.Item]) -> tuple[int, int]:
        return (sum(1 for item in group if item.get_closest_marker("slow")), len(group))

    ordered = sorted(groups.values(), key=weight, reverse=True)
    items[:] = [item for group in ordered for item in group]
