"""The page in a real browser (headless Debian chromium): tabs, filters, drill-downs, the form.

Screenshots go to ``artifacts/screenshots/`` for a person to look at.
"""

from __future__ import annotations

import re

import pytest

from tests.support.browser import PAGE_TIMEOUT_MS, VIEWPORT, clean_page
from tests.ui.conftest import REPO, Served
from tests.ui.store import CACHED_MODEL_2, XSS_MODEL

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = REPO / "artifacts" / "screenshots"


@pytest.fixture
def page(browser_context, served: Served, request: pytest.FixtureRequest):
    """A page of its own in the file's browser context (tests/support/browser.clean_page)."""
    with clean_page(browser_context) as page:
        yield page
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            _shot(page, f"FAILED-{request.node.name}")


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def _open(page, served: Served, query: str = "") -> None:
    """Load the page and wait until every tab has been filled (the app marks ``body``)."""
    page.goto(served.url + query)
    page.wait_for_function("document.body.dataset.evalitaReady === '1'")
    page.wait_for_function(
        "(document.querySelector('#status') || {innerText: ''}).innerText.includes('results read at')"
    )


def _type(page, elem_id: str, text: str) -> None:
    """Type like a person (gradio listens to key input; ``fill`` alone does not trigger it)."""
    box = page.locator(f"#{elem_id} textarea, #{elem_id} input").first
    box.click()
    box.press("Control+a")
    box.press_sequentially(text, delay=20)


def _tab(page, label: str) -> None:
    page.get_by_role("tab", name=label, exact=True).click()


def _rows(elem_id: str) -> str:
    """A JS expression: the rendered data rows of a gr.Dataframe (a virtual table of div rows)."""
    return f"document.querySelectorAll('#{elem_id} .virtual-row')"


def _ranking_models(page) -> list[str]:
    return page.locator("#ranking-table .virtual-row .body-cell:nth-child(2)").all_inner_texts()


def test_ranking_loads_filters_and_renders_hostile_names_as_text(page, served: Served) -> None:
    _open(page, served)
    page.wait_for_selector("#ranking-table .virtual-row")
    page.wait_for_function(_rows("ranking-table") + ".length >= 7")
    models = [m.strip() for m in _ranking_models(page)]
    assert models[0] == "paper-dev/LLM-5"
    assert XSS_MODEL in models  # the literal text is visible …
    assert page.locator('img[src="x"]').count() == 0  # … and no element was made from it
    link = page.locator("#ranking-table a", has_text="paper-dev/LLM-5").first
    assert link.get_attribute("href") == "https://huggingface.co/paper-dev/LLM-5"
    _shot(page, "01-ranking")

    _type(page, "ranking-search", "LLM-3")
    page.wait_for_function(_rows("ranking-table") + ".length === 1")
    assert [m.strip() for m in _ranking_models(page)] == ["paper-dev/LLM-3"]
    page.wait_for_function("window.location.search.includes('search=LLM-3')")
    _shot(page, "02-ranking-filtered")
    assert page.dialogs == []


def test_clicking_a_ranking_row_opens_the_model_page(page, served: Served) -> None:
    _open(page, served)
    page.wait_for_selector("#ranking-table .virtual-row")
    row = page.locator("#ranking-table .virtual-row", has_text="paper-dev/LLM-2").first
    row.locator(".body-cell").nth(2).click()  # the Avg CPS cell, not the Hub link
    page.wait_for_function(
        "(document.querySelector('#model-header') || {innerText: ''}).innerText.includes('LLM-2')"
    )
    page.wait_for_function("window.location.search.includes('tab=model')")
    assert "LLM-2" in page.url


def test_state_in_the_url_restores_the_view(page, served: Served) -> None:
    _open(page, served, "?setting=5&search=LLM-2")
    page.wait_for_function(_rows("ranking-table") + ".length === 1")
    row = page.locator("#ranking-table .virtual-row").first.inner_text()
    assert "paper-dev/LLM-2" in row and "54.00" in row
    # Once the page settled, the address still holds the state it was opened with.
    assert "setting=5" in page.url and "search=LLM-2" in page.url


def test_task_drill_down_in_the_browser(page, served: Served) -> None:
    _open(page, served, "?tab=task&task=te")
    page.wait_for_selector("#task-prompts table")
    assert "implica logicamente" in page.locator("#task-prompts").inner_text()
    page.wait_for_function(_rows("task-models") + ".length >= 7")
    first = page.locator("#task-models .virtual-row").first.inner_text()
    assert "paper-dev/LLM-5" in first and "71.93" in first
    page.wait_for_selector("#task-heatmap .plot-container, #task-heatmap .js-plotly-plot")
    _shot(page, "03-task-te")


def test_model_page_shows_answers_as_text(page, served: Served) -> None:
    key = f"{XSS_MODEL}|abcdef1234567890|bfloat16"
    from urllib.parse import quote

    _open(page, served, f"?tab=model&model={quote(key)}")
    page.wait_for_selector("#model-header a")
    assert XSS_MODEL in page.locator("#model-header").inner_text()
    page.locator("#model-details").get_by_text("Answers").first.click()
    page.wait_for_function(_rows("details-table") + ".length === 3")
    assert "<script>alert(0)</script>" in page.locator("#details-table").inner_text()
    assert page.locator('img[src="x"]').count() == 0
    page.wait_for_selector("#model-vs-field .js-plotly-plot")
    page.wait_for_selector("#model-spread .js-plotly-plot")
    page.wait_for_timeout(800)  # let plotly finish drawing before the screenshot
    _shot(page, "04-model")
    assert page.dialogs == []


def test_plots_and_about_tabs(page, served: Served) -> None:
    _open(page, served)
    _tab(page, "Plots")
    page.wait_for_selector("#plot-scatter .js-plotly-plot")
    page.wait_for_selector("#plot-radar .js-plotly-plot")
    page.wait_for_timeout(800)
    page.wait_for_function("window.location.search.includes('tab=plots')")
    _shot(page, "05-plots")
    _tab(page, "About")
    page.wait_for_selector("#about-track-1 table")  # the default track's section: its tasks
    assert "Magnini" in page.locator("#about-track-1").inner_text()
    _shot(page, "06-about")


def test_submit_through_the_form_and_see_the_request_queued(page, served: Served) -> None:
    _open(page, served)
    _tab(page, "Submit & queue")
    _type(page, "submit-model", CACHED_MODEL_2)
    page.locator("#submit-button").click()
    page.wait_for_function("document.querySelector('#submit-result').innerText.includes('Submitted')")
    page.wait_for_function(f"document.querySelector('#queue-pending').innerText.includes({CACHED_MODEL_2!r})")
    _shot(page, "07-submitted")
    _type(page, "submit-model", "not a valid id!")
    page.locator("#submit-button").click()
    page.wait_for_function("document.querySelector('#submit-result').innerText.includes('refused')")
    assert re.search("refused", page.locator("#submit-result").inner_text())
    _shot(page, "08-refused")


def test_new_results_appear_on_the_open_page_without_reload(page, served: Served) -> None:
    """The page's timer (3 s in tests) re-reads the store; nothing restarts, the page is not reloaded."""
    from tests.ui.store import _results

    _open(page, served)
    page.wait_for_selector("#ranking-table .virtual-row")
    fresh = _results("live-org/arrived-later", 0.07)
    path = served.data_dir / "results" / "live-org" / "arrived-later" / "results_2025-07-01T00-00-00Z.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(fresh.to_json())
    page.wait_for_function(
        "document.querySelector('#ranking-table').innerText.includes('live-org/arrived-later')"
    )


def test_task_links_land_on_the_task_every_time(browser, served: Served) -> None:
    """A link to a task opened the Ranking and cleared the address in 2 of 20 loads: the first
    tab item's mount-time select raced the link's own selection."""
    for _ in range(5):
        # A fresh context each time, not the file's warm one: a first visit, as when the race was seen.
        context = browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        _open(page, served, "?tab=task&task=sa&shots=5")
        page.wait_for_function(
            "(document.querySelector('#task-info') || {innerText: ''}).innerText.includes('SA —')"
        )
        page.wait_for_timeout(500)  # any late select event would have come back by now
        assert page.get_by_role("tab", name="Tasks", exact=True).get_attribute("aria-selected") == "true"
        assert "tab=task" in page.url and "task=sa" in page.url and "shots=5" in page.url
        context.close()


def test_an_unknown_task_in_a_link_shows_a_notice_and_the_first_task(page, served: Served) -> None:
    _open(page, served, "?tab=task&task=nope&sort=%3Cscript%3E")
    page.wait_for_function(_rows("task-models") + ".length >= 7")
    notice = page.locator("#notice").inner_text()
    assert "nope" in notice and "<script>" in notice and "unknown" in notice
    assert "WIC" in page.locator("#task-info").inner_text()
    assert "task=nope" not in page.url
    assert page.dialogs == []


def test_an_unknown_model_in_a_link_shows_the_best_model_with_a_notice(page, served: Served) -> None:
    _open(page, served, "?tab=model&model=ghost%7Cmain%7Cbfloat16")
    page.wait_for_selector("#model-header a")
    assert "paper-dev/LLM-5" in page.locator("#model-header").inner_text()
    assert "ghost" in page.locator("#notice").inner_text()


def test_clearing_the_search_shows_every_run_again(page, served: Served) -> None:
    _open(page, served, "?search=LLM-3")
    page.wait_for_function(_rows("ranking-table") + ".length === 1")
    box = page.locator("#ranking-search textarea, #ranking-search input").first
    box.click()
    box.press("Control+a")
    box.press("Backspace")  # no character key: gradio's textbox fires no input event for it
    page.wait_for_function(_rows("ranking-table") + ".length >= 7")
    page.wait_for_function("!window.location.search.includes('search=')")


def test_a_setting_without_results_leaves_no_empty_plot_box(page, served: Served) -> None:
    key = "demo-org/sample-model|abcdef1234567890|bfloat16"  # a 0-shot sample run only
    from urllib.parse import quote

    _open(page, served, f"?tab=model&model={quote(key)}&shots=5")
    page.wait_for_function(
        "(document.querySelector('#model-field-note') || {innerText: ''}).innerText.includes('No 5-shot results')"
    )
    assert not page.locator("#model-vs-field").is_visible()
    assert not page.locator("#model-spread").is_visible()


def test_sorting_is_a_visible_control(page, served: Served) -> None:
    _open(page, served)
    page.locator("#ranking-sort input").click()
    page.get_by_role("option", name="Model name (A–Z)").click()
    page.wait_for_function("window.location.search.includes('sort=model')")
    page.wait_for_function(
        "(document.querySelector('#ranking-table .virtual-row') || {innerText: ''}).innerText.includes('<img')"
    )
    models = [m.strip() for m in _ranking_models(page)]
    assert models == sorted(models, key=str.lower)


def test_long_context_tab_shows_table5_and_drills_down_to_an_answer(page, served: Served) -> None:
    from tests.long_context.store import LC_XSS_MODEL

    _open(page, served, "?tab=long-context")
    page.wait_for_selector("#lc-table5 table.lc-table5")
    table = page.locator("#lc-table5").inner_text()
    assert "10K-word context" in table and "Full book context" in table and "ANITA-8B" in table
    assert LC_XSS_MODEL in table and page.locator('img[src="x"]').count() == 0  # the name, as text
    assert page.locator("#lc-table5 b", has_text="43.83").count() == 2  # best Local ACC, both settings
    page.wait_for_selector("#lc-plot .js-plotly-plot")
    # Drill down: the multiple-choice Local questions of the full-book setting.
    page.locator("#lc-setting input").click()
    page.get_by_role("option", name="Full book context").click()
    page.locator("#lc-set input").click()
    page.get_by_role("option", name="Local (multiple choice)").click()
    page.wait_for_function("window.location.search.includes('lc_set=local_mc')")
    page.wait_for_function(_rows("lc-answers") + ".length === 2")
    answers = page.locator("#lc-answers").inner_text()
    assert "C ✓" in answers and "<script>alert(0)</script>" in answers
    assert "2 answers" in page.locator("#lc-answers-status").inner_text()
    page.wait_for_timeout(800)
    _shot(page, "12-long-context")
    assert page.dialogs == []


def test_the_submit_form_shows_the_chosen_tracks_fields(page, served: Served) -> None:
    _open(page, served)
    _tab(page, "Submit & queue")
    assert page.locator("#submit-fewshot").is_visible() and not page.locator("#submit-context").is_visible()
    page.locator("#submit-track").get_by_text("Long context (INDAQA2)").click()
    page.wait_for_selector("#submit-context", state="visible")
    assert "Full book context" in page.locator("#submit-context").inner_text()
    assert not page.locator("#submit-fewshot").is_visible()
    page.locator("#submit-track").get_by_text("LLM as judge").click()
    page.wait_for_selector("#submit-judge-target", state="visible")
    assert not page.locator("#submit-context").is_visible()
