"""Annotated sets and few-shot files: the bundled sample loads; bad files fail with a clear message."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from leaderboard.core.datasource import DataSourceKind
from leaderboard.tracks.judge.data import (
    ANNOTATED_FILE,
    JudgeDataError,
    annotated_source,
    load_annotated_set,
    load_few_shot,
)
from leaderboard.tracks.judge.definition import SCORES, Criterion
from leaderboard.tracks.judge.items import meta_units
from leaderboard.tracks.judge.prompts import render_prompt
from leaderboard.tracks.judge.rubric import CRITERIA


def _row(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "doc_id": "d1",
        "document": "Il comune ha approvato il bilancio.",
        "summary_id": "s1",
        "summary": "Approvato il bilancio.",
        "scores": {c.value: 3 for c in CRITERIA},
    }
    row.update(changes)
    return row


def _write(folder: Path, rows: list[Any], name: str = ANNOTATED_FILE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8"
    )
    return path


def test_the_bundled_sample_has_varied_project_scores_on_every_criterion() -> None:
    sample = load_annotated_set("sample")

    assert sample.label == "sample"
    assert sample.criteria == CRITERIA
    documents = {item.doc_id: item.document for item in sample.items}
    assert 4 <= len(documents) <= 5
    assert all(150 <= len(text.split()) <= 300 for text in documents.values())
    per_document = Counter(item.doc_id for item in sample.items)
    assert all(3 <= n <= 4 for n in per_document.values())
    for criterion in CRITERIA:
        scores = [item.scores[criterion] for item in sample.items]
        assert set(scores) <= set(SCORES)
        assert len(set(scores)) >= 3, f"{criterion}: summaries should differ in quality"
    assert {item.annotator for item in sample.items} == {"project"}


def test_every_sample_item_becomes_five_units_with_its_human_score() -> None:
    sample = load_annotated_set("sample")

    units = meta_units(sample)

    assert len(units) == 5 * len(sample.items)
    assert Counter(u.criterion for u in units) == {c: len(sample.items) for c in CRITERIA}
    first = units[0]
    assert first.human == sample.items[0].scores[first.criterion]


def test_a_local_folder_is_read_and_labelled_by_its_name(tmp_path: Path) -> None:
    _write(tmp_path / "mine", [_row(), _row(summary_id="s2", scores={"fluency": 5})])

    loaded = load_annotated_set(f"local:{tmp_path / 'mine'}")

    assert loaded.label == "local:mine"
    assert [item.key for item in loaded.items] == ["d1/s1", "d1/s2"]
    assert loaded.items[1].scores == {Criterion.FLUENCY: 5}
    assert len(meta_units(loaded)) == 6  # five for the first item, one for the second


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["{not json"], "line 1: not valid JSON"),
        ([[1, 2]], "line 1: not a JSON object"),
        ([_row(scores={"fluenza": 3})], "Did you mean fluency"),
        ([_row(scores={"fluency": 6})], "outside 1–5"),
        ([_row(scores={"fluency": 3.5})], "whole number"),
        ([_row(scores={"fluency": True})], "whole number"),
        ([_row(scores={})], "at least one criterion"),
        ([_row(summary="  ")], "'summary'"),
        ([{"doc_id": "d1", "document": "x", "summary_id": "s"}], "'summary'"),
        ([_row(), _row()], "d1/s1 appears twice"),
        ([_row(), _row(summary_id="s2", document="Un altro testo.")], "two different texts"),
        ([], "is empty"),
    ],
)
def test_a_malformed_annotated_set_fails_naming_the_problem(
    tmp_path: Path, rows: list[Any], message: str
) -> None:
    _write(tmp_path, rows)

    with pytest.raises(JudgeDataError, match=message):
        load_annotated_set(f"local:{tmp_path}")


def test_problems_on_several_lines_are_all_named(tmp_path: Path) -> None:
    _write(
        tmp_path, [_row(scores={"fluency": 9}), _row(summary_id="s2"), _row(summary_id="s3", scores={"x": 1})]
    )

    with pytest.raises(JudgeDataError) as caught:
        load_annotated_set(f"local:{tmp_path}")
    assert "line 1" in str(caught.value) and "line 3" in str(caught.value)
    assert "line 2" not in str(caught.value)


def test_missing_folders_files_and_unknown_sources_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(JudgeDataError, match="does not exist"):
        load_annotated_set(f"local:{tmp_path / 'nowhere'}")
    with pytest.raises(JudgeDataError, match=r"annotated\.jsonl does not exist"):
        load_annotated_set(f"local:{tmp_path}")
    with pytest.raises(JudgeDataError, match="Valid: sample, local:<dir>, hub:<org>/<name>"):
        load_annotated_set("hub")
    (tmp_path / ANNOTATED_FILE).write_bytes(b"\xff\xfe")
    with pytest.raises(JudgeDataError, match="not UTF-8"):
        load_annotated_set(f"local:{tmp_path}")


def test_a_hub_dataset_is_read_through_the_rows_callable_and_checked_the_same_way() -> None:
    source = annotated_source("hub:org/judged-summaries")
    asked: list[tuple[str, str]] = []

    def rows(repo: str, split: str) -> list[dict[str, Any]]:
        asked.append((repo, split))
        return [_row(), _row(summary_id="s2", scores={"ordering": 0})]

    assert source.kind is DataSourceKind.HUB and source.label == "hub:org/judged-summaries"
    with pytest.raises(JudgeDataError, match="row 2"):
        load_annotated_set(source, hub_rows=rows)
    assert asked == [("org/judged-summaries", "test")]
    with pytest.raises(JudgeDataError, match="needs the worker"):
        load_annotated_set(source)


def test_a_set_has_one_digest_from_hub_or_local_and_any_change_to_a_text_or_score_changes_it(
    tmp_path: Path,
) -> None:
    rows = [_row(), _row(summary_id="s2", summary="Il bilancio è passato.", annotator="a1")]
    local = load_annotated_set(f"local:{_write(tmp_path / 'set', rows).parent}")
    # The hub's rows in another order, their columns in another order, with a column more.
    hub_rows = [{"extra": 1, **dict(reversed(list(r.items())))} for r in reversed(rows)]
    hub = load_annotated_set("hub:org/set", hub_rows=lambda repo, split: hub_rows)

    assert local.sha256 == hub.sha256 and len(local.sha256) == 64
    assert (local.label, hub.label) == ("local:set", "hub:org/set")
    rescored = [
        _row(),
        _row(summary_id="s2", summary="Il bilancio è passato.", annotator="a1", scores={"coherence": 4}),
    ]
    retyped = [_row(), _row(summary_id="s2", summary="Il bilancio è stato approvato.", annotator="a1")]
    for changed in (rescored, retyped):
        other = load_annotated_set("hub:org/set", hub_rows=lambda repo, split, rows=changed: rows)
        assert other.sha256 != local.sha256


def test_a_few_shot_file_fills_the_slot_of_its_criteria_only(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {"criterion": "fluency", "document": "D1", "summary": "S1", "score": 2, "explanation": "Errori."},
            {
                "criterion": "fluency",
                "document": "D2",
                "summary": "S2",
                "score": 5,
                "explanation": "Perfetto.",
            },
            {
                "criterion": "ordering",
                "document": "D3",
                "summary": "S3",
                "score": 1,
                "explanation": "Invertito.",
            },
        ],
        name="shots.jsonl",
    )

    shots = load_few_shot(path)

    assert {c: len(v) for c, v in shots.items()} == {Criterion.FLUENCY: 2, Criterion.ORDERING: 1}
    prompt = render_prompt(Criterion.FLUENCY, "D", "S", shots[Criterion.FLUENCY])
    assert prompt.index("Errori.") < prompt.index("Perfetto.") < prompt.index("Ora valuta:")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"criterion": "fluidity", "document": "D", "summary": "S", "score": 2, "explanation": "x"},
            "fluency",
        ),
        (
            {"criterion": "fluency", "document": "D", "summary": "S", "score": 0, "explanation": "x"},
            "outside",
        ),
        (
            {"criterion": "fluency", "document": "D", "summary": "S", "score": 2, "explanation": ""},
            "explanation",
        ),
        ({"criterion": "fluency", "document": "D", "summary": "S", "score": 2}, "explanation"),
    ],
)
def test_a_malformed_few_shot_file_fails_naming_the_line(
    tmp_path: Path, row: dict[str, Any], message: str
) -> None:
    path = _write(tmp_path, [row], name="shots.jsonl")

    with pytest.raises(JudgeDataError, match=message) as caught:
        load_few_shot(path)
    assert "shots.jsonl line 1" in str(caught.value)
