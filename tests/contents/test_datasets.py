"""``datasets.load_dataset`` reads the contents table from a local store and from the hub layout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import datasets

from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage, open_stores
from leaderboard.core.contents import CONTENTS_PATH
from leaderboard.core.contents_io import publish_rows
from tests.contents.store import evalita_file
from tests.queue.conftest import FAKE_TOKEN, REQUESTS_REPO, RESULTS_REPO
from tests.queue.fake_hub import FakeHub

ROOT = Path(__file__).resolve().parents[2]


def _publish_two(store) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Two runs published as the worker does; returns their TE CPS by model."""
    expected = {}
    for model, score in (("org/a", 0.4), ("org/b", 0.6)):
        path, results = evalita_file(model, score)
        store.write(path, results.to_json())
        publish_rows(store, results, path)
        expected[model] = score
    return expected


def test_load_dataset_reads_the_local_stores_table(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path / "results")
    _publish_two(store)
    table = datasets.load_dataset(
        "parquet",
        data_files=str(tmp_path / "results" / CONTENTS_PATH),
        split="train",
        cache_dir=str(tmp_path / "datasets-cache"),
    )
    assert table.num_rows == 2 and sorted(table["model"]) == ["org/a", "org/b"]
    assert table.features["prompt_scores"].feature["score"].dtype == "float64"
    row = table[0]
    assert row["te_maxp"] == 0.45 and row["prompt_scores"][0]["task"] == "wic"


LOAD = """
import json, sys, datasets
repo = sys.argv[1]
forms = {
    "parquet": datasets.load_dataset("parquet", data_files=f"hf://datasets/{repo}/contents.parquet", split="train"),
    "repo": datasets.load_dataset(repo, data_files="contents.parquet", split="train"),
}
print(json.dumps({name: sorted(zip(t["model"], t["te_maxp"])) for name, t in forms.items()}))
"""


def test_load_dataset_reads_the_table_from_the_hub_layout(fake_hub: FakeHub, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALITA_", "HF_"))}
    hub_env = {
        "EVALITA_REQUESTS_REPO": REQUESTS_REPO,
        "EVALITA_RESULTS_REPO": RESULTS_REPO,
        "HF_TOKEN": FAKE_TOKEN,
        "HF_ENDPOINT": fake_hub.url,
        "EVALITA_DATA_DIR": str(tmp_path / "worker"),
    }
    # Published through the hub store, as a worker on a cluster does.
    store = open_stores(Settings.from_env({**env, **hub_env, "HF_HUB_OFFLINE": "0"})).results
    _publish_two(store)
    assert CONTENTS_PATH in fake_hub.repos[("datasets", RESULTS_REPO)].files

    done = subprocess.run(
        [sys.executable, "-c", LOAD, RESULTS_REPO],
        cwd=ROOT,
        env={
            **env,
            "HF_ENDPOINT": fake_hub.url,
            "HF_TOKEN": FAKE_TOKEN,
            "HF_HOME": str(tmp_path / "hf-home"),
        },
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.splitlines()[-1])
    expected = [["org/a", 0.45], ["org/b", 0.65]]
    assert loaded == {"parquet": expected, "repo": expected}
