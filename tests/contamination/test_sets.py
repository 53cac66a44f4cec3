"""The sets tested are the suite's test files as the Evalita harness reads them (and INDAQA2's questions)."""

from __future__ import annotations

import json

import pytest

from backend.tracks.contamination.data import evalita_file, plan_set, read_set, read_sets
from backend.tracks.evalita.data import read_upstream_tasks
from leaderboard.core.datasource import DataSource, DataSourceError
from leaderboard.tracks.contamination.definition import SEPARATOR
from leaderboard.tracks.contamination.suite import INDAQA2, suite_sets
from leaderboard.tracks.evalita.definition import SAMPLE_DATA_DIR, SUITE


def test_every_evalita_task_and_ner_domain_has_one_set_plus_indaqa2() -> None:
    ids = [s.id for s in suite_sets()]
    assert len(ids) == len(set(ids)) == 13
    assert {s.task for s in suite_sets()} == {str(t.id) for t in SUITE} | {INDAQA2}
    assert {"ner-adg", "ner-fic", "ner-wn"} <= set(ids)


def test_each_set_is_the_file_the_harness_reads_as_its_test_split() -> None:
    upstream = read_upstream_tasks()
    checked = 0
    for test_set in suite_sets():
        if test_set.optional:
            continue
        path = evalita_file(test_set, SAMPLE_DATA_DIR)
        assert path.is_file(), path
        # Some upstream task of the same dataset and config evaluates this split.
        assert any(
            t.dataset_path == test_set.dataset_path
            and t.dataset_name in (None, test_set.dataset_config)
            and test_set.split in t.splits
            for t in upstream
        ), test_set
        checked += 1
    assert checked == 12


def test_items_keep_the_files_order_and_text() -> None:
    te = next(s for s in suite_sets() if s.id == "te")
    items = read_set(te, DataSource.parse("sample")).items
    lines = [
        line
        for line in (SAMPLE_DATA_DIR / "te" / "test.jsonl").read_text(encoding="utf-8").splitlines()
        if line
    ]
    assert [json.loads(i) for i in items] == [json.loads(line) for line in lines]
    plan = plan_set(read_set(te, DataSource.parse("sample")))
    assert plan.shards and all(len(c) == 4 for c in plan.contexts)
    assert SEPARATOR not in items[0]


def test_a_missing_required_set_fails_before_the_model_loads_and_a_missing_optional_one_is_skipped(
    tmp_path,
) -> None:
    (tmp_path / "te").mkdir()
    (tmp_path / "te" / "test.jsonl").write_text(
        '{"text1": "a", "text2": "b", "entailment": "SI"}\n', encoding="utf-8"
    )
    read, skipped = read_sets(DataSource.parse(f"local:{tmp_path}"), ["te", INDAQA2])
    assert [s.set.id for s in read] == ["te"] and INDAQA2 in skipped
    with pytest.raises(DataSourceError, match="wic"):
        read_sets(DataSource.parse(f"local:{tmp_path}"), ["wic"])
