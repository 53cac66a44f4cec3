"""The metric switch in a real browser (headless Debian chromium): numbers and the address change."""

from __future__ import annotations

import pytest

from tests.ui.conftest import Served
from tests.ui.test_browser import _open, _rows, _shot, page  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _row_of(page, elem_id: str, model: str) -> str:  # noqa: F811
    return page.locator(f"#{elem_id} .virtual-row", has_text=model).first.inner_text()


def test_the_switch_changes_the_rankings_numbers_and_the_url(page, served: Served) -> None:  # noqa: F811
    _open(page, served)
    page.wait_for_function(_rows("ranking-table") + ".length >= 7")
    before = _row_of(page, "ranking-table", "paper-dev/LLM-5")
    assert "45.57" in before  # the paper's zero-shot average CPS (lm-eval)

    page.locator("#ranking-metrics").get_by_text("as specified", exact=True).click()

    page.wait_for_function("window.location.search.includes('metrics=as-specified')")
    page.wait_for_function(
        "(document.querySelector('#ranking-banner') || {innerText: ''}).innerText.includes('Metrics as specified')"
    )
    page.wait_for_function("!document.querySelector('#ranking-table').innerText.includes('45.57')")
    after = _row_of(page, "ranking-table", "paper-dev/LLM-5")
    assert after != before and "45.57" not in after
    _shot(page, "13-ranking-as-specified")

    page.locator("#ranking-metrics").get_by_text("lm-eval", exact=True).click()
    page.wait_for_function("!window.location.search.includes('metrics=')")
    page.wait_for_function("document.querySelector('#ranking-table').innerText.includes('45.57')")
    assert page.dialogs == []


def test_a_link_opens_the_task_page_as_specified_with_its_rank_changes(page, served: Served) -> None:  # noqa: F811
    _open(page, served, "?tab=task&task=wic&metrics=as-specified")
    page.wait_for_function(
        "(document.querySelector('#task-rank-changes') || {innerText: ''}).innerText.includes('Ranks change')"
    )
    assert "F1-macro" in page.locator("#task-info").inner_text()
    assert page.locator("#task-metrics input[value='as-specified']").is_checked()
    changes = page.locator("#task-rank-changes").inner_text()
    assert "paper-dev/LLM-5 6 → 1" in changes
    assert "metrics=as-specified" in page.url
    _shot(page, "14-task-wic-as-specified")
    assert page.dialogs == []
