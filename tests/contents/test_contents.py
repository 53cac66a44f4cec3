"""The contents table: one row per run and setting, each track's columns, rebuilt equal to what publishes wrote."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from eval_queue.storage import LocalStorage
from eval_queue.storage.paths import is_results_file
from leaderboard.__main__ import main as leaderboard_main
from leaderboard.core.contents import (
    CONTENTS_FORMAT,
    CONTENTS_PATH,
    HEAD_COLUMNS,
    METADATA_KEY,
    TAIL_COLUMNS,
    ContentsError,
    contents_schema,
)
from leaderboard.core.contents_io import parse_results, publish_rows, read_contents, rebuild
from leaderboard.core.schema import ModelInfo, RunInfo, results_file_path
from leaderboard.tracks.evalita.app.results import parse_results_file
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.metric_sets import MetricSet
from leaderboard.tracks.evalita.metrics import overall_score, score_task
from leaderboard.tracks.evalita.schema import ResultsFile
from leaderboard.tracks.evalita.uncertainty import MEAN_CPS_FIGURE, cps_figure
from tests.contents.store import BROKEN_FILE, JUDGE_MODEL, evalita_file, write_every_track

REPO_ROOT = Path(__file__).resolve().parents[2]


def _publish_every_file(store: LocalStorage) -> int:
    """What workers do, one results file after another; returns how many files were published."""
    published = 0
    for path in sorted(store.list()):
        if not is_results_file(path) or path == BROKEN_FILE:
            continue
        results = parse_results(store.read(path), path)
        assert results is not None
        publish_rows(store, results, path)
        published += 1
    return published


def _rows(table: pa.Table) -> list[dict]:
    return table.to_pylist()


def test_the_schema_is_the_shared_columns_around_each_tracks_own_with_no_name_twice() -> None:
    schema = contents_schema()
    names = schema.names
    assert len(names) == len(set(names))
    assert names[: len(HEAD_COLUMNS)] == [f.name for f in HEAD_COLUMNS]
    assert names[-len(TAIL_COLUMNS) :] == [f.name for f in TAIL_COLUMNS]
    for expected in ("wic_cps", "sum_avgp", "avg_cps", "prompt_scores", "local_acc", "overall_rho"):
        assert expected in names
    # Intervals and the as-specified set: present, nullable (a run may have neither).
    for name in ("avg_cps_low", "avg_cps_high", "wic_cps_low", "ner_cps_high", "as_specified_avg_cps"):
        assert schema.field(name).nullable
    assert all(field.metadata and field.metadata[b"description"] for field in schema)


def test_each_track_contributes_its_own_rows_and_unreadable_files_are_named_and_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = write_every_track(tmp_path)
    with caplog.at_level(logging.WARNING):
        rebuilt = rebuild(store)
    assert [p.path for p in rebuilt.problems] == [BROKEN_FILE]
    assert BROKEN_FILE in caplog.text
    rows = _rows(rebuilt.table)
    by_track = pd.DataFrame(rows).groupby("track")["setting"].apply(sorted).to_dict()
    assert set(by_track) == {"evalita", "long-context", "judge"}
    assert set(by_track["evalita"]) == {"0-shot", "5-shot"}
    assert by_track["judge"] == ["meta"]
    # A long-context run has one row per context setting it covered.
    long_context = [r for r in rows if r["track"] == "long-context"]
    for path in {r["results_path"] for r in long_context}:
        results = parse_results(store.read(path), path)
        mine = [r for r in long_context if r["results_path"] == path]
        assert sorted(r["setting"] for r in mine) == sorted(s.value for s in results.run.context_settings)
        for row in mine:
            sets = results.settings[row["setting"]].sets
            assert row["local_acc"] == sets["local"].acc and row["summary_em"] == sets["summary"].em
    judge = next(r for r in rows if r["track"] == "judge")
    assert judge["model"] == JUDGE_MODEL and judge["overall_rho"] is not None and judge["wic_cps"] is None


def test_an_evalita_row_has_the_cps_maxp_and_avgp_of_its_json_and_every_prompt_score(tmp_path: Path) -> None:
    store = write_every_track(tmp_path)
    checked = 0
    for row in _rows(rebuild(store).table):
        if row["track"] != "evalita":
            continue
        results = ResultsFile.from_json(store.read(row["results_path"]), row["results_path"])
        cps = {}
        for task in SUITE:
            scores = {p: s.score for p, s in results.tasks[task.id].prompts.items()}
            expected = score_task(task, scores)
            assert (row[f"{task.id}_cps"], row[f"{task.id}_maxp"], row[f"{task.id}_avgp"]) == (
                expected.cps,
                expected.maxp,
                expected.avgp,
            )
            assert row[f"{task.id}_best_prompt"] == expected.best_prompt
            cps[task.id] = expected.cps
            checked += 1
        assert row["avg_cps"] == overall_score(cps).avg_cps
        assert row["comparable"] == results.comparable
        assert len(row["prompt_scores"]) == sum(len(t.prompts) for t in results.tasks.values())
        assert json.loads(row["run_json"]) == results.run.model_dump(mode="json")
    assert checked >= 10 * 13


def test_an_evalita_row_carries_its_files_intervals_and_as_specified_cps_or_nulls(tmp_path: Path) -> None:
    store = write_every_track(tmp_path)
    with_intervals = with_specified = 0
    for row in _rows(rebuild(store).table):
        if row["track"] != "evalita":
            continue
        results = ResultsFile.from_json(store.read(row["results_path"]), row["results_path"])
        if results.uncertainty is None:
            assert row["avg_cps_low"] is None and row["wic_cps_high"] is None
        else:
            with_intervals += 1
            intervals = results.uncertainty.intervals
            assert (row["avg_cps_low"], row["avg_cps_high"]) == tuple(intervals[MEAN_CPS_FIGURE])
            assert (row["ner_cps_low"], row["ner_cps_high"]) == tuple(intervals[cps_figure("ner")])
        record = parse_results_file(store.read(row["results_path"]), row["results_path"])
        if MetricSet.AS_SPECIFIED in record.sets_missing:
            assert row["as_specified_avg_cps"] is None and row["wic_as_specified_cps"] is None
        else:
            with_specified += 1
            scores = record.for_metric_set(MetricSet.AS_SPECIFIED).prompt_scores
            cps = {t.id: score_task(t, dict(scores.get(t.id, {}))).cps for t in SUITE}
            assert row["as_specified_avg_cps"] == overall_score(cps).avg_cps
            assert row["wic_as_specified_cps"] == cps["wic"]
    assert with_intervals >= 6 and with_specified >= 1


def test_a_track_without_a_contents_part_gets_one_row_of_shared_columns(tmp_path: Path, toy_track) -> None:
    from tests.support.toy_track.schema import ToyResults

    toy = ToyResults(
        model=ModelInfo(id="org/toy", revision="c" * 40, precision="float32"),
        run=RunInfo(num_fewshot=0, data="sample", finished_at="2026-01-01T00:00:00Z"),
        score=0.3,
    )
    path = results_file_path(toy, "2026-01-01T00:00:00Z")
    store = LocalStorage(tmp_path / "results")
    store.write(path, toy.to_json())
    [row] = _rows(rebuild(store).table)
    assert (row["track"], row["setting"], row["results_path"]) == ("toy", None, path)


def test_rebuild_after_deleting_the_table_gives_the_table_the_publishes_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path))
    store = write_every_track(tmp_path)
    assert _publish_every_file(store) > 15
    published = read_contents(store)
    assert published is not None
    store.delete(CONTENTS_PATH)
    assert read_contents(store) is None

    assert leaderboard_main(["rebuild-contents"]) == 0
    rebuilt = read_contents(store)
    assert rebuilt is not None
    assert rebuilt.schema.equals(published.schema, check_metadata=True)
    assert _rows(rebuilt) == _rows(published)


def test_rebuild_contents_names_a_malformed_file_skips_it_and_keeps_the_others(tmp_path: Path) -> None:
    store = write_every_track(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALITA_")}
    done = subprocess.run(
        [sys.executable, "-m", "leaderboard", "rebuild-contents"],
        cwd=REPO_ROOT,
        env={**env, "EVALITA_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "1 malformed results file(s) skipped" in done.stderr and BROKEN_FILE in done.stderr
    assert "25 row(s) from 23 results file(s)" in done.stdout
    table = read_contents(store)
    assert table is not None and BROKEN_FILE not in table.column("results_path").to_pylist()


def test_publishing_a_file_again_replaces_its_rows(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path / "results")
    path, first = evalita_file("org/a", 0.4)
    other_path, other = evalita_file("org/b", 0.6)
    for p, r in ((path, first), (other_path, other)):
        store.write(p, r.to_json())
        publish_rows(store, r, p)
    _, again = evalita_file("org/a", 0.7)  # a rerun of the same request writes the same path
    store.write(path, again.to_json())
    publish_rows(store, again, path)
    table = read_contents(store)
    assert table is not None
    rows = {r["model"]: r for r in _rows(table)}
    assert set(rows) == {"org/a", "org/b"}
    assert rows["org/a"]["te_maxp"] == pytest.approx(0.75) and rows["org/b"]["te_maxp"] == pytest.approx(0.65)
    assert rows["org/a"]["results_version"] == store.versions(path)[path]


def test_a_contents_file_that_is_not_a_table_is_never_overwritten_by_a_publish(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path / "results")
    store.write(CONTENTS_PATH, b"not parquet at all")
    path, results = evalita_file("org/a")
    store.write(path, results.to_json())
    with pytest.raises(ContentsError, match="not a Parquet file"):
        publish_rows(store, results, path)
    assert store.read(CONTENTS_PATH) == b"not parquet at all"


def _published(store: LocalStorage, model: str) -> pa.Table:
    """The contents table after ``model``'s Evalita results file is written and published."""
    path, results = evalita_file(model)
    store.write(path, results.to_json())
    publish_rows(store, results, path)
    table = read_contents(store)
    assert table is not None
    return table


def test_a_table_written_with_fewer_columns_gains_the_new_ones_on_the_next_publish(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path / "results")
    old = _published(store, "org/a")
    # An older table: without the judge columns (as if that track came later).
    narrow = old.select([n for n in old.column_names if not n.startswith(("coherence_", "overall_"))])
    sink = io.BytesIO()
    pq.write_table(narrow, sink)
    store.write(CONTENTS_PATH, sink.getvalue())
    table = _published(store, "org/b")
    assert table.schema.names == contents_schema().names
    assert sorted(table.column("model").to_pylist()) == ["org/a", "org/b"]


def _with_format(table: pa.Table, fmt: str) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table.replace_schema_metadata({METADATA_KEY: json.dumps({"format": fmt}).encode()}), sink)
    return sink.getvalue()


def test_a_version_1_table_is_read_and_written_back_as_version_2_while_an_unknown_version_is_refused(
    tmp_path: Path,
) -> None:
    store = LocalStorage(tmp_path / "results")
    table = _published(store, "org/a")
    assert json.loads(table.schema.metadata[METADATA_KEY]) == {"format": CONTENTS_FORMAT}
    # Version 1: before the draws column (a reader of version 1 refuses version 2, so reads files).
    store.write(CONTENTS_PATH, _with_format(table.drop_columns(["draws"]), "leaderboard-contents/1"))
    old = read_contents(store)
    assert old is not None and old.column("model").to_pylist() == ["org/a"]
    table = _published(store, "org/b")
    assert json.loads(table.schema.metadata[METADATA_KEY]) == {"format": CONTENTS_FORMAT}
    store.write(CONTENTS_PATH, _with_format(table, "leaderboard-contents/99"))
    with pytest.raises(ContentsError, match="not a leaderboard-contents/1 or leaderboard-contents/2 table"):
        read_contents(store)


def test_cost_recipe_and_versions_reach_their_columns(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path / "results")
    path, results = evalita_file("org/a")
    store.write(path, results.to_json())
    publish_rows(store, results, path)
    table = read_contents(store)
    assert table is not None
    [row] = _rows(table)
    assert (row["loglikelihood_s"], row["generation_s"], row["gpus"], row["gpu_hours"]) == (
        1000.0,
        2000.0,
        1,
        1.0,
    )
    assert row["duration_s"] == 3600.0 and str(row["finished_at"]).startswith("2026-01-02 03:04:05")
