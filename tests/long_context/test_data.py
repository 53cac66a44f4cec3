"""Preparing INDAQA2 data for the harness: §3.5 books → checked questions, book files, task YAMLs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from backend.tracks.long_context.data import (
    HARNESS_DIR,
    prepare_long_context,
    read_books,
    read_hub_books,
    read_local_books,
)
from leaderboard.core.datasource import DataSource, DataSourceError
from leaderboard.tracks.long_context.definition import ContextSetting, QuestionSet
from tests.long_context.books import passage_book, qa, summary_book, tiny_library, write_books

REPO_ROOT = Path(__file__).resolve().parents[2]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_local_books_become_one_questions_file_and_yaml_per_task(tmp_path):
    lib = tiny_library(tmp_path / "lib")
    data = prepare_long_context(f"local:{lib}", tmp_path / "work", (ContextSetting.K10, ContextSetting.FULL))
    assert data.label == "local:lib"
    assert len(data.tasks) == 12 and {t.setting for t in data.tasks} == {
        ContextSetting.K10,
        ContextSetting.FULL,
    }
    summary = _rows(data.data_files["indaqa2_summary_oe_10k"])
    assert [r["question_id"] for r in summary] == [
        "lungo.summary.0",
        "lungo.summary.1",
        "breve.summary.0",
        "breve.summary.1",
    ]
    assert {r["max_words"] for r in summary} == {10_000}
    assert {r["max_words"] for r in _rows(data.data_files["indaqa2_summary_oe_full"])} == {None}
    mc = _rows(data.data_files["indaqa2_local_mc_10k"])
    assert [(r["label"], len(r["choices"])) for r in mc] == [("C", 4), ("A", 4)]
    assert Path(mc[0]["book_file"]).read_text(encoding="utf-8").startswith("Giacometta abitava")
    config = yaml.safe_load((data.include_path / "indaqa2_local_mc_10k.yaml").read_text())
    assert config["include"] == str(HARNESS_DIR / "indaqa2_local_mc.yaml")
    assert config["task"] == "indaqa2_local_mc_10k"
    assert config["dataset_kwargs"] == {"data_files": {"test": str(data.data_files["indaqa2_local_mc_10k"])}}
    assert data.book_words == {"lungo": 60, "breve": 20, "passi": 60}


def test_items_are_routed_by_kind_whatever_file_they_are_in(tmp_path):
    write_books(tmp_path / "lib", [summary_book("a", 30)], name="passage_level.jsonl")
    (tmp_path / "lib" / "more.json").write_text(json.dumps([passage_book("b", 30)]), encoding="utf-8")
    books = {b.book_id: b for b in read_local_books(tmp_path / "lib")}
    assert set(books["a"].questions) == {QuestionSet.SUMMARY}
    assert set(books["b"].questions) == {QuestionSet.LOCAL, QuestionSet.LOCAL_ALT, QuestionSet.ENTITY}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda b: b["qas"][0].update(kind="riassunto"), "unknown kind 'riassunto'"),
        (lambda b: b["qas"][0].update(answers=["", "  "]), "no usable reference answer"),
        (lambda b: b["qas"][0].update(answers=["La"]), "no usable reference answer"),
        (lambda b: b["qas"][0].update(question=""), "no question text"),
        (lambda b: b["qas"][0].update(choices=["A. x", "B. y"]), "needs 4 choices"),
        (lambda b: b["qas"][0]["target"].update(label="E"), "needs 4 choices and a target.label"),
        (lambda b: b.pop("text"), "no text"),
    ],
)
def test_a_bad_item_is_named_and_nothing_is_written(tmp_path, change, message):
    book = passage_book("passi", 30)
    change(book)
    lib = write_books(tmp_path / "lib", [summary_book("ok", 30), book])
    with pytest.raises(DataSourceError, match=message) as err:
        prepare_long_context(f"local:{lib}", tmp_path / "work")
    assert "passi" in str(err.value)
    assert not (tmp_path / "work").exists()


def test_a_local_item_without_choices_is_asked_open_ended_only(tmp_path):
    book = passage_book("passi", 30)
    book["qas"].append(qa("local_question", "passi.set-a.9", "Chi arriva?", ["Il marchese"]))
    lib = write_books(tmp_path / "lib", [summary_book("s", 30), book])
    data = prepare_long_context(f"local:{lib}", tmp_path / "work", (ContextSetting.K10,))
    assert len(_rows(data.data_files["indaqa2_local_oe_10k"])) == 3
    assert len(_rows(data.data_files["indaqa2_local_mc_10k"])) == 2


def test_a_question_set_missing_from_the_data_is_an_error(tmp_path):
    lib = write_books(tmp_path / "lib", [summary_book("s", 30)])
    with pytest.raises(DataSourceError, match="no question for task indaqa2_local_oe_10k"):
        prepare_long_context(f"local:{lib}", tmp_path / "work")


def test_duplicate_book_ids_and_invalid_json_are_reported(tmp_path):
    lib = write_books(tmp_path / "lib", [summary_book("x", 10), summary_book("x", 10)])
    with pytest.raises(DataSourceError, match="given more than once: x"):
        read_books(DataSource.parse(f"local:{lib}"))
    (lib / "books.jsonl").write_text('{"id": "x",\n', encoding="utf-8")
    with pytest.raises(DataSourceError, match="invalid JSON"):
        read_local_books(lib)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataSourceError, match=r"no \.jsonl or \.json files"):
        read_local_books(empty)


def test_books_loaded_through_datasets_parse_like_local_files(tmp_path):
    # The hub path: rows come back from Arrow (nulls, empty lists, nested structs).
    lib = tiny_library(tmp_path / "lib")
    through_datasets = read_hub_books(str(lib), None, cache_dir=tmp_path / "cache")
    assert through_datasets == read_local_books(lib)


@pytest.mark.slow
def test_hub_source_offline_without_cache_says_what_is_missing(tmp_path):
    # A fresh process: the datasets library reads HF_DATASETS_CACHE when it is imported.
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env |= {
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_CACHE": str(tmp_path / "datasets"),
        "PYTHONPATH": str(REPO_ROOT),
    }
    code = (
        "from pathlib import Path\n"
        "from leaderboard.core.datasource import DataSourceError\n"
        "from backend.tracks.long_context.data import prepare_long_context\n"
        "try:\n"
        f"    prepare_long_context('hub', Path({str(tmp_path / 'work')!r}))\n"
        "except DataSourceError as exc:\n"
        "    print('ERROR', exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert "ERROR dataset sapienzanlp/INDAQA_CALAMITA could not be loaded" in done.stdout, done.stderr[-2000:]
    assert "python -m backend prefetch" in done.stdout
