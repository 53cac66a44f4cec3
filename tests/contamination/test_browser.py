"""In a real browser: the Contamination tab lists every run × set with its wording and band, a model's
page shows its evidence panel, and the ranking marks the flagged run's task cell (only that one).

The store: Evalita runs of ``org/model`` (so that its model page exists) and ``org/other0``, and
contamination results of five models on two sets — ``org/model``'s TE flagged by the order test, its
CoDeC above the band of the four others; ``org/other0`` flagged nowhere — written as the worker
writes them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from huggingface_hub import constants

from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from eval_queue.vocabulary import RunRef
from leaderboard.core.schema import ModelInfo, RunInfo
from leaderboard.tracks.contamination.definition import EVIDENCE, NO_EVIDENCE
from leaderboard.tracks.evalita.schema import PromptScore, ResultsFile, TaskResult
from tests.contamination.records import results, set_result
from tests.ui.conftest import Served, serve_app
from tests.ui.test_browser import _open, _rows, _shot, _tab, page

pytestmark = [pytest.mark.browser, pytest.mark.slow]
__all__ = ["page"]

MODEL = RunRef("org/model", "a" * 40, "bfloat16")
OTHER = RunRef("org/other0", "a" * 40, "bfloat16")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("contamination-ui")
    data = root / "eval-data"
    stores = open_stores(Settings(data_dir=data))
    evalita = ResultsFile(
        model=ModelInfo(id=MODEL.model, revision=MODEL.revision, precision=MODEL.precision),
        run=RunInfo(num_fewshot=0, data="sample", limit=2),
        tasks={"te": TaskResult(metric="acc", prompts={"p1": PromptScore(score=0.5, n=2)})},
    )
    stores.results.write("org/model/results_2026-11-27T09-00-00Z_bfloat16_0shot.json", evalita.to_json())
    unflagged = evalita.model_copy(
        update={"model": ModelInfo(id=OTHER.model, revision=OTHER.revision, precision=OTHER.precision)}
    )
    stores.results.write("org/other0/results_2026-11-27T09-00-00Z_bfloat16_0shot.json", unflagged.to_json())
    for k, score in enumerate([0.20, 0.22, 0.24, 0.26]):
        other = results(f"org/other{k}", {"te": set_result(score), "wic": set_result(0.3)}, data="sample")
        stores.results.write(
            f"org/other{k}/results_2026-11-27T10-00-00Z_float32_contamination.json", other.to_json()
        )
    mine = results(
        MODEL.model, {"te": set_result(0.8, p=0.0004, p_holm=0.0008), "wic": set_result(0.3)}, data="sample"
    )
    stores.results.write("org/model/results_2026-11-27T10-00-00Z_float32_contamination.json", mine.to_json())
    with serve_app(root, data, Path(constants.HF_HUB_CACHE)) as app:
        yield app


def test_the_contamination_tab_shows_each_run_and_set_with_its_wording_and_band(page, served: Served) -> None:
    _open(page, served)
    _tab(page, "Contamination")
    page.wait_for_function(_rows("ct-table") + ".length === 10")
    table = page.locator("#ct-table").inner_text()
    assert EVIDENCE in table and NO_EVIDENCE in table
    assert "above the board's band" in table and "org/other3" in table
    assert "1 with evidence" in page.locator("#ct-status").inner_text()
    assert "never an accusation" in page.locator("#ct-intro").inner_text()
    _shot(page, "contamination-01-tab")


def test_a_models_page_shows_its_contamination_evidence(page, served: Served) -> None:
    _open(page, served, f"?tab=model&model={quote(MODEL.key)}")
    page.wait_for_function(_rows("contamination-model-table") + ".length === 2")
    panel = page.locator("#contamination-model-table").inner_text()
    assert EVIDENCE in panel and "TE" in panel and "WIC" in panel
    _shot(page, "contamination-02-model-page")


def test_a_tasks_page_shows_every_models_result_on_its_test_set(page, served: Served) -> None:
    _open(page, served, "?tab=task&task=te")
    page.wait_for_function(_rows("contamination-task-table") + ".length === 5")
    panel = page.locator("#contamination-task-table").inner_text()
    assert EVIDENCE in panel and "org/other0" in panel and "WIC" not in panel


def test_the_ranking_marks_only_the_flagged_runs_task_cell_and_links_to_its_evidence(
    page, served: Served
) -> None:
    _open(page, served)
    page.wait_for_function(_rows("ranking-table") + ".length === 2")
    markers = page.locator("#ranking-table .virtual-row a.ranking-marker")  # not the hidden sizing table
    assert markers.count() == 1
    marked_row = page.locator("#ranking-table .virtual-row", has=page.locator("a.ranking-marker"))
    assert "org/model" in marked_row.inner_text() and "org/other0" not in marked_row.inner_text()
    title = markers.first.get_attribute("title") or ""
    assert EVIDENCE in title and "TE" in title and "accus" in title  # "… not an accusation"
    assert markers.first.get_attribute("href") == f"?tab=model&model={quote(MODEL.key, safe='')}"
    _shot(page, "contamination-04-ranking-marker")
    markers.first.click()
    page.wait_for_function(_rows("contamination-model-table") + ".length === 2")
    assert EVIDENCE in page.locator("#contamination-model-table").inner_text()
