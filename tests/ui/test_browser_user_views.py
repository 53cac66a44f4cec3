"""The ranking's user views (issue 32) in a real browser (headless Debian chromium) against the
real Gradio server: pick tasks → the custom average column; complete results only → the count of
what is hidden; the model kind filter; the best-of-N marker (an organisation named in markup shown
as text); and a link holding all four restores the same view."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import clean_page
from tests.ui.conftest import Served, serve_app
from tests.ui.store import write_hf_cache
from tests.ui.test_browser import _open, _rows, _shot
from tests.ui.user_views_store import CHAT_MODEL, HOSTILE_ORG, INCOMPLETE_MODEL, write_user_views_store

pytestmark = [pytest.mark.browser, pytest.mark.slow]
#: This file's window (the ``browser_context`` fixture), wider than the default one.
BROWSER_VIEWPORT = {"width": 1600, "height": 1000}


@pytest.fixture(scope="module")
def served_views(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("ui-user-views")
    data = root / "data"
    write_user_views_store(data / "results")
    cache = root / "hf-cache"
    write_hf_cache(cache)
    with serve_app(root, data, cache) as app:
        yield app


@pytest.fixture
def page(browser_context, served_views: Served):
    with clean_page(browser_context) as page:
        yield page


def _header(page) -> list[str]:
    return [t.strip() for t in page.locator("#ranking-table thead th").all_inner_texts()]


def _row(page, model: str) -> str:
    return page.locator("#ranking-table .virtual-row", has_text=model).first.inner_text()


def _text(elem_id: str) -> str:
    return f"(document.querySelector('#{elem_id}') || {{innerText: ''}}).innerText"


def _box(page, elem_id: str, label: str):
    return page.locator(f"#{elem_id}").get_by_label(label, exact=True)


def _open_views(page) -> None:
    page.locator("#ranking-views").get_by_text("Custom average", exact=False).first.click()


def test_picking_tasks_adds_a_custom_average_with_its_interval_and_tier(page, served_views):
    _open(page, served_views)
    page.wait_for_function(_rows("ranking-table") + ".length >= 10")
    assert not any("(custom)" in h for h in _header(page))
    _open_views(page)
    page.locator("#ranking-avg-tasks").get_by_text("TE", exact=True).click()
    page.wait_for_function(
        "document.querySelector('#ranking-table thead').innerText.includes('Avg CPS (custom)')"
    )
    page.wait_for_function("window.location.search.includes('avg_tasks=te')")
    first = page.locator("#ranking-table .virtual-row").first.inner_text()
    page.locator("#ranking-avg-tasks").get_by_text("SA", exact=True).click()
    page.wait_for_function("window.location.search.includes('avg_tasks=te,sa')")
    page.wait_for_function(f"document.querySelector('#ranking-table .virtual-row').innerText !== {first!r}")
    headers = _header(page)
    assert "Avg CPS (custom)" in headers and "95% CI (custom)" in headers and "Tier (custom)" in headers
    page.wait_for_function(_text("ranking-caption") + ".includes('mean CPS over TE, SA only')")
    _shot(page, "31-ranking-custom-average")
    assert page.dialogs == []


def test_complete_results_only_says_how_many_runs_it_hides_and_why(page, served_views):
    _open(page, served_views)
    page.wait_for_function(_rows("ranking-table") + ".length >= 10")
    assert INCOMPLETE_MODEL in page.locator("#ranking-table").inner_text()
    _open_views(page)
    page.locator("#ranking-complete input").check()
    page.wait_for_function(_text("ranking-banner") + ".includes('1 run hidden: missing SUM (1)')")
    page.wait_for_function("window.location.search.includes('complete=1')")
    page.wait_for_function(
        f"!document.querySelector('#ranking-table').innerText.includes({INCOMPLETE_MODEL!r})"
    )
    _shot(page, "32-ranking-complete-only")


def test_the_model_kind_filter_keeps_chat_models_apart(page, served_views):
    _open(page, served_views)
    page.wait_for_function(_rows("ranking-table") + ".length >= 10")
    everything = page.locator("#ranking-table .virtual-row").count()
    _open_views(page)
    page.locator("#ranking-kinds").get_by_text("chat / instruct", exact=True).click()
    page.wait_for_function("window.location.search.includes('kinds=chat')")
    page.wait_for_function(_rows("ranking-table") + f".length < {everything}")
    assert "Kind" in _header(page)
    assert "chat" in _row(page, CHAT_MODEL)
    for row in page.locator("#ranking-table .virtual-row").all_inner_texts():
        assert (
            "\tchat\t" in row
            or "\nchat\n" in row
            or " chat " in f" {row} ".replace("\t", " ").replace("\n", " ")
        )
        assert "base" not in row.replace("\t", " ").split()
    _shot(page, "33-ranking-chat-only")


def test_the_best_of_n_marker_names_the_organisation_as_text(page, served_views):
    _open(page, served_views)
    page.wait_for_function(_rows("ranking-table") + ".length >= 10")
    table = page.locator("#ranking-table")
    page.wait_for_function(
        "document.querySelector('#ranking-table').innerText.includes('best of 3 from acme')"
    )
    assert f"best of 2 from {HOSTILE_ORG}" in table.inner_text()  # the literal text …
    assert page.locator('img[src="x"]').count() == 0  # … and no element made from it
    assert "best of 3 from acme" in _row(page, "acme/model-a")
    assert "best of" not in _row(page, "acme/model-b")
    page.wait_for_function(_text("ranking-caption") + ".includes('Best of N from ORG')")
    _shot(page, "34-ranking-best-of-n")
    assert page.dialogs == []


def test_a_link_with_the_four_views_restores_them(page, served_views):
    _open(page, served_views, "?avg_tasks=sa,te&complete=1&kinds=chat,unknown&org_best=1")
    page.wait_for_function(
        "document.querySelector('#ranking-table thead').innerText.includes('Avg CPS (custom)')"
    )
    _open_views(page)
    assert _box(page, "ranking-avg-tasks", "TE").is_checked()
    assert _box(page, "ranking-avg-tasks", "SA").is_checked()
    assert not _box(page, "ranking-avg-tasks", "SUM").is_checked()
    assert page.locator("#ranking-complete input").is_checked()
    assert page.locator("#ranking-org-best input").is_checked()
    assert _box(page, "ranking-kinds", "chat / instruct").is_checked()
    assert not _box(page, "ranking-kinds", "base (pretrained)").is_checked()
    models = [
        m.strip()
        for m in page.locator("#ranking-table .virtual-row .body-cell:nth-child(2)").all_inner_texts()
    ]
    assert CHAT_MODEL in models and "acme/model-b" not in models
    # One run per organisation: the best of each.
    orgs = [m.split("/", 1)[0] for m in models]
    assert len(orgs) == len(set(orgs))
    # The address keeps the state (in suite order) once the page settled.
    page.wait_for_function("window.location.search.includes('avg_tasks=te,sa')")
    assert "complete=1" in page.url and "org_best=1" in page.url and "kinds=chat,unknown" in page.url
    _shot(page, "35-ranking-views-from-link")
    assert page.dialogs == []


def test_the_ranking_api_takes_the_four_views_by_name(served_views):
    from gradio_client import Client

    client = Client(served_views.url, verbose=False)
    banner, table, _csv, caption = client.predict(
        "0",
        [],
        [],
        [],
        "",
        ["cps"],
        False,
        "rank",
        1,
        "lm-eval",
        ["te", "sa"],
        True,
        ["chat", "unknown"],
        True,
        api_name="/ranking",
    )
    value = table.get("value", table)
    headers = value["headers"]
    assert "Avg CPS (custom)" in headers and "Best of N" in headers and "Kind" in headers
    kinds = {row[headers.index("Kind")] for row in value["data"]}
    assert kinds <= {"chat", "unknown"}
    assert "mean CPS over TE, SA only" in caption
    assert "hidden" not in banner  # complete over TE and SA: the run without SUM stays
    assert INCOMPLETE_MODEL in {
        row[headers.index("Model")].split(">")[-2].split("<")[0] for row in value["data"]
    }


def test_the_csv_button_downloads_every_row_with_every_custom_tier(page, served_views):
    # The page never sends the CSV with a render; its button makes the file for the view shown
    # and the browser downloads it: every row of the view, the custom tiers of every row (all the
    # runs' tests, not only the page's), exactly what the view holds.
    from eval_queue.settings import Settings
    from leaderboard.tracks.evalita.app import views
    from leaderboard.ui.context import AppContext

    _open(page, served_views, "?avg_tasks=te,sa&all_runs=1")
    page.wait_for_function(_rows("ranking-table") + ".length >= 10")
    with page.expect_download() as download:
        page.locator("#ranking-csv").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    board = views.current_board(AppContext.from_settings(Settings(data_dir=served_views.data_dir)))
    filters = views.RankingFilters(average_over=("te", "sa"), show_noncomparable=True)
    view = views.ranking_view(board, "0", filters)
    assert text == views.to_csv(view.table)
    header, *lines = text.splitlines()
    assert "Tier (custom)" in header.split(",") and len(lines) == len(view.table) >= 10
    tiers = view.table["Tier (custom)"]
    assert tiers.notna().sum() >= 5  # filled (the view itself leaves them to be asked)
    assert download.value.suggested_filename.startswith("evalita-ranking-0-")
    assert page.dialogs == []
