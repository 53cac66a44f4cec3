"""INDAQA2 data for the harness: books and questions in §3.5's schema → a run's work folder.

Sources (the worker's ``--data``, :class:`leaderboard.core.datasource.DataSource`):

* ``sample`` — the bundled books in ``leaderboard/tracks/long_context/sample_data``;
* ``local:<dir>`` — every ``*.jsonl`` (one book a line) and ``*.json`` (a book or a list of
  books) under ``<dir>``;
* ``hub`` — ``sapienzanlp/INDAQA_CALAMITA`` through ``datasets.load_dataset`` (every split);
  offline (``HF_DATASETS_OFFLINE=1``) it reads the pre-filled datasets cache that
  ``python -m backend prefetch`` fills, and says so when the dataset is not there.

A book (paper §3.5) is ``{"id", "text", "qas": [...], "metadata": {...}}``; each QA item has
``question_id``, ``question``, ``answers``, ``choices``, ``target.label``, ``kind`` (which
routes it to its question set, whatever file or split it came from).

:func:`prepare_long_context` checks everything first (a problem raises
:class:`DataSourceError` naming the book and question, before any model loads), then writes::

    <workdir>/long_context/books/<n>.txt                     the book's text, once
    <workdir>/long_context/questions/<task>.jsonl            one row per question of a task
    <workdir>/long_context/tasks/<task>.yaml                 includes harness/<base>.yaml

and returns a :class:`LongContextData` whose ``include_path`` goes to ``run_harness``.

Every source is identified by a revision (:class:`DataRevision`), recorded per run: two runs on
different data are never ranked together.  ``local:``/``sample``: the SHA-256 of the folder's
book files (their paths and bytes); ``hub``: the SHA-256 of every split's rows as loaded, with
the Hub commit when the datasets cache names it.  ``hub`` data is also counted against the
paper's Table 2 (questions per set) and §3.7 (books per split): a mismatch is named in the run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from leaderboard.core.datasource import DataSource, DataSourceError, DataSourceKind
from leaderboard.tracks.long_context.definition import (
    CHOICE_LETTERS,
    CONTEXT_SETTING_SPECS,
    HUB_DATASET,
    HUB_DATASET_CONFIG,
    QUESTION_SET_SPECS,
    SET_BY_ITEM_KIND,
    AnswerKind,
    ContextHarnessTask,
    ContextSetting,
    QuestionSet,
    Split,
    harness_tasks,
    paper_count_mismatches,
    word_count,
)
from leaderboard.tracks.long_context.metrics import normalize_tokens

log = logging.getLogger(__name__)

TRACK_DIR = Path(__file__).resolve().parents[3] / "leaderboard" / "tracks" / "long_context"
HARNESS_DIR = TRACK_DIR / "harness"
SAMPLE_DIR = TRACK_DIR / "sample_data"
WORK_DIR_NAME = "long_context"


@dataclass(frozen=True)
class Question:
    """One QA item, validated; ``label``/``choices`` only when it can be asked as MC."""

    question_id: str
    question: str
    answers: tuple[str, ...]
    choices: tuple[str, ...] | None
    label: str | None


@dataclass(frozen=True)
class Book:
    book_id: str
    text: str
    questions: Mapping[str, tuple[Question, ...]]  # question set → its items, in file order

    @property
    def words(self) -> int:
        return word_count(self.text)


@dataclass(frozen=True)
class DataRevision:
    """Which data a run read: ``sha256`` (what makes two runs' data the same), the Hub commit when
    known, and for ``hub`` data each count that differs from the paper's (empty: none)."""

    sha256: str
    commit: str | None = None
    #: None: not checked (only ``hub`` data claims to be the paper's).
    mismatches: tuple[str, ...] | None = None


@dataclass(frozen=True)
class LongContextData:
    """A prepared work folder: what the harness reads for one data source and settings."""

    source: DataSource
    include_path: Path
    tasks: tuple[ContextHarnessTask, ...]
    data_files: Mapping[str, Path]  # task name → its questions file
    book_words: Mapping[str, int] = field(default_factory=dict)  # book id → words
    revision: DataRevision | None = None

    @property
    def label(self) -> str:
        return self.source.label

    @property
    def task_names(self) -> list[str]:
        return [t.name for t in self.tasks]


# --------------------------------------------------------------------------- reading


def _problem(where: str, what: str) -> DataSourceError:
    return DataSourceError(f"{where}: {what}")


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def parse_question(raw: Any, where: str) -> tuple[str, Question]:
    """(question set, item) from one §3.5 QA entry; raises naming ``where`` when it is unusable."""
    if not isinstance(raw, dict):
        raise _problem(where, "a QA item is not a JSON object")
    qid = raw.get("question_id")
    where = f"{where}, question {qid!r}"
    kind = raw.get("kind")
    if kind not in SET_BY_ITEM_KIND:
        valid = ", ".join(SET_BY_ITEM_KIND)
        raise _problem(where, f"unknown kind {kind!r} (valid: {valid})")
    question_set = SET_BY_ITEM_KIND[kind]
    question = raw.get("question")
    if not isinstance(question, str) or not question.strip():
        raise _problem(where, "no question text")
    answers = _strings(raw.get("answers"))
    if not answers or not any(normalize_tokens(a) for a in answers):
        raise _problem(where, "no usable reference answer (answers must hold 1–5 non-empty strings)")
    choices, label = None, None
    if AnswerKind.MULTIPLE_CHOICE in QUESTION_SET_SPECS[question_set].kinds:
        given = _strings(raw.get("choices")) or ()
        target = raw.get("target") if isinstance(raw.get("target"), dict) else {}
        gold = target.get("label")
        if given or gold is not None:  # an item of a Local set without choices is OE-only
            if len(given) != len(CHOICE_LETTERS) or gold not in CHOICE_LETTERS:
                raise _problem(where, f"MC item needs 4 choices and a target.label in {CHOICE_LETTERS}")
            choices, label = given, gold
    return question_set, Question(str(qid), question, answers, choices, label)


def parse_book(raw: Any, where: str) -> Book:
    if not isinstance(raw, dict):
        raise _problem(where, "a book is not a JSON object")
    book_id = raw.get("id")
    where = f"{where}, book {book_id!r}"
    if not isinstance(book_id, str) or not book_id:
        raise _problem(where, "no id")
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise _problem(where, "no text")
    qas = raw.get("qas")
    if not isinstance(qas, list):
        raise _problem(where, "qas is not a list")
    grouped: dict[str, list[Question]] = {}
    for item in qas:
        question_set, question = parse_question(item, where)
        grouped.setdefault(question_set, []).append(question)
    return Book(book_id, text, MappingProxyType({k: tuple(v) for k, v in grouped.items()}))


def _rows_of_file(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise _problem(str(path), f"not UTF-8 ({err.reason} at byte {err.start})") from None
    try:
        if path.suffix == ".jsonl":
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    yield f"{path}:{number}", json.loads(line)
        else:
            loaded = json.loads(text)
            for index, row in enumerate(loaded if isinstance(loaded, list) else [loaded]):
                yield f"{path}[{index}]", row
    except json.JSONDecodeError as err:
        raise _problem(str(path), f"invalid JSON at line {err.lineno} ({err.msg})") from None


def _local_books(root: Path) -> tuple[list[Book], str]:
    files = sorted(p for p in root.rglob("*") if p.suffix in {".jsonl", ".json"} and p.is_file())
    if not files:
        raise DataSourceError(f"{root}: no .jsonl or .json files with INDAQA2 books (paper §3.5 schema)")
    digest = hashlib.sha256()
    for path in files:  # each file's path (relative) and bytes: renaming or editing one changes it
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    books = [parse_book(row, where) for path in files for where, row in _rows_of_file(path)]
    return books, digest.hexdigest()


def read_local_books(root: Path) -> list[Book]:
    """Every book in ``*.jsonl``/``*.json`` files under ``root`` (sorted paths, file order)."""
    return _local_books(root)[0]


# A cache folder of a Hub dataset loaded by ``datasets`` is named after the repo's commit.
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def _hub_books(path: str, config: str | None, cache_dir: Path | None) -> tuple[list[Book], str, str | None]:
    import datasets

    try:
        loaded = datasets.load_dataset(path, config, cache_dir=str(cache_dir) if cache_dir else None)
    except (OSError, ValueError, datasets.exceptions.DatasetNotFoundError) as exc:
        raise DataSourceError(
            f"dataset {path} could not be loaded ({type(exc).__name__}: {str(exc).splitlines()[0]}). "
            "Offline, it must be in the datasets cache (HF_DATASETS_CACHE): run "
            "`python -m backend prefetch` on a machine that reaches the hub, with the same HF_HOME"
        ) from exc
    digest = hashlib.sha256()
    books, commits = [], set()
    for split, rows in sorted(loaded.items()):
        for cached in rows.cache_files:
            commits.update(part for part in Path(cached["filename"]).parts if _COMMIT.match(part))
        for index, row in enumerate(rows):
            digest.update(
                f"{split}\0".encode() + json.dumps(row, sort_keys=True, ensure_ascii=False).encode()
            )
            books.append(parse_book(row, f"{path}[{split}][{index}]"))
    return books, digest.hexdigest(), commits.pop() if len(commits) == 1 else None


def read_hub_books(
    path: str = HUB_DATASET, config: str | None = HUB_DATASET_CONFIG, *, cache_dir: Path | None = None
) -> list[Book]:
    """Every split of the INDAQA2 dataset through ``datasets`` (offline: its cache), parsed like local books.

    ``path`` may also be a local folder laid out as a hub dataset (the bundled sample is).
    """
    return _hub_books(path, config, cache_dir)[0]


def _duplicates_refused(books: list[Book]) -> list[Book]:
    duplicates = [book for book, count in Counter(b.book_id for b in books).items() if count > 1]
    if duplicates:
        raise DataSourceError(f"book id(s) given more than once: {', '.join(sorted(duplicates)[:5])}")
    return books


def count_mismatches(books: Iterable[Book]) -> tuple[str, ...]:
    """The data's questions per set and books per split against the paper's (named when they differ).

    A book counts in a split when it has a question of one of the split's sets.
    """
    questions: Counter[QuestionSet] = Counter()
    per_split: Counter[Split] = Counter()
    for book in books:
        splits = set()
        for question_set, items in book.questions.items():
            questions[QuestionSet(question_set)] += len(items)
            splits.add(QUESTION_SET_SPECS[QuestionSet(question_set)].split)
        per_split.update(splits)
    return paper_count_mismatches(questions, per_split)


def read_books_and_revision(source: DataSource) -> tuple[list[Book], DataRevision]:
    """The books of ``source`` and which data they are (:class:`DataRevision`)."""
    match source.kind:
        case DataSourceKind.HUB:
            books, sha256, commit = _hub_books(source.repo or HUB_DATASET, HUB_DATASET_CONFIG, None)
            _duplicates_refused(books)
            mismatches = count_mismatches(books)
            if mismatches:
                log.warning(
                    "INDAQA2 from %s differs from the paper's counts, so its runs are not comparable: %s",
                    source.label,
                    "; ".join(mismatches),
                )
            return books, DataRevision(sha256, commit, mismatches)
        case DataSourceKind.SAMPLE:
            if not SAMPLE_DIR.is_dir():
                raise DataSourceError(f"the bundled long-context sample is missing ({SAMPLE_DIR})")
            books, sha256 = _local_books(SAMPLE_DIR)
        case DataSourceKind.LOCAL:
            assert source.root is not None
            books, sha256 = _local_books(source.root)
        case _:
            raise AssertionError(f"unhandled data source {source.kind!r}")
    return _duplicates_refused(books), DataRevision(sha256)


def read_books(source: DataSource) -> list[Book]:
    """The books of ``source``, checked (:func:`read_books_and_revision` without the revision)."""
    return read_books_and_revision(source)[0]


# --------------------------------------------------------------------------- writing


def _rows(
    task: ContextHarnessTask, books: Iterable[Book], book_files: Mapping[str, Path]
) -> list[dict[str, Any]]:
    max_words = CONTEXT_SETTING_SPECS[task.setting].max_words
    rows = []
    for book in books:
        for question in book.questions.get(task.question_set, ()):
            if task.kind is AnswerKind.MULTIPLE_CHOICE and question.label is None:
                continue
            rows.append(
                {
                    "question_id": question.question_id,
                    "book_id": book.book_id,
                    "book_file": str(book_files[book.book_id]),
                    "max_words": max_words,
                    "question": question.question,
                    "answers": list(question.answers),
                    "choices": list(question.choices or ()),
                    "label": question.label,
                }
            )
    return rows


def _task_yaml(task: ContextHarnessTask, data_file: Path) -> str:
    doc = {
        "include": str(HARNESS_DIR / f"{task.base}.yaml"),
        "task": task.name,
        "tag": [f"indaqa2_{task.setting.value}"],
        "dataset_kwargs": {"data_files": {"test": str(data_file)}},
    }
    header = f"# Generated by backend.tracks.long_context.data: {task.name}. Do not edit.\n"
    return header + yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


def prepare_long_context(
    source: str | DataSource, workdir: Path, settings: tuple[ContextSetting, ...] | None = None
) -> LongContextData:
    """Read and check ``source``, then write the work folder for ``settings`` (default all).

    A task with no question in the data (e.g. a sample without Entity items) is an error:
    results must have every set of every setting the run names.
    """
    src = source if isinstance(source, DataSource) else DataSource.parse(source)
    books, revision = read_books_and_revision(src)
    tasks = harness_tasks(settings)
    root = Path(workdir).resolve() / WORK_DIR_NAME
    if root.exists():
        shutil.rmtree(root)
    for sub in ("books", "questions", "tasks"):
        (root / sub).mkdir(parents=True)
    book_files = {book.book_id: root / "books" / f"{n:05d}.txt" for n, book in enumerate(books)}
    data_files: dict[str, Path] = {}
    for task in tasks:
        rows = _rows(task, books, book_files)
        if not rows:
            raise DataSourceError(f"data source {src.label}: no question for task {task.name}")
        path = root / "questions" / f"{task.name}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        (root / "tasks" / f"{task.name}.yaml").write_text(_task_yaml(task, path), encoding="utf-8")
        data_files[task.name] = path
    for book in books:
        book_files[book.book_id].write_text(book.text, encoding="utf-8")
    log.info(
        "long-context data %s: %d books (%s words), %d tasks, work folder %s",
        src.label,
        len(books),
        "–".join(f"{n:,}" for n in (min(b.words for b in books), max(b.words for b in books))),
        len(tasks),
        root,
    )
    return LongContextData(
        source=src,
        include_path=root / "tasks",
        tasks=tasks,
        data_files=MappingProxyType(data_files),
        book_words=MappingProxyType({b.book_id: b.words for b in books}),
        revision=revision,
    )
