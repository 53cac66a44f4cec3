"""The app's cold start reads the contents table instead of every results file, and ranks the same."""

from __future__ import annotations

import gc
import logging
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from eval_queue.queue import RequestQueue
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage, Storage, Stores
from leaderboard.core.contents import CONTENTS_PATH
from leaderboard.core.contents_io import read_contents, rebuild
from leaderboard.tracks.evalita.app.contents import records_of_table
from leaderboard.tracks.evalita.app.views.board import Board
from leaderboard.tracks.evalita.app.views.labels import RankingFilters
from leaderboard.tracks.evalita.app.views.ranking import ranking_view
from leaderboard.tracks.evalita.metric_sets import MetricSet
from leaderboard.tracks.evalita.vocabulary import Aggregate, Setting
from leaderboard.ui.context import AppContext, collector_paused
from tests.contents.store import BROKEN_FILE, evalita_file, write_every_track

EVERY_COLUMN = RankingFilters(columns=tuple(Aggregate), show_noncomparable=True)


class CountingStorage:
    """A store that counts the files read from it (the cold start's cost, in files)."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.reads: Counter[str] = Counter()

    def read(self, path: str, *, max_bytes: int | None = None) -> bytes:
        self.reads[path] += 1
        return self.inner.read(path, max_bytes=max_bytes)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.inner, name)


def _cold_start(data_dir: Path, *, use_contents: bool) -> tuple[Board, Counter[str]]:
    results = CountingStorage(LocalStorage(data_dir / "results"))
    stores = Stores(LocalStorage(data_dir / "requests"), results, LocalStorage(data_dir / "details"))  # type: ignore[arg-type]
    ctx = AppContext(
        settings=Settings(data_dir=data_dir),
        stores=stores,
        queue=RequestQueue(stores.requests),
        use_contents=use_contents,
    )
    return ctx.snapshot("evalita"), results.reads


def _rankings(board: Board) -> dict[Setting, pd.DataFrame]:
    return {s: ranking_view(board, s, EVERY_COLUMN).table for s in Setting}


def _evalita_json_reads(reads: Counter[str], board: Board) -> set[str]:
    evalita_paths = set(board.loaded.runs["results_path"])
    return {path for path in reads if path in evalita_paths}


def _assert_same_rankings(a: Board, b: Board) -> None:
    for setting, table in _rankings(a).items():
        pd.testing.assert_frame_equal(table, _rankings(b)[setting], check_exact=True)
    pd.testing.assert_frame_equal(a.loaded.runs, b.loaded.runs, check_exact=True)


def test_the_cold_start_reads_the_table_not_the_evalita_files_and_ranks_as_from_them(tmp_path: Path) -> None:
    store = write_every_track(tmp_path)
    store.write(CONTENTS_PATH, rebuild(store).data)

    from_contents, contents_reads = _cold_start(tmp_path, use_contents=True)
    from_json, json_reads = _cold_start(tmp_path, use_contents=False)

    _assert_same_rankings(from_contents, from_json)
    assert len(from_contents.loaded.runs) >= 13
    assert contents_reads[CONTENTS_PATH] == 1
    assert _evalita_json_reads(contents_reads, from_contents) == set()
    assert len(_evalita_json_reads(json_reads, from_json)) == len(from_json.loaded.runs)
    # The records are the files' own: intervals and the other metric set included.
    assert from_contents.loaded.records == from_json.loaded.records
    assert any(r.uncertainty is not None for r in from_contents.loaded.records)
    assert any(MetricSet.AS_SPECIFIED not in r.sets_missing for r in from_contents.loaded.records)
    specified = from_contents.loaded.for_metric_set(MetricSet.AS_SPECIFIED)
    assert specified.records == from_json.loaded.for_metric_set(MetricSet.AS_SPECIFIED).records
    # The unreadable file is not in the table: it is read, and reported, as before.
    assert contents_reads[BROKEN_FILE] == 1
    assert [p.path for p in from_contents.loaded.problems] == [BROKEN_FILE]


def test_the_cold_start_reads_only_the_columns_its_row_reader_names(tmp_path: Path) -> None:
    store = write_every_track(tmp_path)
    store.write(CONTENTS_PATH, rebuild(store).data)
    full = read_contents(store)
    assert full is not None

    table = read_contents(store, records_of_table.columns)
    assert table is not None
    # The reader's columns (and the path), in the file's order: not the rest of the table.
    assert set(table.column_names) == {"results_path", *records_of_table.columns}
    assert len(table.column_names) < len(full.column_names) / 4
    assert table.num_rows == full.num_rows
    assert records_of_table(table).keys() == records_of_table(full).keys()


def test_a_store_read_runs_with_the_garbage_collector_paused_and_restores_it(tmp_path: Path) -> None:
    store = write_every_track(tmp_path)
    store.write(CONTENTS_PATH, rebuild(store).data)
    results = CountingStorage(LocalStorage(tmp_path / "results"))
    seen: list[bool] = []
    reading = results.read

    def read(path: str, *, max_bytes: int | None = None) -> bytes:
        seen.append(gc.isenabled())
        return reading(path, max_bytes=max_bytes)

    results.read = read  # type: ignore[method-assign]
    stores = Stores(LocalStorage(tmp_path / "requests"), results, LocalStorage(tmp_path / "details"))  # type: ignore[arg-type]
    ctx = AppContext(Settings(data_dir=tmp_path), stores, RequestQueue(stores.requests))
    assert gc.isenabled()
    ctx.snapshot("evalita")
    assert seen and not any(seen)
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is left as it was
    finally:
        gc.enable()


def test_files_newer_than_the_table_are_read_from_json(tmp_path: Path) -> None:
    store = write_every_track(tmp_path)
    store.write(CONTENTS_PATH, rebuild(store).data)
    # After the table was written: a new run, and a rerun that replaced a file with other scores.
    new_path, new = evalita_file("late-org/new-model", 0.9)
    store.write(new_path, new.to_json())
    from_json, _ = _cold_start(tmp_path, use_contents=False)
    replaced = from_json.loaded.runs.query("model == 'paper-dev/LLM-3' and num_fewshot == 0").iloc[0]
    _, rerun = evalita_file(
        "paper-dev/LLM-3", 0.05, revision=replaced["revision"], precision=replaced["precision"]
    )
    store.write(replaced["results_path"], rerun.to_json())

    board, reads = _cold_start(tmp_path, use_contents=True)
    assert _evalita_json_reads(reads, board) == {new_path, replaced["results_path"]}
    _assert_same_rankings(board, _cold_start(tmp_path, use_contents=False)[0])
    runs = board.loaded.runs.set_index(["model", "num_fewshot"])
    assert ("late-org/new-model", 0) in runs.index
    scores = board.loaded.prompt_scores
    key = ("paper-dev/LLM-3", replaced["revision"], replaced["precision"], 0)
    assert scores[key]["te"]["p1"] == pytest.approx(0.05)  # the file's, not the table's


def test_an_unusable_table_is_reported_and_every_file_is_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = write_every_track(tmp_path)
    store.write(CONTENTS_PATH, b"PAR1 but not really")
    with caplog.at_level(logging.WARNING):
        board, reads = _cold_start(tmp_path, use_contents=True)
    assert f"not using {CONTENTS_PATH}" in caplog.text and "rebuild-contents" in caplog.text
    assert len(_evalita_json_reads(reads, board)) == len(board.loaded.runs)
    _assert_same_rankings(board, _cold_start(tmp_path, use_contents=False)[0])
