"""``rescore --all`` over a store of runs with full details and an issue-20 (version 1) block.

The store is the synthetic one of the benchmarks (every task and prompt, per-sample details,
lm-eval numbers computed from those very details): the version bump of the as-specified set
(issue 29) adds a version-2 block beside the old one, keeps ``tasks`` and the old block byte for
byte, and every run is reported ``checked``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.tracks.evalita import rescore
from leaderboard.tracks.evalita.metric_sets import METRIC_SETS, MetricSet
from leaderboard.tracks.evalita.schema import ResultsFile, parse_details
from leaderboard.tracks.evalita.specified import ls_f1_distinct, rel_f1
from tests.rescore.blocks import made_up_block
from tests.support.synthetic.details import write_synthetic_store

AS_SPECIFIED = METRIC_SETS[MetricSet.AS_SPECIFIED]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "eval-data"
    write_synthetic_store(root, n_models=2, items=6)
    for path in (root / "results").rglob("results_*.json"):
        results = ResultsFile.from_json(path.read_bytes(), str(path))
        old = made_up_block(results).model_copy(update={"version": 1, "computed_by": "rescore"})
        path.write_bytes(results.model_copy(update={"metric_sets": [old]}).to_json())
    monkeypatch.setenv("EVALITA_DATA_DIR", str(root))
    for name in ("EVALITA_RESULTS_REPO", "EVALITA_REQUESTS_REPO"):
        monkeypatch.delenv(name, raising=False)
    return root


def _files(root: Path) -> dict[Path, dict]:
    return {p: json.loads(p.read_text(encoding="utf-8")) for p in sorted((root / "results").rglob("*.json"))}


def test_rescore_all_adds_the_new_version_and_reports_every_run_checked(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _files(store)

    status = rescore.main(["--all"])

    out = capsys.readouterr().out
    assert status == rescore.EXIT_OK, out
    assert out.count(": checked: lm-eval/1 checked") == len(before) == 4
    assert "4 checked, 0 partly checked, 0 not checkable; 4 written" in out
    for path, raw in _files(store).items():
        old = before[path]
        assert raw["tasks"] == old["tasks"]  # the harness's numbers, bit for bit
        assert raw["metric_sets"][0] == old["metric_sets"][0]  # the version-1 block as it was
        new = raw["metric_sets"][1]
        assert (new["name"], new["version"], new["computed_by"]) == ("as-specified", 2, "rescore")
        assert set(new["tasks"]) == {"wic", "hs", "ls", "ner", "re", "sum"} and new["skipped"] == {}
        # Two of the new numbers from the details directly, through the metric functions alone.
        folder = store / "details" / raw["run"]["details_path"]
        for task, score in (("re", rel_f1), ("ls", ls_f1_distinct)):
            records = parse_details((folder / f"{task}_p1.jsonl").read_bytes(), task)
            golds = [[(str(a), b if task == "ls" else str(b)) for a, b in r.gold] for r in records]
            expected = score(golds, [r.answer for r in records])
            assert new["tasks"][task]["prompts"]["p1"]["score"] == expected
    assert rescore.main(["--all"]) == rescore.EXIT_OK  # idempotent
    assert "0 written" in capsys.readouterr().out


def test_a_run_with_a_task_skipped_is_partly_checked_and_exits_3(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [one, *_] = sorted((store / "details").rglob("sum_p2.jsonl"))
    one.unlink()

    status = rescore.main(["--all"])

    out = capsys.readouterr().out
    assert status == rescore.EXIT_PARTLY, out
    assert "partly checked (skipped: sum)" in out and "sum skipped: no details file for prompt p2" in out
    assert "3 checked, 1 partly checked, 0 not checkable" in out


def test_a_run_without_details_is_not_checkable_and_exits_4(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [path, *_] = sorted((store / "results").rglob("*.json"))
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["run"]["details_path"] = None
    path.write_text(json.dumps(raw), encoding="utf-8")
    [other, *_] = sorted((store / "details").rglob("ls_p1.jsonl"))
    other.unlink()  # another run partly checked: the worse status decides

    status = rescore.main(["--all"])

    out = capsys.readouterr().out
    assert status == rescore.EXIT_NOT_CHECKABLE, out
    assert "not checkable, the run kept no details" in out
    assert ", 1 not checkable" in out
