"""The model page in a real browser (headless Debian chromium) shows a run's recipe, copyable, and its cost."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from eval_queue.storage import LocalStorage
from eval_queue.vocabulary import RunRef
from leaderboard.core.schema import RunCost
from tests.contents.store import evalita_file
from tests.reproduce.test_model_page import RECIPE
from tests.ui.conftest import serve_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_model_page_shows_the_runs_recipe_with_a_copy_button_and_its_cost(
    tmp_path: Path, browser
) -> None:
    data = tmp_path / "data"
    path, results = evalita_file("org/recipe-model")
    cost = RunCost(loglikelihood_s=1234.5, generation_s=60.0, gpus=1, gpu_hours=0.75)
    results = results.model_copy(
        update={"run": results.run.model_copy(update={"recipe": RECIPE, "cost": cost})}
    )
    LocalStorage(data / "results").write(path, results.to_json())
    key = RunRef("org/recipe-model", "a" * 40, "bfloat16").key

    # The test process's one chromium (tests/conftest.py): a second playwright in the same
    # process would refuse to start inside the first one's event loop.
    with serve_app(tmp_path, data, tmp_path / "hf-cache") as served:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(45_000)
        page.goto(f"{served.url}?tab=model&model={quote(key)}")
        page.wait_for_function(
            "(document.querySelector('#model-recipe') || {innerText: ''}).innerText.includes('lm_eval run')"
        )
        shown = page.locator("#model-recipe").inner_text()
        assert RECIPE.command in " ".join(shown.split()) or "lm_eval run --model hf" in shown
        assert f"python -m backend reproduce {path} --limit 10" in shown
        assert (
            page.locator(
                "#model-recipe button[aria-label*='opy'], #model-recipe button[title*='opy']"
            ).count()
            >= 1
        )
        metadata = page.locator("#model-metadata").inner_text()
        assert "1,234.5" in metadata and "0.750 on 1 GPU(s)" in metadata
        context.close()
