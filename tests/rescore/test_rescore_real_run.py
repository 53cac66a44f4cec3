"""``python -m backend rescore`` on a real run of the tiny model, published by the real worker.

What the worker publishes (the harness's numbers in ``tasks``, the as-specified block beside
them) is what rescoring the stored details gives again: every upstream number exactly, bit for
bit; a changed metric version adds a block and keeps the old; what the details lack is named.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from leaderboard.core.numbers import percent
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.metric_sets import METRIC_SETS, MetricSet
from leaderboard.tracks.evalita.schema import ResultsFile
from tests.rescore.conftest import RealRun

pytestmark = pytest.mark.slow

N_PROMPTS = sum(len(task.prompts) for task in SUITE)  # 44
AS_SPECIFIED = METRIC_SETS[MetricSet.AS_SPECIFIED]
SPEC = f"as-specified/{AS_SPECIFIED.version}"


def _read(run: RealRun) -> dict:
    return json.loads(run.results_file.read_text(encoding="utf-8"))


def _write(run: RealRun, raw: dict) -> None:
    run.results_file.write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _scores(tasks: dict) -> dict[tuple[str, str], float]:
    return {(t, p): s["score"] for t, r in tasks.items() for p, s in r["prompts"].items()}


def test_the_worker_publishes_the_as_specified_block_beside_the_harness_numbers(real_run: RealRun) -> None:
    results = ResultsFile.from_json(real_run.results_file.read_bytes(), real_run.results_path)

    [block] = results.metric_sets
    assert (block.name, block.version, block.computed_by) == ("as-specified", AS_SPECIFIED.version, "worker")
    assert {t: r.metric for t, r in block.tasks.items()} == {
        "wic": "f1_macro",
        "hs": "f1_macro",
        "ls": "f1_oot_distinct",
        "ner": "f1_entity_macro",
        "re": "f1_relations",
        "sum": "rouge1_italian",
    }
    assert block.skipped == {}
    assert {t: r.metric for t, r in results.tasks.items()} == {t.id: t.metric for t in SUITE}
    assert set(block.tasks["ner"].prompts["p1"].parts or {}) == {"adg", "fic", "wn"}
    # Its intervals (issue 28): every figure of the file's, bootstrapped with the same draws.
    assert results.uncertainty is not None and block.uncertainty is not None
    assert set(block.uncertainty.intervals) == set(results.uncertainty.intervals)
    assert block.uncertainty.draws["mean_cps"].key == results.uncertainty.draws["mean_cps"].key


def test_rescore_restores_every_published_upstream_number_exactly(real_run: RealRun) -> None:
    published = _read(real_run)
    worker_block = published["metric_sets"][0]
    _write(real_run, {k: v for k, v in published.items() if k != "metric_sets"})  # a run from before issue 20

    done = real_run.rescore("--all")

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{real_run.results_path}: checked: lm-eval/1 checked" in done.stdout
    assert f"lm-eval/1 checked: {N_PROMPTS} of {N_PROMPTS} prompt scores identical" in done.stdout
    assert f"{SPEC} written (wic, hs, ls, ner, re, sum)" in done.stdout
    assert "1 checked, 0 partly checked, 0 not checkable" in done.stdout
    rescored = _read(real_run)
    assert rescored["tasks"] == published["tasks"]  # the harness's numbers, untouched
    [block] = rescored["metric_sets"]
    assert (block["computed_by"], block["version"]) == ("rescore", AS_SPECIFIED.version)
    assert block["tasks"] == worker_block["tasks"]  # what the worker computed at publish time
    shown = {k: percent(v) for k, v in _scores(block["tasks"]).items()}
    assert shown == {k: percent(v) for k, v in _scores(worker_block["tasks"]).items()}


def test_rescore_is_idempotent(real_run: RealRun) -> None:
    before = real_run.results_file.read_bytes()

    first = real_run.rescore(real_run.results_path)
    second = real_run.rescore("--all")

    assert first.returncode == second.returncode == 0
    assert f"{SPEC} unchanged" in first.stdout and f"{SPEC} unchanged" in second.stdout
    assert "0 written" in second.stdout
    assert real_run.results_file.read_bytes() == before


def test_a_changed_metric_version_writes_the_new_block_and_keeps_the_old(real_run: RealRun) -> None:
    raw = _read(real_run)
    old = {**copy.deepcopy(raw["metric_sets"][0]), "version": 1}  # by issue 20's metrics
    old["tasks"]["wic"]["prompts"]["p1"]["score"] = 0.123  # whatever that version gave
    _write(real_run, {**raw, "metric_sets": [old]})

    done = real_run.rescore("--all", "--metric-set", "as-specified")

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{SPEC} written" in done.stdout and "lm-eval" not in done.stdout
    blocks = _read(real_run)["metric_sets"]
    assert [(b["name"], b["version"], b["computed_by"]) for b in blocks] == [
        ("as-specified", 1, "worker"),
        ("as-specified", AS_SPECIFIED.version, "rescore"),
    ]
    assert blocks[0] == old  # kept as it was
    assert blocks[1]["tasks"] == raw["metric_sets"][0]["tasks"]
    results = ResultsFile.from_json(real_run.results_file.read_bytes(), real_run.results_path)
    assert results.metric_set_block("as-specified", AS_SPECIFIED.version) is not None


def test_a_block_of_the_same_version_that_differs_is_reported_not_overwritten(real_run: RealRun) -> None:
    raw = _read(real_run)
    raw["metric_sets"][0]["tasks"]["hs"]["prompts"]["p2"]["score"] = 0.5
    _write(real_run, raw)
    before = real_run.results_file.read_bytes()

    done = real_run.rescore("--all")

    assert done.returncode == 1
    assert f"{SPEC} differs" in done.stdout and "not overwritten" in done.stdout
    assert real_run.results_file.read_bytes() == before


def test_a_stored_score_the_details_do_not_give_is_reported(real_run: RealRun) -> None:
    raw = _read(real_run)
    raw["tasks"]["te"]["prompts"]["p3"]["score"] = 0.4321
    _write(real_run, raw)
    before = real_run.results_file.read_bytes()

    done = real_run.rescore(real_run.results_path, "--metric-set", "lm-eval")

    assert done.returncode == 1
    assert f"lm-eval/1 differs: {N_PROMPTS - 1} of {N_PROMPTS} prompt scores identical" in done.stdout
    assert "te/p3: stored 0.4321" in done.stdout
    assert real_run.results_file.read_bytes() == before


def _strip_gold(folder: Path) -> None:
    """Details as the worker wrote them before issue 20: no structured gold."""
    for path in folder.glob("*.jsonl"):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        path.write_text(
            "".join(json.dumps({k: v for k, v in r.items() if k != "gold"}) + "\n" for r in lines)
        )


def test_details_that_lack_what_a_metric_needs_are_named_and_skipped(real_run: RealRun) -> None:
    raw = _read(real_run)
    _write(real_run, {k: v for k, v in raw.items() if k != "metric_sets"})
    folder = real_run.details_folder()
    _strip_gold(folder)
    (folder / "sum_p2.jsonl").unlink()

    done = real_run.rescore("--all")

    assert done.returncode == 3, done.stdout + done.stderr  # partly checked
    assert f"{real_run.results_path}: partly checked (skipped: ls, sum)" in done.stdout
    assert re.search(r"lm-eval/1: ls skipped: .*annotator counts", done.stdout)
    assert "sum skipped: no details file for prompt p2" in done.stdout
    assert "0 checked, 1 partly checked, 0 not checkable" in done.stdout
    [block] = _read(real_run)["metric_sets"]
    assert set(block["tasks"]) == {"wic", "hs", "ner", "re"}  # RE: the targets parse back here
    assert set(block["skipped"]) == {"ls", "sum"}


def test_a_run_without_details_is_named_and_skipped(real_run: RealRun) -> None:
    raw = _read(real_run)
    raw["run"]["details_path"] = None
    _write(real_run, raw)

    done = real_run.rescore("--all")

    assert done.returncode == 4
    assert f"{real_run.results_path}: not checkable, the run kept no details" in done.stdout
    assert "0 checked, 0 partly checked, 1 not checkable" in done.stdout


def test_a_dry_run_writes_nothing(real_run: RealRun) -> None:
    raw = _read(real_run)
    _write(real_run, {k: v for k, v in raw.items() if k != "metric_sets"})
    before = real_run.results_file.read_bytes()

    done = real_run.rescore_process("--all", "--dry-run")  # the real command line, once

    assert done.returncode == 0
    assert f"{SPEC} would be written" in done.stdout and "nothing written" in done.stdout
    assert real_run.results_file.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "name results files or give --all"),
        (("--all", "x/results_1.json"), "not both"),
        (("org/model/notes.txt",), "not a results file"),
    ],
)
def test_bad_usage_changes_nothing(real_run: RealRun, args: tuple[str, ...], message: str) -> None:
    before = real_run.results_file.read_bytes()

    done = real_run.rescore(*args)

    assert done.returncode == 2 and message in done.stderr
    assert real_run.results_file.read_bytes() == before
