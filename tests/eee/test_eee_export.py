"""Every Eval Ever export: every run of every track, valid under the package's own validator,
with the figures the board shows and the items of the details files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from eval_queue.storage import LocalStorage
from eval_queue.storage.paths import is_results_file
from leaderboard.__main__ import main as leaderboard_main
from leaderboard.core.numbers import percent
from leaderboard.eee.export import export_store
from leaderboard.eee.validate import schema_version, validate_tree
from leaderboard.export import ExportOptions
from leaderboard.store import read_results_store
from leaderboard.tracks.evalita.app.export import export_results
from leaderboard.tracks.evalita.definition import SUITE
from tests.contents.store import BROKEN_FILE, write_every_track
from tests.ui.store import XSS_MODEL

RETRIEVED = "1767225600"


def _export(tmp_path: Path):
    store = write_every_track(tmp_path / "store")
    out = tmp_path / "out"
    report = export_store(store, LocalStorage(tmp_path / "store" / "details"), out, retrieved_at=RETRIEVED)
    return store, out, report


def _aggregates(out: Path, written: list[str]) -> dict[str, dict]:
    """results_path → aggregate record."""
    records = {}
    for path in written:
        if path.endswith(".json"):
            record = json.loads((out / path).read_text())
            records[record["source_metadata"]["additional_details"]["results_path"]] = record
    return records


def test_every_readable_run_of_every_track_is_exported_and_valid(tmp_path: Path) -> None:
    store, out, report = _export(tmp_path)
    readable = [p for p in store.list("") if is_results_file(p) and p != BROKEN_FILE]
    assert report.runs == len(readable) > 20
    assert [p.path for p in report.problems] == [BROKEN_FILE]
    assert report.invalid == []
    records = _aggregates(out, report.written)
    assert set(records) == set(readable)
    tracks = {r["source_metadata"]["additional_details"]["track"] for r in records.values()}
    assert tracks == {"evalita", "long-context", "judge"}
    for record in records.values():
        assert record["schema_version"] == schema_version()
        assert record["evaluation_results"], record["source_metadata"]["additional_details"]["results_path"]


def test_evalita_figures_round_trip_what_the_ranking_shows(tmp_path: Path) -> None:
    store, out, report = _export(tmp_path)
    records = _aggregates(out, report.written)
    loaded = read_results_store(store).of("evalita")
    table = export_results(loaded, ExportOptions(include_noncomparable=True)).table
    checked = 0
    for _, row in table.iterrows():
        candidates = [
            r
            for path, r in records.items()
            if r["model_info"]["id"] == row["model"]
            and r["model_info"]["additional_details"]["revision"] == row["revision"]
            and r["model_info"]["additional_details"]["precision"] == row["precision"]
            and path.endswith(f"_{row['num_fewshot']}shot.json")
        ]
        assert len(candidates) == 1, row["model"]
        record = candidates[0]
        results = {e["evaluation_result_id"]: e for e in record["evaluation_results"]}
        if row["avg_cps"] == row["avg_cps"]:  # not NaN
            assert percent(results["mean_cps"]["score_details"]["score"]) == pytest.approx(row["avg_cps"])
        for task in SUITE:
            for figure in ("cps", "maxp", "avgp"):
                shown = row[f"{task.id}_{figure}"]
                if shown != shown:
                    assert f"{task.id}/{figure}" not in results
                    continue
                value = results[f"{task.id}/{figure}"]["score_details"]["score"]
                assert percent(value) == pytest.approx(shown)
                checked += 1
            low = row.get(f"{task.id}_cps_low")
            if low is not None and low == low:
                interval = results[f"{task.id}/cps"]["score_details"]["uncertainty"]["confidence_interval"]
                assert percent(interval["lower"]) == pytest.approx(low)
                assert percent(interval["upper"]) == pytest.approx(row[f"{task.id}_cps_high"])
                checked += 1
    assert checked > 100


def test_instance_lines_are_the_details_items_joined_to_their_prompt_figure(tmp_path: Path) -> None:
    _store, out, report = _export(tmp_path)
    samples = [
        p for p in report.written if p.startswith("data/evalita-llm/") and p.endswith("_samples.jsonl")
    ]
    assert len(samples) == 1  # the one Evalita run whose details the store holds
    lines = [json.loads(x) for x in (out / samples[0]).read_text().splitlines()]
    assert len(lines) == 3
    aggregate = json.loads((out / samples[0].replace("_samples.jsonl", ".json")).read_text())
    detailed = aggregate["detailed_evaluation_results"]
    assert detailed["file_path"] == samples[0]
    assert detailed["total_rows"] == 3
    assert detailed["checksum"] == hashlib.sha256((out / samples[0]).read_bytes()).hexdigest()
    ids = {e["evaluation_result_id"] for e in aggregate["evaluation_results"]}
    for i, line in enumerate(lines):
        assert line["evaluation_result_id"] == "wic/p1" and "wic/p1" in ids
        assert line["model_id"] == XSS_MODEL
        assert line["evaluation_id"] == aggregate["evaluation_id"]
        assert line["input"]["raw"] == f"Frase {i}: <script>alert({i})</script>"
        assert line["output"]["raw"] == ["<b>Sì</b>"]
        assert line["evaluation"]["score"] == (1.0 if i % 2 else 0.0)


def test_the_validator_is_the_packages_and_refuses_a_broken_record(tmp_path: Path) -> None:
    _store, out, report = _export(tmp_path)
    aggregate = next(p for p in report.written if p.endswith(".json"))
    record = json.loads((out / aggregate).read_text())
    del record["model_info"]
    record["evaluation_results"][0]["score_details"]["score"] = "high"
    (out / aggregate).write_text(json.dumps(record))
    errors, _warnings = validate_tree(out, [aggregate])
    messages = " ".join(str(e) for e in errors)
    assert "model_info" in messages and "score" in messages


def test_exporting_twice_writes_the_same_bytes(tmp_path: Path) -> None:
    _store, out, report = _export(tmp_path)
    first = {p: (out / p).read_bytes() for p in report.written}
    again = export_store(
        LocalStorage(tmp_path / "store" / "results"),
        LocalStorage(tmp_path / "store" / "details"),
        tmp_path / "again",
        retrieved_at=RETRIEVED,
    )
    assert {p: (tmp_path / "again" / p).read_bytes() for p in again.written} == first


def test_the_command_line_needs_a_folder_and_writes_valid_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_every_track(tmp_path / "store")
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path / "store"))
    assert leaderboard_main(["export", "--format", "eee"]) == 2
    assert leaderboard_main(["export", "--format", "csv", str(tmp_path / "x")]) == 2
    assert leaderboard_main(["export", "--format", "eee", str(tmp_path / "out")]) == 0
    said = capsys.readouterr().out
    assert "validator: 0 error(s)" in said
    assert list((tmp_path / "out" / "data").glob("*/*/*/*.json"))


def test_long_context_items_join_their_meteor_or_accuracy_figure(tmp_path: Path) -> None:
    _store, out, report = _export(tmp_path)
    samples = [
        p for p in report.written if p.startswith("data/evalita-llm-long-context/") and p.endswith(".jsonl")
    ]
    assert samples
    for path in samples:
        aggregate = json.loads((out / path.replace("_samples.jsonl", ".json")).read_text())
        figures = {e["evaluation_result_id"]: e for e in aggregate["evaluation_results"]}
        for raw in (out / path).read_text().splitlines():
            line = json.loads(raw)
            joined = figures[line["evaluation_result_id"]]
            assert joined["metric_config"]["metric_name"] in {"meteor", "acc"}
            assert 0.0 <= line["evaluation"]["score"] <= 1.0


def test_judge_items_score_the_distance_to_the_human_and_keep_the_thinking() -> None:
    from leaderboard.tracks.judge.eee import EEE as JUDGE_EEE
    from tests.contents.store import judge_file

    _path, results = judge_file()
    lines = [
        {
            "item": "a",
            "criterion": "coherence",
            "raw": '{"score": 3}',
            "status": "parsed",
            "score": 3,
            "human": 1,
            "thinking": "il riassunto salta",
        },
        {"item": "b", "criterion": "coherence", "raw": "nessun JSON", "status": "no_json", "human": 2},
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    (item,) = JUDGE_EEE.items(results, "coherence.jsonl", data)
    assert (item.score, item.correct, item.references, item.reasoning) == (
        2.0,
        False,
        ("1",),
        "il riassunto salta",
    )
    figures = {f.result_id: f for f in JUDGE_EEE.figures(results)}
    mae = figures["meta/coherence_mae"]
    assert mae.details_file == "coherence.jsonl" and mae.lower_is_better and mae.max_score == 4.0
    assert (
        figures["meta/coherence_rho"].min_score == -1.0 and figures["meta/coherence_rho"].details_file is None
    )


def test_a_track_with_neither_an_eee_nor_a_contents_part_exports_a_valid_record_with_no_figure(
    tmp_path: Path, toy_track
) -> None:
    from leaderboard.core.schema import ModelInfo, RunInfo, results_file_path
    from tests.support.toy_track.schema import ToyResults

    toy = ToyResults(
        model=ModelInfo(id="org/toy", revision="c" * 40, precision="float32"),
        run=RunInfo(num_fewshot=0, data="sample", finished_at="2026-01-01T00:00:00Z"),
        score=0.3,
    )
    store = LocalStorage(tmp_path / "results")
    store.write(results_file_path(toy, "2026-01-01T00:00:00Z"), toy.to_json())
    report = export_store(store, None, tmp_path / "out", retrieved_at=RETRIEVED)
    assert report.runs == 1 and report.invalid == []
    (path,) = report.written
    assert path.startswith("data/evalita-llm-toy/org/toy/")
    assert json.loads((tmp_path / "out" / path).read_text())["evaluation_results"] == []


def test_every_figure_of_every_track_round_trips_its_contents_table_value(tmp_path: Path) -> None:
    """Long context and judge: each EEE figure is the contents table's number (and interval) for it."""
    from leaderboard.core.contents import rows_of
    from leaderboard.core.contents_io import parse_results

    store, out, report = _export(tmp_path)
    records = _aggregates(out, report.written)
    checked = 0
    for path, record in records.items():
        track = record["source_metadata"]["additional_details"]["track"]
        if track == "evalita":
            continue  # checked against the ranking itself above
        rows = {r["setting"]: r for r in rows_of(parse_results(store.read(path), path), path, None)}
        for entry in record["evaluation_results"]:
            setting, _, rest = entry["evaluation_result_id"].partition("/")
            column = rest.replace("/", "_")
            row = rows[setting]
            assert entry["score_details"]["score"] == row[column], (path, column)
            interval = entry["score_details"].get("uncertainty", {}).get("confidence_interval")
            if row.get(f"{column}_low") is not None:
                assert (interval["lower"], interval["upper"]) == (row[f"{column}_low"], row[f"{column}_high"])
            checked += 1
    assert checked > 50


def test_an_accuracy_line_without_a_stored_score_gets_lm_evals_item_accuracy_and_f1_lines_none() -> None:
    from leaderboard.tracks.evalita.eee import EEE as EVALITA_EEE

    def line(doc: int, answer: str, **extra: object) -> str:
        return json.dumps({"doc_id": doc, "input": "q", "answer": answer, "target": "B", **extra}) + "\n"

    at = (line(0, "B", choices=["A", "B"]) + line(1, "A", choices=["A", "B"])).encode()
    items = list(EVALITA_EEE.items(None, "at_p1.jsonl", at))  # type: ignore[arg-type]
    assert [(i.score, i.correct) for i in items] == [(1.0, True), (0.0, False)]
    assert items[0].metadata["score"].startswith("answer == target")
    ner = (line(0, "x") + line(1, "y")).encode()
    assert list(EVALITA_EEE.items(None, "ner_p1.jsonl", ner)) == []  # type: ignore[arg-type]
