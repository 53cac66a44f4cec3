"""Issue 29: a long-context run records which data it read (a revision), hub data is counted
against the INDAQA2 paper's Table 2 and §3.7, and only a run on the paper's data — the same
revision — is comparable (and ranked) with another.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.tracks.long_context.data import (
    Book,
    Question,
    count_mismatches,
    prepare_long_context,
    read_books_and_revision,
)
from leaderboard.core.datasource import DataSource, DataSourceKind
from leaderboard.tracks.long_context.app.tables import TABLE5_COLUMN_NAMES, table5
from leaderboard.tracks.long_context.definition import PAPER_BOOKS, PAPER_QUESTIONS, QuestionSet, Split
from leaderboard.tracks.long_context.schema import LongContextResults
from tests.long_context.books import tiny_library
from tests.long_context.test_schema_tables import PAPER_10K, _document


def _books_with_the_papers_counts() -> list[Book]:
    """Books whose questions per set and books per split are the paper's (texts left out)."""
    question = Question("q", "Chi?", ("Lui",), None, None)

    def spread(total: int, n_books: int) -> list[int]:
        return [total // n_books + (i < total % n_books) for i in range(n_books)]

    books = [
        Book(f"s{i}", "testo", {QuestionSet.SUMMARY: (question,) * n})
        for i, n in enumerate(spread(PAPER_QUESTIONS[QuestionSet.SUMMARY], PAPER_BOOKS[Split.SUMMARY_LEVEL]))
    ]
    passage = PAPER_BOOKS[Split.PASSAGE_LEVEL]
    per_set = {
        s: spread(PAPER_QUESTIONS[s], passage)
        for s in (QuestionSet.LOCAL, QuestionSet.LOCAL_ALT, QuestionSet.ENTITY)
    }
    books += [
        Book(f"p{i}", "testo", {s: (question,) * counts[i] for s, counts in per_set.items()})
        for i in range(passage)
    ]
    return books


def test_the_papers_counts_pass_and_one_question_less_is_named() -> None:
    books = _books_with_the_papers_counts()
    assert count_mismatches(books) == ()

    fewer = [
        *books[:-1],
        Book(
            "p-last",
            "testo",
            {k: v[:-1] if k == QuestionSet.ENTITY else v for k, v in books[-1].questions.items()},
        ),
    ]
    assert count_mismatches(fewer) == ("Entity questions: 1,372, the paper's Table 2 has 1,373",)


def test_hub_data_of_another_size_is_named_at_load_and_its_revision_recorded(tmp_path: Path) -> None:
    lib = tiny_library(tmp_path / "lib")  # laid out as a hub dataset: datasets reads the folder
    source = DataSource(DataSourceKind.HUB, repo=str(lib))

    books, revision = read_books_and_revision(source)

    assert len(books) == 3 and len(revision.sha256) == 64
    assert revision.mismatches is not None
    assert "Summary questions: 4, the paper's Table 2 has 13,661" in revision.mismatches
    assert "passage_level books: 1, the paper (§3.7) has 99" in revision.mismatches


def test_a_local_folders_revision_is_the_digest_of_its_files(tmp_path: Path) -> None:
    lib = tiny_library(tmp_path / "lib")
    first = prepare_long_context(f"local:{lib}", tmp_path / "work", None).revision
    again = prepare_long_context(f"local:{lib}", tmp_path / "work", None).revision
    path = next(lib.glob("*.jsonl"))
    path.write_text(path.read_text(encoding="utf-8").replace("Bologna", "Padova"), encoding="utf-8")
    edited = prepare_long_context(f"local:{lib}", tmp_path / "work", None).revision

    assert first is not None and again is not None and edited is not None
    assert first.sha256 == again.sha256 != edited.sha256
    assert first.mismatches is None  # local data makes no claim to be the paper's


def _run(model: str, **run: object) -> LongContextResults:
    document = _document(model, PAPER_10K[model])
    document["run"].update(run)
    return LongContextResults.from_json(json.dumps(document).encode(), f"{model}.json")


@pytest.mark.parametrize(
    ("run", "problem"),
    [
        ({"data_mismatches": ["Entity questions: 1,372, the paper's Table 2 has 1,373"]}, "Entity questions"),
        ({"data_sha256": None}, "dataset revision not recorded"),
        ({"data_mismatches": None}, "not checked against the paper's counts"),
    ],
)
def test_a_hub_run_on_other_data_or_an_unknown_revision_is_not_comparable(run: dict, problem: str) -> None:
    results = _run("ANITA-8B", **run)

    assert not results.comparable
    assert any(problem in p for p in results.run.data_problems)
    assert _run("ANITA-8B").comparable  # the same run on the paper's data


def test_runs_on_two_revisions_are_never_ranked_together() -> None:
    everyone = table5([_run(name) for name in PAPER_10K])
    # The run with the most best scores of the paper's 10K rows, moved to another Hub version.
    leader = everyone.frame.loc[everyone.best.sum(axis=1).idxmax(), "model"].removeprefix("org/")
    here = [_run(name) for name in PAPER_10K if name != leader]
    elsewhere = table5([_run(leader, data_sha256="e" * 64), *here])

    moved = elsewhere.frame["model"] == f"org/{leader}"
    # On the same revision it takes some columns' best from the others …
    assert (
        not everyone.best.loc[everyone.frame["model"] != f"org/{leader}"]
        .reset_index(drop=True)
        .equals(table5(here).best)
    )
    # … on another it is ranked alone: each of its scores is its group's best, and the others
    # are marked as if it were absent.
    scores = elsewhere.frame.loc[moved, list(TABLE5_COLUMN_NAMES)].astype(float)
    assert (elsewhere.best.loc[moved] == scores.notna()).all().all()
    assert elsewhere.best.loc[~moved].reset_index(drop=True).equals(table5(here).best)
