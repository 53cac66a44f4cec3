"""The per-item file: one Parquet file per run, read back exactly, refused when malformed."""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from eval_queue.errors import MalformedFileError
from leaderboard.core.items import (
    ITEMS_FORMAT,
    ItemId,
    RunItems,
    TaskItems,
    items_from_parquet,
    items_to_parquet,
)
from tests.support.synthetic.items import SMALL_SIZES, SyntheticSuite


def same_items(a: TaskItems, b: TaskItems) -> None:
    assert (a.task, a.metric, a.labels, a.prompts, a.parts) == (
        b.task,
        b.metric,
        b.labels,
        b.prompts,
        b.parts,
    )
    np.testing.assert_array_equal(a.part_index, b.part_index)
    np.testing.assert_array_equal(a.doc_ids, b.doc_ids)
    assert a.stats.tobytes() == b.stats.tobytes()  # bit for bit


def test_a_run_survives_the_file_bit_for_bit(tmp_path):
    run = SyntheticSuite(SMALL_SIZES, seed=3).run(1, 0.6)
    path = tmp_path / "items.parquet"
    path.write_bytes(items_to_parquet(run))
    back = items_from_parquet(path.read_bytes(), str(path))
    assert back.track == "evalita" and set(back.tasks) == set(run.tasks)
    for task_id, items in run.tasks.items():
        same_items(items, back.tasks[task_id])
    assert back.tasks["ner"].parts == ("adg", "fic", "wn")


def test_the_header_keeps_the_prompt_and_part_order_whatever_the_names():
    items = TaskItems.build(
        "x",
        "mean",
        {
            "zeta": {ItemId("b", 2): [1.0], ItemId("a", 1): [0.5]},
            "alpha": {ItemId("b", 2): [0.0], ItemId("a", 1): [0.25]},
        },
        parts=("b", "a"),
    )
    back = items_from_parquet(items_to_parquet(RunItems("t", {"x": items}))).tasks["x"]
    assert back.prompts == ("zeta", "alpha") and back.parts == ("b", "a")
    assert back.item_ids() == (ItemId("b", 2), ItemId("a", 1))
    same_items(items, back)


def test_rows_in_another_order_read_the_same():
    run = SyntheticSuite(SMALL_SIZES, seed=4).run(2, 0.5, tasks=("ner", "te"))
    table = pq.read_table(io.BytesIO(items_to_parquet(run)))
    shuffled = table.take(np.random.default_rng(0).permutation(table.num_rows))
    sink = io.BytesIO()
    pq.write_table(shuffled, sink)
    back = items_from_parquet(sink.getvalue())
    for task_id, items in run.tasks.items():
        same_items(items, back.tasks[task_id])


def rewrite(data: bytes, change) -> bytes:
    table = pq.read_table(io.BytesIO(data))
    table = change(table)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


@pytest.fixture
def good() -> bytes:
    return items_to_parquet(SyntheticSuite(SMALL_SIZES, seed=5).run(3, 0.5, tasks=("te", "sa")))


def test_a_file_that_is_not_parquet_is_malformed():
    with pytest.raises(MalformedFileError, match="not a per-item file"):
        items_from_parquet(b"{}", "x/items.parquet")


def test_another_format_version_is_malformed(good):
    def change(table: pa.Table) -> pa.Table:
        header = json.loads(table.schema.metadata[b"leaderboard-items"])
        header["format"] = "leaderboard-items/99"
        return table.replace_schema_metadata({b"leaderboard-items": json.dumps(header).encode()})

    with pytest.raises(MalformedFileError, match=ITEMS_FORMAT):
        items_from_parquet(rewrite(good, change))


def test_prompts_scored_on_different_items_are_malformed(good):
    def change(table: pa.Table) -> pa.Table:
        docs = table.column("doc_id").to_numpy().copy()
        docs[0] += 10_000  # one prompt's item is not the others'
        return table.set_column(table.schema.get_field_index("doc_id"), "doc_id", pa.array(docs))

    with pytest.raises(MalformedFileError, match="same items"):
        items_from_parquet(rewrite(good, change))


def test_a_row_with_the_wrong_number_of_statistics_is_malformed(good):
    def change(table: pa.Table) -> pa.Table:
        rows = table.column("stats").to_pylist()
        rows[-1] = rows[-1] + [0.0]
        return table.set_column(table.schema.get_field_index("stats"), "stats", pa.array(rows))

    with pytest.raises(MalformedFileError, match="values"):
        items_from_parquet(rewrite(good, change))


def test_task_items_refuse_unsorted_or_repeated_items():
    with pytest.raises(ValueError, match="sorted"):
        TaskItems(
            "t", "mean", (), ("p1",), ("",), np.zeros(2, np.int16), np.array([3, 3]), np.zeros((2, 1, 1))
        )
    with pytest.raises(ValueError, match="same items"):
        TaskItems.build("t", "mean", {"p1": {ItemId("", 1): [1.0]}, "p2": {ItemId("", 2): [1.0]}})


def test_a_file_announcing_a_huge_decoded_size_is_refused_unread(good, monkeypatch):
    import leaderboard.core.items as items_module

    monkeypatch.setattr(items_module, "MAX_DECODED_BYTES", 1000)
    with pytest.raises(MalformedFileError, match="decoded bytes"):
        items_from_parquet(good)


def test_an_unknown_metric_kind_is_refused_with_the_shared_did_you_mean() -> None:
    from leaderboard.core.metric_kinds import GENERIC_KINDS, UnknownMetricKindError

    with pytest.raises(UnknownMetricKindError) as refused:
        GENERIC_KINDS.get("f1_macor")
    assert "Unknown metric kind 'f1_macor'. Did you mean f1_macro? Valid: " in str(refused.value)
