"""A store for the ranking's user views (issue 32): synthetic runs with intervals, renamed so that
organisations have several runs, one organisation's name an HTML payload, one chat run, one run
without SUM (an incomplete run), beside the paper's dev LLMs (no per-item data)."""

from __future__ import annotations

import json
from pathlib import Path

from leaderboard.core.schema import results_file_path
from leaderboard.tracks.evalita.schema import ResultsFile
from tests.paper_tables import write_paper_store
from tests.support.synthetic.results import synthetic_model, write_synthetic_results

#: An organisation whose name is markup: every view must show it as text.
HOSTILE_ORG = "<img src=x onerror=alert(1)>"  # no "/": the organisation is the part before the first one
N_MODELS = 8
#: The new model id of each synthetic model: three of ``acme``, two of the hostile org, three alone.
MODEL_IDS = {
    0: "acme/model-a",
    1: "acme/model-b",
    2: "acme/model-c",
    3: f"{HOSTILE_ORG}/model-d",
    4: f"{HOSTILE_ORG}/model-e",
    5: "solo-1/model-f",
    6: "solo-2/model-g",
    7: "solo-3/model-h",
}
CHAT_MODEL = "solo-2/model-g"  # run with the chat template applied (its model type says merged)
INCOMPLETE_MODEL = "solo-3/model-h"  # its SUM scores removed


def write_user_views_store(results: Path) -> None:
    """Write the store's results files under ``results``."""
    staging = results.parent / "staging"
    write_synthetic_results(staging, N_MODELS)
    for path in sorted(staging.rglob("*.json")):
        raw = json.loads(path.read_text())
        i = int(raw["model"]["id"].rsplit("-", 1)[1])
        assert raw["model"]["id"] == synthetic_model(i)
        raw["model"]["id"] = MODEL_IDS[i]
        if MODEL_IDS[i] == CHAT_MODEL:
            raw["run"]["chat_template"] = True
        if MODEL_IDS[i] == INCOMPLETE_MODEL:
            del raw["tasks"]["sum"]
        parsed = ResultsFile.model_validate(raw)
        target = results / results_file_path(parsed, raw["run"]["finished_at"])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(parsed.to_json())
    write_paper_store(results)
