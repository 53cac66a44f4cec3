"""In a real browser: SmolLM2 judges a sample run's SUM outputs, the scores show on the SUM and model pages,
and the Judges tab draws its table and agreement heatmap.

The store: a SUM run of ``org/model`` (its details written as the worker writes them), three
judges' meta-evaluation files (two on one annotated set, one on another), and the SmolLM2 judgement of the SUM outputs made by the real
worker (``python -m backend --once``) from a queued ``--track judge --judge-target`` request,
on one output per criterion (``--limit 1``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from huggingface_hub import constants

from backend.embedded import EMBEDDED_MODEL_ID, repo_cache_dir
from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, ModelType, Precision, Status, isoformat, utc_now
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from eval_queue.vocabulary import RunRef
from leaderboard.tracks.judge.definition import JudgeMode
from tests.backend.conftest import REPO_ROOT, worker_env
from tests.judge.test_items import _publish_sum_run
from tests.judge.test_results_tables import _meta_file, set_key
from tests.support import preforked
from tests.ui.conftest import Served, serve_app
from tests.ui.test_browser import _open, _rows, _shot, _tab, page

pytestmark = [pytest.mark.browser, pytest.mark.slow]
__all__ = ["page"]

JUDGED = RunRef("org/model", "a" * 40, "bfloat16")


def _smollm2_revision(cache: Path) -> str:
    ref = repo_cache_dir(cache, EMBEDDED_MODEL_ID) / "refs" / "main"
    if not ref.is_file():
        pytest.skip(f"{EMBEDDED_MODEL_ID} is not in the HF cache (python -m backend install-embedded)")
    return ref.read_text().strip()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, datasets_cache: Path) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("judge-ui")
    data = root / "eval-data"
    stores = open_stores(Settings(data_dir=data))
    target = _publish_sum_run(stores)
    for run in (
        _meta_file("org/good", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}),
        _meta_file("org/poor", {"a": 5, "b": 3, "c": 1, "d": 2, "e": 4}),
        # Another annotated set: shown only when chosen in the selector.
        _meta_file("org/elsewhere", {"a": 2, "b": 2, "c": 3, "d": 4, "e": 5}, data="local:other-set"),
    ):
        stores.results.write(run.path, run.results.to_json())
    cache = Path(constants.HF_HUB_CACHE)
    request = RequestQueue(stores.requests).add(
        EvalRequest(
            model=EMBEDDED_MODEL_ID,
            revision=_smollm2_revision(cache),
            precision=Precision.FLOAT32,
            model_type=ModelType.INSTRUCTION_TUNED,
            submitted_by="tests",
            submitted_time=isoformat(utc_now()),
            track="judge",
            judge_mode=JudgeMode.GENERATIONS,
            judge_target=target,
        )
    )
    done = preforked.run_module(
        "backend",
        [
            "--once",
            "--data",
            "sample",
            "--limit",
            "1",
            # '{"score": N' is parsed from the first tokens after the prefill; the rest of an
            # answer is its explanation, which nothing here reads (some 4 CPU-s less than 24).
            "--max-gen-toks",
            "8",
            # One prompt at a time: five prompts of 1,060-1,220 tokens batched are left-padded,
            # and attention under a padding mask took 8 of the run's 26 CPU-seconds.
            "--batch-size",
            "1",
        ],
        env=worker_env(cache, datasets_cache, data),
        cwd=REPO_ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    finished = RequestQueue(stores.requests).get(request.request_id)
    assert finished.status is Status.FINISHED, finished.error
    with serve_app(root, data, cache) as app:
        yield app


def test_smollm2_judge_scores_show_on_the_sum_page_beside_rouge(page, served: Served) -> None:
    _open(page, served, "?tab=task&task=sum")
    page.wait_for_function(_rows("judge-task-table") + ".length === 1")
    row = page.locator("#judge-task-table .virtual-row").first.inner_text()
    assert "org/model" in row and f"{EMBEDDED_MODEL_ID}@" in row
    assert "20.00" in row  # the run's ROUGE-1 on p1, beside the judge's means
    headers = page.locator("#judge-task-table thead").inner_text()
    for label in ("ROUGE-1 p1", "coherence", "consistency", "fluency", "relevance", "ordering", "unparsed"):
        assert label in headers
    _shot(page, "judge-01-sum-page")


def test_the_models_page_shows_its_five_criterion_means(page, served: Served) -> None:
    _open(page, served, f"?tab=model&model={quote(JUDGED.key)}")
    page.wait_for_function(_rows("judge-model-table") + ".length === 1")
    row = page.locator("#judge-model-table .virtual-row").first.inner_text()
    assert "SUM" in row and EMBEDDED_MODEL_ID in row


def test_the_judges_tab_renders_the_table_and_the_agreement_heatmap(page, served: Served) -> None:
    _open(page, served)
    _tab(page, "Judges")
    page.wait_for_function(_rows("judges-table") + ".length === 2")
    table = page.locator("#judges-table").inner_text()
    assert "org/good" in table and "org/poor" in table and "overall ρ" in table
    assert page.locator("#judges-criterion input[value='overall']").is_checked()
    # Drawn, not only laid out: the heatmap's cells and the distributions' bars.
    page.wait_for_selector("#judges-heatmap .js-plotly-plot image")
    page.wait_for_function("document.querySelectorAll('#judges-distributions g.point').length > 0")
    assert "org/good" in page.locator("#judges-heatmap").inner_text()
    page.locator("#judges-criterion").get_by_text("fluency", exact=True).click()
    page.wait_for_function("window.location.search.includes('judge_criterion=fluency')")
    page.wait_for_function("document.querySelector('#judges-heatmap').innerText.includes('fluency')")
    page.wait_for_selector("#judges-heatmap .js-plotly-plot image")
    page.wait_for_function("document.querySelectorAll('#judges-distributions g.point').length > 0")
    page.wait_for_timeout(1500)  # let plotly finish drawing before the screenshot
    _shot(page, "judge-02-judges-tab")


def test_the_annotated_set_selector_shows_one_set_and_keeps_it_in_the_link(page, served: Served) -> None:
    other = set_key("local:other-set")
    _open(page, served, "?tab=judges")
    page.wait_for_function(_rows("judges-table") + ".length === 2")
    assert "2 judges" in page.locator("#judges-set input").input_value()

    page.locator("#judges-set input").click()
    page.get_by_role("option", name="local:other-set", exact=False).click()

    page.wait_for_function(f"window.location.search.includes('judge_set={other}')")
    page.wait_for_function(_rows("judges-table") + ".length === 1")
    assert "org/elsewhere" in page.locator("#judges-table").inner_text()
    assert "local:other-set" in page.locator("#judges-caption").inner_text()
    # The link brings the same set back.
    _open(page, served, f"?tab=judges&judge_set={other}")
    page.wait_for_function(_rows("judges-table") + ".length === 1")
    assert "org/elsewhere" in page.locator("#judges-table").inner_text()
    _shot(page, "judge-03-other-set")
