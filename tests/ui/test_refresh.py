"""Refresh from a cache: however many pages or callers ask, the store is read at most once per interval."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from gradio_client import Client

from eval_queue.queue import RequestQueue
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage, Stores
from leaderboard.tracks.evalita.app import views
from leaderboard.ui import build_app
from leaderboard.ui.context import AppContext
from tests.ui.store import write_queue, write_results


class _Clock:
    """Monotonic seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _CountingStorage(LocalStorage):
    """A local store that counts its listings (one per results reload or queue listing)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.listings = 0
        self.lock_held_during_read: list[bool] = []
        self.app_lock: threading.Lock | None = None
        self._count_lock = threading.Lock()

    def versions(self, prefix: str = "") -> dict[str, str]:
        with self._count_lock:
            self.listings += 1
        if self.app_lock is not None:
            self.lock_held_during_read.append(self.app_lock.locked())
        return super().versions(prefix)

    def list(self, prefix: str = "") -> list[str]:
        with self._count_lock:
            self.listings += 1
        return super().list(prefix)


def _context(
    tmp_path: Path, *, refresh_s: float = 3600, min_reread_s: float = 5.0
) -> tuple[AppContext, _CountingStorage, _CountingStorage, _Clock]:
    write_results(tmp_path / "results", tmp_path / "details")
    write_queue(tmp_path / "requests")
    results = _CountingStorage(tmp_path / "results")
    requests = _CountingStorage(tmp_path / "requests")
    stores = Stores(requests=requests, results=results, details=LocalStorage(tmp_path / "details"))
    clock = _Clock()
    ctx = AppContext(
        settings=Settings.from_env({"EVALITA_DATA_DIR": str(tmp_path)}),
        stores=stores,
        queue=RequestQueue(requests),
        refresh_s=refresh_s,
        min_reread_s=min_reread_s,
        clock=clock,
    )
    results.app_lock = ctx._lock
    return ctx, results, requests, clock


def _in_threads(n: int, fn) -> None:
    threads = [threading.Thread(target=fn) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_page_timers_reread_the_store_only_once_the_snapshot_is_older_than_the_period(tmp_path: Path) -> None:
    ctx, results, _, clock = _context(tmp_path, refresh_s=60)
    views.current_board(ctx)
    assert results.listings == 1
    for _ in range(5):  # five open pages tick
        ctx.refresh(force=False)
    assert results.listings == 1
    clock.now += 61  # the snapshot is now older than the period
    ctx.refresh(force=False)
    ctx.refresh(force=False)
    assert results.listings == 2


def test_twenty_refresh_calls_at_once_read_the_store_once_per_interval(tmp_path: Path) -> None:
    ctx, results, _, clock = _context(tmp_path, min_reread_s=5.0)
    views.current_board(ctx)
    clock.now += 6
    _in_threads(20, ctx.refresh)
    assert results.listings == 2  # the first load, then one read for the twenty callers
    clock.now += 2  # within the interval: served from the snapshot
    _in_threads(20, ctx.refresh)
    assert results.listings == 2
    clock.now += 4
    _in_threads(20, ctx.refresh)
    assert results.listings == 3


def test_the_queue_is_listed_once_per_interval_however_many_pages_show_it(tmp_path: Path) -> None:
    ctx, _, requests, clock = _context(tmp_path, min_reread_s=5.0)
    _in_threads(20, ctx.queue_listing)
    assert requests.listings == 1
    clock.now += 6
    ctx.queue_listing()
    assert requests.listings == 2


def test_the_store_is_read_outside_the_lock_every_handler_shares(tmp_path: Path) -> None:
    ctx, results, _, clock = _context(tmp_path)
    views.current_board(ctx)
    clock.now += 10
    ctx.refresh()
    ctx.fresh()
    assert results.lock_held_during_read and not any(results.lock_held_during_read)


@pytest.mark.slow
def test_the_refresh_endpoint_serves_twenty_callers_from_one_store_read(tmp_path: Path) -> None:
    """Anonymous ``/refresh`` calls through the real server cannot force a store read each."""
    ctx, results, requests, clock = _context(tmp_path, min_reread_s=5.0)
    demo = build_app(ctx)
    demo.queue(default_concurrency_limit=4)
    demo.launch(
        server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True, ssr_mode=False
    )
    try:
        client = Client(demo.local_url, verbose=False)
        client.predict(api_name="/refresh")  # loads the store and lists the queue
        before_results, before_requests = results.listings, requests.listings
        clock.now += 6  # past the interval: the next caller reads, the others share it
        for _ in range(20):
            status, *_ = client.predict(api_name="/refresh")
        assert "results read at" in status
        assert results.listings - before_results == 1
        assert requests.listings - before_requests == 1
    finally:
        demo.close()
