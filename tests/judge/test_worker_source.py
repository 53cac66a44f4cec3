"""Where a worker's judge reads its annotated set: ``--judge-data``, or what its ``--data`` implies."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.tracks.judge.run import annotated_set_source
from leaderboard.core.datasource import DataSourceKind
from leaderboard.tracks.judge.data import SAMPLE_DIR, JudgeDataError, load_annotated_set


def test_a_sample_worker_judges_the_bundled_sample() -> None:
    source = annotated_set_source("sample")
    assert (source.kind, source.folder(SAMPLE_DIR), source.label) == (
        DataSourceKind.SAMPLE,
        SAMPLE_DIR,
        "sample",
    )


def test_a_local_worker_reads_the_judge_folder_and_labels_it_by_its_data_folder(tmp_path: Path) -> None:
    data = tmp_path / "evalita-data"
    (data / "judge").mkdir(parents=True)
    (data / "judge" / "annotated.jsonl").write_bytes((SAMPLE_DIR / "annotated.jsonl").read_bytes())

    source = annotated_set_source(f"local:{data}")

    assert source.label == "local:evalita-data"
    assert len(load_annotated_set(source).items) == 20


def test_a_local_worker_without_a_judge_folder_says_where_the_set_goes(tmp_path: Path) -> None:
    with pytest.raises(JudgeDataError, match=r"no judge/annotated\.jsonl.*--judge-data"):
        annotated_set_source(f"local:{tmp_path}")


def test_a_hub_worker_needs_judge_data_and_judge_data_wins_over_data() -> None:
    with pytest.raises(JudgeDataError, match=r"--judge-data hub:<org>/<name>"):
        annotated_set_source("hub")
    assert annotated_set_source("hub", "hub:org/annotated").label == "hub:org/annotated"
    assert annotated_set_source("hub", "sample").label == "sample"
