"""The bundled INDAQA2 sample: the `sapienzanlp/INDAQA_CALAMITA` schema (paper §3.5, Figures 13–16),
its null/empty conventions per split and question set, book lengths, MC items, and answers that really
are in the books, at the word positions the context settings need (standard library; the last test loads
the folder with `datasets`, as the hub dataset is loaded)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "leaderboard" / "tracks" / "long_context" / "sample_data"
SPLITS = ("summary_level", "passage_level")

# Whitespace word counts (the paper's split, §4 footnote 6), pinned so that an edit to a book is deliberate.
BOOK_WORDS = {
    "000_il_faro_di_scoglio_lungo": 2929,
    "00_l_orologio_di_citta_alta": 12682,
    "01_la_maestra_di_san_gerolamo": 2422,
}
LONG_BOOK = "00_l_orologio_di_citta_alta"
# Items per question set and book (`kind` values as in Figures 13–16).
ITEMS = {
    "000_il_faro_di_scoglio_lungo": {"summary_question": 8},
    "00_l_orologio_di_citta_alta": {"local_question": 10, "local_question_alt": 5, "entity_question": 5},
    "01_la_maestra_di_san_gerolamo": {"local_question": 6, "local_question_alt": 3, "entity_question": 3},
}
# The 10K-word setting cuts the long book here; these items are answered only after the cut ...
CUT_WORDS = 10_000
LATE_ITEMS = {f"{LONG_BOOK}.{q}" for q in ("set-a.6", "set-a.7", "set-a.8", "set-a.9", "set-b.3", "set-b.4")}
# ... and these within its first 2,000 words, so every setting can answer them.
EARLY_WORDS = 2_000
EARLY_ITEMS = {f"{LONG_BOOK}.{q}" for q in ("set-a.0", "set-a.1", "set-a.2", "set-a.3", "set-a.4", "set-b.0")}

DOC_FIELDS = {"id": str, "text": str, "qas": list, "metadata": dict}
META_FIELDS: dict[str, type | tuple[type, ...]] = {
    "title": str,
    "author": str,
    "year": int,
    "summary": (str, type(None)),
    "summary_length": (int, type(None)),
    "text_length": int,
    "source_link": (str, type(None)),
    "summary_link": (str, type(None)),
    "qa_paragraphs": list,
}
QA_FIELDS: dict[str, type | tuple[type, ...]] = {
    "question_id": str,
    "question": str,
    "answers": list,
    "choices": list,
    "target": dict,
    "entity": (str, type(None)),
    "model": str,
    "kind": str,
    "source_paragraphs_ids": list,
    "source_questions_ids": list,
}
# kind -> (split, question_id tag, has MC choices)
KINDS = {
    "summary_question": ("summary_level", "summary", False),
    "local_question": ("passage_level", "set-a", True),
    "local_question_alt": ("passage_level", "set-b", True),
    "entity_question": ("passage_level", "set-c", False),
}
LETTERS = "ABCD"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    text = path.read_bytes().decode("utf-8")  # raises on invalid UTF-8
    assert text.endswith("\n") and "\r" not in text, f"{path}: lines must end with a single \\n"
    rows = [json.loads(line) for line in text.splitlines()]
    assert rows and all(isinstance(row, dict) for row in rows), path
    return rows


def normalise(text: str) -> str:
    """Lower case, punctuation (apostrophes included) to spaces, whitespace collapsed; accents kept."""
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def first_word(words: list[str], phrase: str) -> int | None:
    """Index in ``words`` (the book split on whitespace) of the word where ``phrase`` first occurs,
    comparing normalised tokens; None if it never does."""
    tokens: list[str] = []
    owner: list[int] = []
    for i, word in enumerate(words):
        for token in normalise(word).split():
            tokens.append(token)
            owner.append(i)
    target = normalise(phrase).split()
    for j in range(len(tokens) - len(target) + 1):
        if tokens[j : j + len(target)] == target:
            return owner[j]
    return None


@pytest.fixture(scope="module")
def docs() -> dict[str, list[dict[str, Any]]]:
    return {split: read_jsonl(SAMPLE_DIR / f"{split}.jsonl") for split in SPLITS}


def all_docs(docs: dict[str, list[dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    return [(split, doc) for split in SPLITS for doc in docs[split]]


def by_id(docs: dict[str, list[dict[str, Any]]], doc_id: str) -> dict[str, Any]:
    return next(doc for _, doc in all_docs(docs) if doc["id"] == doc_id)


def test_sample_folder_holds_one_jsonl_per_split_and_the_readme() -> None:
    assert sorted(p.name for p in SAMPLE_DIR.iterdir()) == [
        "README.md",
        "passage_level.jsonl",
        "summary_level.jsonl",
    ]


def test_every_document_and_item_has_exactly_the_hub_fields_with_their_types(docs) -> None:
    checked = 0
    for _, doc in all_docs(docs):
        assert set(doc) == set(DOC_FIELDS), doc["id"]
        assert all(isinstance(doc[k], t) for k, t in DOC_FIELDS.items()), doc["id"]
        meta = doc["metadata"]
        assert set(meta) == set(META_FIELDS), doc["id"]
        assert all(isinstance(meta[k], t) for k, t in META_FIELDS.items()), doc["id"]
        assert all(isinstance(p, str) and p for p in meta["qa_paragraphs"])
        for qa in doc["qas"]:
            assert set(qa) == set(QA_FIELDS), qa.get("question_id")
            assert all(isinstance(qa[k], t) for k, t in QA_FIELDS.items()), qa["question_id"]
            assert set(qa["target"]) == {"label", "text"}, qa["question_id"]
            assert qa["question"].strip() and qa["model"].strip()
            assert all(isinstance(i, int) for i in qa["source_paragraphs_ids"] + qa["source_questions_ids"])
            checked += 1
    assert checked == sum(sum(per_kind.values()) for per_kind in ITEMS.values())


def test_ids_are_unique_and_numbered_per_split_and_question_set(docs) -> None:
    for split, doc in all_docs(docs):
        # Summary-level ids have three digits (362 books), passage-level two (99), as on the hub.
        assert re.fullmatch(r"\d{3}_[a-z_]+" if split == "summary_level" else r"\d{2}_[a-z_]+", doc["id"])
        per_tag: Counter[str] = Counter()
        for qa in doc["qas"]:
            tag = KINDS[qa["kind"]][1]
            assert qa["question_id"] == f"{doc['id']}.{tag}.{per_tag[tag]}"
            per_tag[tag] += 1
    ids = [doc["id"] for _, doc in all_docs(docs)]
    assert len(ids) == len(set(ids)) == len(BOOK_WORDS)


def test_each_book_has_its_pinned_whitespace_word_count_and_metadata_lengths(docs) -> None:
    for split, doc in all_docs(docs):
        words = len(doc["text"].split())
        assert words == BOOK_WORDS[doc["id"]] == doc["metadata"]["text_length"], doc["id"]
        summary = doc["metadata"]["summary"]
        if split == "summary_level":
            assert summary and doc["metadata"]["summary_length"] == len(summary.split())
        else:
            assert summary is None and doc["metadata"]["summary_length"] is None
    assert len(by_id(docs, LONG_BOOK)["text"].split()) > 12_000  # so that the 10K setting really truncates


def test_items_per_book_and_question_set(docs) -> None:
    for _, doc in all_docs(docs):
        assert Counter(qa["kind"] for qa in doc["qas"]) == Counter(ITEMS[doc["id"]]), doc["id"]


def test_null_and_empty_fields_follow_the_split_and_question_set(docs) -> None:
    """Figures 13–16: choices only for the two local sets, target label/text only with choices,
    entity and related questions only for entity items, no source passages for summary items."""
    for split, doc in all_docs(docs):
        for qa in doc["qas"]:
            kind_split, _, has_choices = KINDS[qa["kind"]]
            assert split == kind_split, qa["question_id"]
            if has_choices:
                assert qa["target"]["label"] in LETTERS and qa["target"]["text"] == qa["answers"][0]
            else:
                assert qa["choices"] == [] and qa["target"] == {"label": None, "text": None}
            if qa["kind"] == "entity_question":
                assert (
                    qa["entity"] and qa["source_questions_ids"] and 2 <= len(qa["source_paragraphs_ids"]) <= 3
                )
            else:
                assert qa["entity"] is None and qa["source_questions_ids"] == []
            if qa["kind"] == "summary_question":
                assert qa["source_paragraphs_ids"] == []
            else:
                assert qa["source_paragraphs_ids"]
        if split == "summary_level":
            assert doc["metadata"]["qa_paragraphs"] == []


def test_every_item_has_one_to_five_distinct_references_of_the_set_length(docs) -> None:
    """Table 2: entity answers are long (24 ± 8 words), the other sets' short (4–6)."""
    for _, doc in all_docs(docs):
        for qa in doc["qas"]:
            answers = qa["answers"]
            assert 1 <= len(answers) <= 5 and all(isinstance(a, str) and a.strip() for a in answers)
            assert len({normalise(a) for a in answers}) == len(answers), qa["question_id"]
            lengths = [len(a.split()) for a in answers]
            if qa["kind"] == "entity_question":
                assert all(15 <= n <= 35 for n in lengths), (qa["question_id"], lengths)
            else:
                assert all(1 <= n <= 12 for n in lengths), (qa["question_id"], lengths)
    n_paraphrased = sum(len(qa["answers"]) > 1 for _, doc in all_docs(docs) for qa in doc["qas"])
    assert n_paraphrased >= 10


def test_mc_items_have_four_lettered_choices_and_the_first_reference_under_the_correct_letter(docs) -> None:
    labels: Counter[str] = Counter()
    for _, doc in all_docs(docs):
        for qa in doc["qas"]:
            if not KINDS[qa["kind"]][2]:
                continue
            choices = qa["choices"]
            assert len(choices) == 4 and [c[:3] for c in choices] == [f"{x}. " for x in LETTERS]
            options = [c[3:] for c in choices]
            assert len({normalise(o) for o in options}) == 4, qa["question_id"]
            label = qa["target"]["label"]
            labels[label] += 1
            assert options[LETTERS.index(label)] == qa["answers"][0], qa["question_id"]
            # Distractors are wrong: none is, contains or is contained in a reference.
            for letter, option in zip(LETTERS, options, strict=True):
                if letter != label:
                    refs = [normalise(a) for a in qa["answers"]]
                    assert not any(r in normalise(option) or normalise(option) in r for r in refs), option
    assert set(labels) == set(LETTERS) and max(labels.values()) <= 0.4 * sum(labels.values()), labels


def test_source_passages_are_verbatim_chunks_of_the_book_all_used(docs) -> None:
    for _, doc in all_docs(docs):
        paragraphs = doc["metadata"]["qa_paragraphs"]
        assert all(p in doc["text"] for p in paragraphs), doc["id"]
        positions = [doc["text"].index(p) for p in paragraphs]
        assert positions == sorted(positions), f"{doc['id']}: qa_paragraphs out of book order"
        used = {i for qa in doc["qas"] for i in qa["source_paragraphs_ids"]}
        assert used == set(range(len(paragraphs))), doc["id"]


def test_entity_items_name_a_book_entity_and_point_at_that_books_mc_items(docs) -> None:
    for _, doc in all_docs(docs):
        for qa in doc["qas"]:
            if qa["kind"] != "entity_question":
                continue
            assert qa["entity"] == qa["entity"].lower() and qa["entity"] in normalise(doc["text"])
            related = [doc["qas"][i] for i in qa["source_questions_ids"]]
            assert all(KINDS[r["kind"]][2] for r in related), qa["question_id"]


def test_every_local_reference_appears_in_its_source_passage_of_the_book(docs) -> None:
    checked = 0
    for _, doc in all_docs(docs):
        paragraphs = doc["metadata"]["qa_paragraphs"]
        for qa in doc["qas"]:
            if not KINDS[qa["kind"]][2]:
                continue
            passage = normalise(" ".join(paragraphs[i] for i in qa["source_paragraphs_ids"]))
            for answer in qa["answers"]:
                assert normalise(answer) in passage, (qa["question_id"], answer)
                checked += 1
    assert checked > 24  # every one of the 24 MC items, most with a paraphrase too


def test_late_items_are_answered_only_after_word_10000_of_the_long_book(docs) -> None:
    doc = by_id(docs, LONG_BOOK)
    words = doc["text"].split()
    qas = {qa["question_id"]: qa for qa in doc["qas"]}
    assert len(LATE_ITEMS) >= 4 and set(qas) >= LATE_ITEMS
    for qid in sorted(LATE_ITEMS):
        assert KINDS[qas[qid]["kind"]][2], qid
        for answer in qas[qid]["answers"]:
            start = first_word(words, answer)
            assert start is not None and start >= CUT_WORDS, (qid, answer, start)
            assert first_word(words[:CUT_WORDS], answer) is None


def test_early_items_are_answered_within_the_first_2000_words_of_the_long_book(docs) -> None:
    doc = by_id(docs, LONG_BOOK)
    head = doc["text"].split()[:EARLY_WORDS]
    qas = {qa["question_id"]: qa for qa in doc["qas"]}
    assert len(EARLY_ITEMS) >= 4 and set(qas) >= EARLY_ITEMS
    for qid in sorted(EARLY_ITEMS):
        for answer in qas[qid]["answers"]:
            assert first_word(head, answer) is not None, (qid, answer)


def test_accents_are_letters_not_apostrophes(docs) -> None:
    """`perche'` / `e'` for `perché` / `è` would be wrong Italian; `po'` is a real elision."""
    for _, doc in all_docs(docs):
        for text in [doc["text"], doc["metadata"]["summary"] or ""] + [qa["question"] for qa in doc["qas"]]:
            bad = re.findall(r"\b(?!po')\w*[aeiou]'(?=[\s.,;:!?»]|$)", text)
            assert not bad, (doc["id"], bad)


def test_readme_states_each_books_word_count_and_the_probes_word_indices(docs) -> None:
    readme = (SAMPLE_DIR / "README.md").read_text(encoding="utf-8")
    assert "data: sample" in readme and "Apache" in readme
    for doc_id, words in BOOK_WORDS.items():
        assert f"`{doc_id}`" in readme and f"{words:,}" in readme, doc_id
    doc = by_id(docs, LONG_BOOK)
    words = doc["text"].split()
    rows = {line.split("`")[1]: line for line in readme.splitlines() if line.startswith("| `set-")}
    for qa in doc["qas"]:
        if qa["question_id"] in LATE_ITEMS | EARLY_ITEMS:
            start = min(i for a in qa["answers"] if (i := first_word(words, a)) is not None)
            short = qa["question_id"].removeprefix(f"{LONG_BOOK}.")
            assert rows[short].rstrip(" |").endswith(f"| {start:,}"), (short, start)


def test_folder_loads_with_datasets_as_a_hub_repository_with_typed_features(docs, tmp_path: Path) -> None:
    """The README's dataset card makes ``load_dataset(<folder>)`` give both splits with §3.5's types."""
    from datasets import load_dataset

    loaded = load_dataset(str(SAMPLE_DIR), cache_dir=str(tmp_path))
    assert sorted(loaded) == sorted(SPLITS)
    for split in SPLITS:
        assert loaded[split].to_list() == docs[split]
    qa_features = loaded["passage_level"].features["qas"].feature
    assert qa_features["choices"].feature.dtype == "string"
    assert qa_features["source_paragraphs_ids"].feature.dtype == "int64"
