"""Intervals, tiers and "A vs B" in a real browser (headless Debian chromium), on a store of
synthetic runs with per-item data beside the paper's dev LLMs (no per-item data: "—")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from eval_queue.vocabulary import RunRef
from tests.paper_tables import write_paper_store
from tests.support.browser import clean_page
from tests.support.synthetic.results import synthetic_model, write_synthetic_results
from tests.ui.conftest import Served, serve_app
from tests.ui.store import write_hf_cache
from tests.ui.test_browser import _open, _rows, _shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _key(i: int) -> str:
    return RunRef(synthetic_model(i), f"{i:040x}", "bfloat16").key


@pytest.fixture(scope="module")
def served_intervals(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("ui-intervals")
    data = root / "data"
    write_synthetic_results(data / "results", 6, details_root=data / "details")
    write_paper_store(data / "results")
    cache = root / "hf-cache"
    write_hf_cache(cache)
    with serve_app(root, data, cache) as app:
        yield app


@pytest.fixture
def page(browser_context, served_intervals: Served):
    with clean_page(browser_context) as page:
        yield page


def _header(page, elem_id: str) -> list[str]:
    return [t.strip() for t in page.locator(f"#{elem_id} thead th").all_inner_texts()]


def test_the_ranking_shows_tiers_and_intervals_and_a_dash_without_per_item_data(page, served_intervals):
    _open(page, served_intervals)
    page.wait_for_function(_rows("ranking-table") + ".length >= 12")
    headers = " ".join(_header(page, "ranking-table"))
    assert "95% CI" in headers and "Tier" in headers
    synthetic = page.locator("#ranking-table .virtual-row", has_text=synthetic_model(0)).first.inner_text()
    assert re.search(r"\d+\.\d\d–\d+\.\d\d", synthetic)
    paper = page.locator("#ranking-table .virtual-row", has_text="paper-dev/LLM-2").first.inner_text()
    assert "—" in paper and not re.search(r"\d+\.\d\d–\d+\.\d\d", paper)
    _shot(page, "21-ranking-tiers")


def test_a_vs_b_from_a_link_shows_a_verdict_per_task_and_the_items_that_differ(page, served_intervals):
    _open(page, served_intervals, f"?tab=compare&a={quote(_key(0))}&b={quote(_key(1))}")
    verdict = page.locator("#compare-verdict")
    page.wait_for_function(
        "(document.querySelector('#compare-verdict') || {innerText: ''}).innerText.includes('better on')"
    )
    text = verdict.inner_text()
    assert synthetic_model(0) in text and synthetic_model(1) in text and "no difference on" in text
    page.wait_for_function(_rows("compare-table") + ".length === 10")
    assert "Mean CPS over the ten tasks" in page.locator("#compare-mean").inner_text()
    page.wait_for_function(_rows("compare-items") + ".length === 6")  # WIC's six prompts
    # The link restores the comparison: both runs are in the address.
    assert "tab=compare" in page.url and quote(synthetic_model(1), safe="") in page.url.replace("/", "%2F")
    _shot(page, "22-compare")


def test_a_vs_b_from_the_ranking_compares_the_first_two_rows_shown(page, served_intervals):
    _open(page, served_intervals, "?search=bench-org&sort=model")
    page.wait_for_function(_rows("ranking-table") + ".length === 6")
    page.locator("#ranking-compare").click()
    page.wait_for_function("window.location.search.includes('tab=compare')")
    page.wait_for_function(
        "(document.querySelector('#compare-verdict') || {innerText: ''}).innerText.includes('better on')"
    )
    text = page.locator("#compare-verdict").inner_text()
    assert f"A = {synthetic_model(0)}" in text and f"B = {synthetic_model(1)}" in text


def test_a_vs_b_from_a_model_page(page, served_intervals):
    _open(page, served_intervals, f"?tab=model&model={quote(_key(2))}")
    page.wait_for_selector("#model-header a")
    page.locator("#model-compare").click()
    page.wait_for_function("window.location.search.includes('tab=compare')")
    page.wait_for_function(
        "(document.querySelector('#compare-verdict') || {innerText: ''}).innerText.includes('better on')"
    )
    text = page.locator("#compare-verdict").inner_text()
    assert f"A = {synthetic_model(2)}" in text and "B = bench-org-" in text
    # Any other run is one pick away.
    page.locator("#compare-b input").click()
    page.get_by_role("option", name=synthetic_model(5), exact=True).click()
    page.wait_for_function(
        f"(document.querySelector('#compare-verdict') || {{innerText: ''}}).innerText.includes('B = {synthetic_model(5)}')"
    )
    assert quote(synthetic_model(5), safe="") in page.url.replace("/", "%2F")


def test_the_task_page_shows_each_prompts_interval(page, served_intervals):
    _open(page, served_intervals, "?tab=task&task=te")
    page.wait_for_function(_rows("task-models") + ".length >= 12")
    headers = _header(page, "task-models")
    assert "p1 95% CI" in headers and "CPS 95% CI" in headers
    _shot(page, "23-task-intervals")
