"""The cold start's columnar records (issue 32) equal those made by reading every file: records,
tables, views, with intervals, each task's kept draws, and files newer than the table."""

from __future__ import annotations

import json
from binascii import a2b_base64
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from eval_queue.queue import RequestQueue
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage, Stores
from leaderboard.core.contents import CONTENTS_PATH
from leaderboard.core.contents_io import rebuild
from leaderboard.core.summary import UncertaintySummary
from leaderboard.tracks.evalita.app import tables
from leaderboard.tracks.evalita.app.compact import DrawsRow, IntervalRow, compact_summary
from leaderboard.tracks.evalita.app.contents import TableScores
from leaderboard.tracks.evalita.app.records import RUN_KEY
from leaderboard.tracks.evalita.app.views import subsets
from leaderboard.tracks.evalita.app.views.board import Board
from leaderboard.tracks.evalita.app.views.labels import RankingFilters
from leaderboard.tracks.evalita.app.views.ranking import ranking_view
from leaderboard.tracks.evalita.cps_intervals import TASK_DRAWS_KEPT
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.metric_sets import MetricSet
from leaderboard.tracks.evalita.schema import ResultsFile
from leaderboard.tracks.evalita.uncertainty import MEAN_CPS_FIGURE, cps_figure
from leaderboard.tracks.evalita.vocabulary import Aggregate, Setting
from leaderboard.ui.context import AppContext
from tests.contents.test_spilled_draws import _resident_kb
from tests.ui.user_views_store import write_user_views_store

#: Every column, every run, and a custom average over three tasks with "complete results only".
VIEWS = (
    RankingFilters(columns=tuple(Aggregate), show_noncomparable=True),
    RankingFilters(average_over=("wic", "sa", "sum"), complete_only=True),
)


def _board(data_dir: Path, *, use_contents: bool) -> Board:
    stores = Stores(
        LocalStorage(data_dir / "requests"),
        LocalStorage(data_dir / "results"),
        LocalStorage(data_dir / "details"),
    )
    ctx = AppContext(
        Settings(data_dir=data_dir), stores, RequestQueue(stores.requests), use_contents=use_contents
    )
    return ctx.snapshot("evalita")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str]]:
    """The user views' store with its contents table, then two files newer than the table: a run
    rescored (other scores, its intervals dropped) and a new run (a copy under another name)."""
    data = tmp_path_factory.mktemp("columnar")
    write_user_views_store(data / "results")
    results = LocalStorage(data / "results")
    results.write(CONTENTS_PATH, rebuild(results).data)
    paths = sorted(p for p in results.list("") if p.endswith("shot.json") and "acme/model-a" in p)
    rescored = json.loads(results.read(paths[0]))
    for task in rescored["tasks"].values():
        for prompt in task["prompts"].values():
            prompt["score"] = None if prompt["score"] is None else prompt["score"] / 2
    rescored.pop("uncertainty")
    results.write(paths[0], ResultsFile.model_validate(rescored).to_json())
    new = json.loads(results.read(paths[1]))
    new["model"]["id"] = "late-org/new-model"
    new_path = paths[1].replace("acme/model-a", "late-org/new-model")
    results.write(new_path, ResultsFile.model_validate(new).to_json())
    return data, {paths[0], new_path}


def test_columnar_records_equal_the_files_own_with_intervals_and_task_draws(
    store: tuple[Path, set[str]],
) -> None:
    data, newer = store
    cold, files = _board(data, use_contents=True), _board(data, use_contents=False)
    from_table = [r for r in cold.loaded.records if isinstance(r.scores, TableScores)]
    # The table served every run but the two newer files, which were read as files.
    assert len(from_table) == len(cold.loaded.records) - len(newer) > 10
    assert {p for p in cold.runs["results_path"] if p in newer} == newer
    with_draws = [r for r in from_table if r.uncertainty is not None]
    assert len(with_draws) > 10
    for record in with_draws:
        # Kept compactly: one array of intervals, one bytes of draws (each task's too).
        assert isinstance(record.uncertainty.intervals, IntervalRow)
        assert isinstance(record.uncertainty.draws, DrawsRow)
        assert {MEAN_CPS_FIGURE, *(cps_figure(t.id) for t in SUITE)} <= set(record.uncertainty.draws)
    assert cold.loaded.records == files.loaded.records
    for metrics in MetricSet:
        a, b = cold.loaded.for_metric_set(metrics), files.loaded.for_metric_set(metrics)
        assert a.records == b.records
        assert [r.score_rows for r in a.records] == [r.score_rows for r in b.records]
        assert [r.set_uncertainty for r in a.records] == [r.set_uncertainty for r in b.records]
        assert a.missing_in(metrics) == b.missing_in(metrics)


def test_columnar_blocks_share_one_set_of_field_names_and_dump_as_the_files_own(
    store: tuple[Path, set[str]],
) -> None:
    """Pydantic's set of the names each block was given (2.3 KB a run block) is one object per
    distinct set across the table's runs (issue 32's memory), and every dump is the file's."""
    data, _ = store
    cold, files = _board(data, use_contents=True), _board(data, use_contents=False)
    from_table = [r for r in cold.loaded.records if isinstance(r.scores, TableScores)]
    for block in ("model", "run"):
        sets = [getattr(r, block).__pydantic_fields_set__ for r in from_table]
        assert len({id(names) for names in sets}) == len({frozenset(names) for names in sets}) < len(sets)
    for a, b in zip(cold.loaded.records, files.loaded.records, strict=True):
        for block in ("model", "run"):
            mine, theirs = getattr(a, block), getattr(b, block)
            assert mine.model_dump(exclude_unset=True) == theirs.model_dump(exclude_unset=True)
            assert mine.model_fields_set == theirs.model_fields_set


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads the process's mappings (Linux)")
def test_the_ranking_reads_the_mapped_mean_cps_draws_then_hands_their_pages_back(
    store: tuple[Path, set[str]],
) -> None:
    """Every draws matrix of the cold start is spilled to a mapped file (issue 32's memory); the
    ranking's tiers read the mean CPS's and leave none of its pages resident, with the tiers of
    the parsed files."""
    data, _ = store
    cold, files = _board(data, use_contents=True), _board(data, use_contents=False)
    for num_fewshot in (0, 5):
        tiers = cold.rows(num_fewshot)["tier"].tolist()
        assert tiers == files.rows(num_fewshot)["tier"].tolist()
        assert any(t is not None and t == t for t in tiers)
    summaries = [
        s for s in cold.loaded.uncertainty.values() if s is not None and isinstance(s.draws, DrawsRow)
    ]
    column = summaries[0].draws.columns[MEAN_CPS_FIGURE]
    assert column._mapping is not None  # spilled
    assert _resident_kb(column.matrix.ctypes.data) == 0
    assert column.matrix.sum() != 0  # read again: the same pages, mapped back
    assert _resident_kb(column.matrix.ctypes.data) > 0


def test_columnar_tables_and_views_equal_those_from_every_file(store: tuple[Path, set[str]]) -> None:
    data, _ = store
    cold, files = _board(data, use_contents=True), _board(data, use_contents=False)
    checked = 0
    for metrics in MetricSet:
        a, b = cold.with_metrics(metrics), files.with_metrics(metrics)
        pd.testing.assert_frame_equal(a.runs, b.runs, check_exact=True)
        pd.testing.assert_frame_equal(a.scores, b.scores, check_exact=True)
        for setting in Setting:
            pd.testing.assert_frame_equal(
                tables.ranking_table(a.loaded, setting.num_fewshot, include_noncomparable=True),
                tables.ranking_table(b.loaded, setting.num_fewshot, include_noncomparable=True),
                check_exact=True,
            )
            for filters in VIEWS:
                shown = ranking_view(a, setting, filters).table
                pd.testing.assert_frame_equal(
                    shown, ranking_view(b, setting, filters).table, check_exact=True
                )
                checked += len(shown)
            for task in SUITE:
                pd.testing.assert_frame_equal(
                    a.prompt_rows(task.id, setting.num_fewshot, True),
                    b.prompt_rows(task.id, setting.num_fewshot, True),
                    check_exact=True,
                )
    assert checked > 40
    # Tiers and intervals are there to compare (not all empty on both sides).
    ranked = tables.ranking_table(cold.loaded, 0)
    assert ranked[tables.TIER_COLUMN].notna().sum() > 5
    assert ranked[tables.low_column(tables.MAIN_SCORE_COLUMN)].notna().sum() > 5


def test_a_compact_block_is_the_block_and_differs_where_it_does(store: tuple[Path, set[str]]) -> None:
    data, _ = store
    results = LocalStorage(data / "results")
    path = next(p for p in sorted(results.list("")) if p.endswith("0shot.json") and "solo-1" in p)
    raw = json.loads(results.read(path))["uncertainty"]
    parsed = UncertaintySummary.model_validate(raw)
    compact = compact_summary(json.loads(json.dumps(raw)))
    assert compact == parsed
    figure = cps_figure("wic")
    assert compact.draws[figure].float32 == parsed.draws[figure].float32
    assert np.array_equal(compact.draws.float32_values(figure), parsed.draws[figure].float32_values())
    assert compact.interval(figure) == parsed.interval(figure)
    # One resampled value or one interval end changed: no longer the same block.
    values = parsed.draws[figure].float32_values().copy()
    values[0] += 0.25
    moved = json.loads(json.dumps(raw))
    moved["draws"][figure]["float32"] = (
        parsed.draws[figure]
        .model_copy(
            update={"float32": __import__("base64").b64encode(values.astype("<f4").tobytes()).decode()}
        )
        .float32
    )
    assert compact_summary(moved) != parsed
    shifted = json.loads(json.dumps(raw))
    low, high = shifted["intervals"][figure]
    shifted["intervals"][figure] = [low, high + 0.01]
    assert compact_summary(shifted) != parsed


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda b: b["intervals"].update({"mean_cps": [0.6, 0.4]}), "low ≤ high"),
        (lambda b: b["intervals"].update({"mean_cps": [0.4]}), "pair"),
        (lambda b: b["draws"]["mean_cps"].update({"float32": "AAAA"}), "whole float32"),
        (lambda b: b["draws"]["mean_cps"].update({"float32": "AADAfw=="}), "finite"),
        (lambda b: b.update({"level": 2.0}), "level"),
    ],
)
def test_a_block_the_model_would_refuse_is_refused(
    store: tuple[Path, set[str]], change: object, reason: str
) -> None:
    data, _ = store
    results = LocalStorage(data / "results")
    path = next(p for p in sorted(results.list("")) if p.endswith("0shot.json") and "solo-1" in p)
    raw = json.loads(results.read(path))["uncertainty"]
    change(raw)  # type: ignore[operator]
    with pytest.raises(ValueError, match=reason):
        compact_summary(raw)


def _before_the_draws_column(table: pa.Table, every: int = 1) -> pa.Table:
    """``table`` as a writer before the ``draws`` column wrote it: each row's draws back in its
    record_json (base64 text, as the file holds them), no ``draws`` column.  ``every`` > 1: only
    every ``every``-th row so, the column kept (null there): a table the worker extended."""
    import base64

    blocks, kept = [], []
    rows = zip(table.column("record_json").to_pylist(), table.column("draws").to_pylist(), strict=True)
    for i, (text, draws) in enumerate(rows):
        if i % every:
            blocks.append(text)
            kept.append(draws)
            continue
        parsed = json.loads(text) if text else None
        if parsed is not None and draws is not None and "uncertainty" in parsed:
            parsed["uncertainty"]["draws"] = {
                d["figure"]: {"key": d["key"], "float32": base64.b64encode(d["float32"]).decode()}
                for d in draws
            }
        blocks.append(None if parsed is None else json.dumps(parsed))
        kept.append(None)
    at = table.column_names.index("record_json")
    table = table.set_column(at, table.field(at), pa.array(blocks, pa.string()))
    if every == 1:
        return table.drop_columns(["draws"])
    at = table.column_names.index("draws")
    return table.set_column(at, table.field(at), pa.array(kept, table.field(at).type))


@pytest.mark.parametrize("every", [1, 2], ids=["every-row", "every-other-row"])
def test_a_table_written_before_the_draws_column_gives_the_same_records(tmp_path: Path, every: int) -> None:
    from leaderboard.core.contents import to_parquet

    write_user_views_store(tmp_path / "results")
    results = LocalStorage(tmp_path / "results")
    table = rebuild(results).table
    # Today's table: the draws as bytes, record_json without them.
    assert table.column("draws").null_count < len(table)
    assert not any('"draws"' in (text or "") for text in table.column("record_json").to_pylist())
    older = _before_the_draws_column(table, every)
    results.write(CONTENTS_PATH, to_parquet(older))
    cold, files = _board(tmp_path, use_contents=True), _board(tmp_path, use_contents=False)
    from_table = [r for r in cold.loaded.records if isinstance(r.scores, TableScores)]
    assert len(from_table) == len(cold.loaded.records) > 10
    assert sum(isinstance(r.uncertainty.draws, DrawsRow) for r in from_table if r.uncertainty) > 10
    assert cold.loaded.records == files.loaded.records


@pytest.mark.parametrize("columnar", [True, False], ids=["draws-column", "draws-in-record-json"])
def test_a_row_whose_block_is_refused_is_read_from_its_file_and_the_others_from_the_table(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, columnar: bool
) -> None:

    from leaderboard.core.contents import to_parquet

    write_user_views_store(tmp_path / "results")
    results = LocalStorage(tmp_path / "results")
    table = rebuild(results).table
    if columnar:
        draws = table.column("draws").to_pylist()
        bad = next(i for i, sets in enumerate(draws) if sets)
        for kept in draws[bad]:
            if kept["figure"] == MEAN_CPS_FIGURE:
                kept["float32"] = np.array([np.nan], "<f4").tobytes()  # one NaN
        at = table.column_names.index("draws")
        table = table.set_column(at, table.field(at), pa.array(draws, table.field(at).type))
    else:
        table = _before_the_draws_column(table)
        blocks = table.column("record_json").to_pylist()
        bad = next(i for i, text in enumerate(blocks) if text and '"draws"' in text)
        parsed = json.loads(blocks[bad])
        parsed["uncertainty"]["draws"][MEAN_CPS_FIGURE]["float32"] = "AADAfw=="  # one NaN
        blocks[bad] = json.dumps(parsed)
        at = table.column_names.index("record_json")
        table = table.set_column(at, table.field(at), pa.array(blocks, pa.string()))
    results.write(CONTENTS_PATH, to_parquet(table))
    bad_path = table.column("results_path")[bad].as_py()

    cold, files = _board(tmp_path, use_contents=True), _board(tmp_path, use_contents=False)
    assert f"{bad_path}: its row of the contents table is unusable" in caplog.text
    assert "not a finite number" in caplog.text
    from_files = [
        path
        for path, r in zip(cold.runs["results_path"], cold.loaded.records, strict=True)
        if not isinstance(r.scores, TableScores)
    ]
    assert from_files == [bad_path]
    assert cold.loaded.records == files.loaded.records


def test_a_custom_average_from_compact_rows_equals_the_one_from_each_runs_decoded_text(
    store: tuple[Path, set[str]],
) -> None:
    """The custom average reads its per-task draws as rows of the compact blocks' float32 matrices
    (issue 32): the very numbers, sums and tiers of decoding every run's base64 text one by one."""
    data, _ = store
    cold, files = _board(data, use_contents=True), _board(data, use_contents=False)
    chosen = ("wic", "sa", "sum")
    for num_fewshot in (0, 5):
        rows = cold.rows(num_fewshot)
        keys = [(m, r, p, int(k)) for m, r, p, k in rows[list(RUN_KEY)].itertuples(index=False)]
        comparable = rows["comparable"].tolist()
        averages = [
            subsets.custom_average(keys, b.loaded.prompt_scores, b.loaded.uncertainty, chosen, comparable)
            for b in (cold, files)
        ]
        for field in ("points", "lows", "highs"):
            np.testing.assert_array_equal(getattr(averages[0], field), getattr(averages[1], field))
        assert averages[0].tiers == averages[1].tiers
        assert sum(t is not None for t in averages[0].tiers) > 5
        # The draws by hand: each run's text decoded (the block as the file holds it), summed in task order.
        by_hand = np.full((len(keys), TASK_DRAWS_KEPT), np.nan)
        for i, key in enumerate(keys):
            summary = files.loaded.uncertainty.get(key)
            if summary is not None and all(cps_figure(t) in summary.draws for t in chosen):
                total = np.zeros(TASK_DRAWS_KEPT)
                for t in chosen:
                    raw = a2b_base64(summary.draws[cps_figure(t)].float32)
                    total += np.frombuffer(raw, dtype="<f4")
                by_hand[i] = total / len(chosen)
        summaries = [cold.loaded.uncertainty.get(k) for k in keys]
        assert any(isinstance(s.draws, DrawsRow) for s in summaries if s is not None)
        reflected, _, draw_keys = subsets._task_draws(summaries, chosen)
        np.testing.assert_array_equal(reflected, by_hand)
        assert [k is not None for k in draw_keys] == list(np.isfinite(by_hand).all(axis=1))
