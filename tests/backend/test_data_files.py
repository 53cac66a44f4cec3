"""The bundled sample data: valid UTF-8 JSONL, upstream schemas, sound and balanced labels (no lm-eval)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from backend.tracks.evalita.data import SAMPLE_DATA_DIR, load_layout

# Upstream field names and types, per task (paper §3 and the lm-eval 0.4.13 configs).
SCHEMAS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "wic": {
        "id": str,
        "lemma": str,
        "sentence1": str,
        "sentence2": str,
        "start1": int,
        "end1": int,
        "start2": int,
        "end2": int,
        "label": int,
    },
    "te": {"id": str, "entailment": str, "text1": str, "text2": str},
    "sa": {
        "idtwitter": str,
        "subj": str,
        "opos": str,
        "oneg": str,
        "iro": str,
        "lpos": str,
        "lneg": str,
        "top": str,
        "text": str,
    },
    "hs": {"id": str, "full_text": str, "hs": int, "stereotype": int},
    "faq": {"id": str, "question": str, "correct_answer": str, "A": str, "B": str, "C": str, "D": str},
    "at": {"Id": int, "Question": str, "A": str, "B": str, "C": str, "D": str, "E": str, "Correct": str},
    "ls": {"id": str, "context": str, "head": str, "lexelt": str, "lexelt_lemma": str, "answers": list},
    "ner": {"text": str, "entities": list},
    "re": {"text": str, "relations": list},
    "sum": {"source": str, "target": str},
}
# The split the leaderboard's harness tasks evaluate on, per task (NER: per domain).
TEST_SPLITS = {
    "wic": "test",
    "te": "test",
    "sa": "test",
    "hs": "test_all",
    "faq": "test_1",
    "at": "test",
    "ls": "test",
    "ner": "reduced_test",
    "re": "test",
    "sum": "test",
}
LAYOUT = load_layout()
FILES = sorted({(entry.task, rel) for entry in LAYOUT for rel in entry.splits.values()})


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    text = raw.decode("utf-8")  # raises on invalid UTF-8
    assert text.endswith("\n") and "\r" not in text, f"{path}: lines must end with a single \\n"
    rows = [json.loads(line) for line in text.splitlines()]
    assert rows, f"{path} is empty"
    assert all(isinstance(row, dict) for row in rows)
    return rows


def rows_of(task: str, split: str) -> list[dict[str, Any]]:
    """All rows of ``task``'s ``split`` (NER: the three domains together)."""
    rels = sorted(
        {rel for entry in LAYOUT if entry.task == task for s, rel in entry.splits.items() if s == split}
    )
    assert rels, f"no {split} split for {task}"
    return [row for rel in rels for row in read_jsonl(SAMPLE_DATA_DIR / rel)]


def fewshot_rows(task: str) -> list[list[dict[str, Any]]]:
    """The few-shot split(s) of a task, one list per file (NER: trial and dev of each domain)."""
    return [
        read_jsonl(SAMPLE_DATA_DIR / rel)
        for entry in LAYOUT
        if entry.task == task
        for split, rel in entry.splits.items()
        if split != TEST_SPLITS[task]
    ]


@pytest.mark.parametrize(("task", "rel"), FILES, ids=[rel for _, rel in FILES])
def test_file_is_utf8_jsonl_in_the_upstream_schema(task: str, rel: str) -> None:
    schema = SCHEMAS[task]
    for row in read_jsonl(SAMPLE_DATA_DIR / rel):
        assert set(row) == set(schema), f"{rel}: fields {sorted(row)} != {sorted(schema)}"
        for key, kind in schema.items():
            assert isinstance(row[key], kind) and not isinstance(row[key], bool), f"{rel}: {key}={row[key]!r}"
            if isinstance(row[key], str):
                assert row[key].strip() == row[key] and row[key], f"{rel}: {key} blank or padded"


def test_every_layout_file_is_in_sample_data_and_nothing_else() -> None:
    listed = {SAMPLE_DATA_DIR / rel for _, rel in FILES}
    present = set(SAMPLE_DATA_DIR.rglob("*.jsonl"))
    assert listed == present


@pytest.mark.parametrize("task", sorted(TEST_SPLITS))
def test_sizes_fit_cpu_runs_and_five_shot(task: str) -> None:
    assert 20 <= len(rows_of(task, TEST_SPLITS[task])) <= 40
    for rows in fewshot_rows(task):
        assert len(rows) >= 5


def test_ids_are_unique_within_each_file() -> None:
    checked = 0
    for task, rel in FILES:
        key = {"at": "Id", "sa": "idtwitter"}.get(task, "id")
        if key in SCHEMAS[task]:
            ids = [row[key] for row in read_jsonl(SAMPLE_DATA_DIR / rel)]
            assert len(ids) == len(set(ids)), rel
            checked += 1
    assert checked > 0


def test_wic_offsets_mark_the_target_word() -> None:
    rows = rows_of("wic", "test") + rows_of("wic", "dev")
    for row in rows:
        for n in ("1", "2"):
            sentence, start, end = row[f"sentence{n}"], row[f"start{n}"], row[f"end{n}"]
            word = sentence[start:end]
            assert 0 <= start < end <= len(sentence)
            assert re.fullmatch(r"\w+", word), (row["id"], word)
            assert not (start > 0 and sentence[start - 1].isalpha()), row["id"]
            assert not (end < len(sentence) and sentence[end].isalpha()), row["id"]
            assert word.lower()[:2] == row["lemma"][:2], (row["id"], word)


def test_binary_labels_are_valid_and_balanced() -> None:
    for task, key, values in (
        ("wic", "label", (0, 1)),
        ("te", "entailment", ("SI", "NO")),
        ("hs", "hs", (0, 1)),
    ):
        for rows in [rows_of(task, TEST_SPLITS[task]), *fewshot_rows(task)]:
            counts = Counter(row[key] for row in rows)
            assert set(counts) == set(values), (task, counts)
            assert counts[values[0]] == counts[values[1]], (task, counts)


def test_sentiment_covers_the_four_classes_equally() -> None:
    for rows in (rows_of("sa", "test"), rows_of("sa", "train")):
        counts = Counter((row["opos"], row["oneg"]) for row in rows)
        assert set(counts) == {("1", "0"), ("0", "1"), ("0", "0"), ("1", "1")}
        assert len(set(counts.values())) == 1, counts
        for row in rows:
            assert {row[k] for k in ("subj", "iro", "lpos", "lneg", "top")} <= {"0", "1"}


def test_multiple_choice_answers_are_valid_and_spread() -> None:
    for task, key, letters in (("faq", "correct_answer", "ABCD"), ("at", "Correct", "ABCDE")):
        rows = rows_of(task, TEST_SPLITS[task])
        counts = Counter(row[key] for row in rows)
        assert set(counts) == set(letters), (task, counts)
        assert max(counts.values()) - min(counts.values()) <= 1, (task, counts)
        for row in rows + [r for rs in fewshot_rows(task) for r in rs]:
            options = [row[letter] for letter in letters]
            assert len(set(options)) == len(options), f"{task}: repeated option in {row}"


def test_lexical_substitution_marks_the_head_and_weights_substitutes() -> None:
    for row in rows_of("ls", "test") + rows_of("ls", "dev"):
        heads = re.findall(r"<head>(.*?)</head>", row["context"])
        assert heads == [row["head"]], row["id"]
        assert row["lexelt"].split(".") == [row["lexelt_lemma"], row["lexelt"][-1]]
        assert row["lexelt"][-1] in "nvar"
        assert row["answers"], row["id"]
        for answer in row["answers"]:
            assert set(answer) == {"word", "count"}
            assert re.fullmatch(r"[^\W\d_]+", answer["word"]) and answer["count"] >= 1


def test_entities_occur_in_their_sentence_with_a_known_type() -> None:
    types: Counter[str] = Counter()
    empty = 0
    for _task, rel in (f for f in FILES if f[0] == "ner"):
        rows = read_jsonl(SAMPLE_DATA_DIR / rel)
        assert any(row["entities"] for row in rows), rel  # so the JSON loader infers the list type
        for row in rows:
            empty += not row["entities"]
            for entity in row["entities"]:
                assert set(entity) == {"entity_text", "type"}
                assert entity["entity_text"] in row["text"], (rel, entity)
                types[entity["type"]] += 1
    assert set(types) == {"PER", "LOC", "ORG"}
    assert empty > 0


def test_relations_pair_a_measurement_with_an_exam_of_the_sentence() -> None:
    for rows in (rows_of("re", "test"), rows_of("re", "dev")):
        assert any(row["relations"] for row in rows) and any(not row["relations"] for row in rows)
        for row in rows:
            for pair in row["relations"]:
                assert len(pair) == 2 and all(isinstance(p, str) and p in row["text"] for p in pair), row


def test_summaries_are_short_articles_with_shorter_references() -> None:
    for row in rows_of("sum", "test") + rows_of("sum", "dev"):
        words = len(row["source"].split())
        assert 80 <= words <= 150, words
        assert len(row["target"].split()) < words / 2


def test_the_fields_the_harness_reads_are_part_of_the_schema() -> None:
    for entry in LAYOUT:
        assert set(entry.fields) <= set(SCHEMAS[entry.task]), entry.dataset_path
