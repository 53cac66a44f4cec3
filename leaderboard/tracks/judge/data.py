"""The judge track's input files: the annotated set and the few-shot file.  Formats, checks, loading.

Annotated set (JSONL, UTF-8, one object per (document, summary))::

    {"doc_id": "d1", "document": "Testo dell'articolo…", "summary_id": "d1-s2",
     "summary": "Riassunto…", "scores": {"coherence": 4, "consistency": 2, "fluency": 5,
     "relevance": 3, "ordering": 4}, "annotator": "a1"}

* ``doc_id`` and ``summary_id`` are strings (numbers are accepted and read as strings);
  the pair is unique in the file; a document's text is the same on every line naming it.
* ``scores``: a whole number 1–5 for each criterion annotated (a subset of the five is
  allowed; an unknown criterion is an error that suggests the closest name).
* ``annotator`` is optional; other keys are allowed and ignored.

Few-shot file (JSONL, optional, user-provided: e.g. the paper's own examples, which the
project may not redistribute)::

    {"criterion": "fluency", "document": "…", "summary": "…", "score": 2, "explanation": "…"}

Examples are shown in file order in the prompt of their criterion; a criterion without
examples stays zero-shot under the ``project`` protocol.  The ``paper`` protocol fills
Appendix A's few-shot slot of every criterion from this file — the worker's
``--judge-examples``, a copy of the paper's own examples that a maintainer holds — and
refuses a file without examples for a criterion it judges (:func:`check_examples_cover`).

An annotated set is identified by its label and by :func:`annotated_digest`, the SHA-256 of
its items as read (canonical JSON lines, sorted by item): the same set read from ``hub:`` or
from ``local:``, with its columns or lines in another order, has the same digest, and any
change to a text or a score changes it.

Sources: ``sample`` (bundled, :data:`SAMPLE_DIR`), ``local:<dir>`` (``<dir>/annotated.jsonl``)
or ``hub:<org>/<name>`` (a Hugging Face dataset with the same columns, split ``test``; read
by the worker through the datasets cache, so this module takes the rows from a callable
and never imports ``datasets``).  Every problem raises :class:`JudgeDataError` naming the
file and line; nothing is loaded half-way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from leaderboard.core.datasource import DataSource, DataSourceError, DataSourceKind
from leaderboard.tracks.judge.definition import (
    SCORE_MAX,
    SCORE_MIN,
    Criterion,
    UnknownCriterionError,
    parse_criterion,
)
from leaderboard.tracks.judge.prompts import FewShotExample
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.schema import PaperDataPins

SAMPLE_DIR = Path(__file__).resolve().parent / "sample_data"
#: The annotated set inside a data folder (``sample`` or ``local:<dir>``).
ANNOTATED_FILE = "annotated.jsonl"
#: The split a hub dataset is read from.
HUB_SPLIT = "test"
_MAX_PROBLEMS = 5
_Row = TypeVar("_Row", bound=BaseModel)


class JudgeDataError(DataSourceError):
    """An annotated set or few-shot file is missing, unreadable or malformed (the message says where)."""


def _score(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
        raise ValueError(f"a score must be a whole number from {SCORE_MIN} to {SCORE_MAX}, not {value!r}")
    if not SCORE_MIN <= int(value) <= SCORE_MAX:
        raise ValueError(f"score {value!r} is outside {SCORE_MIN}–{SCORE_MAX}")
    return int(value)


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string")
    return value


class AnnotatedItem(BaseModel):
    """One (document, summary) of the annotated set with its human scores."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    doc_id: str
    document: str
    summary_id: str
    summary: str
    scores: Mapping[Criterion, int]
    annotator: str | None = None

    @field_validator("doc_id", "summary_id", mode="before")
    @classmethod
    def _identifier(cls, value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return _text(value, "an id")

    @field_validator("document", "summary", mode="before")
    @classmethod
    def _non_empty(cls, value: Any) -> str:
        return _text(value, "the text")

    @field_validator("scores", mode="before")
    @classmethod
    def _scores(cls, value: Any) -> Mapping[Criterion, int]:
        if not isinstance(value, Mapping) or not value:
            raise ValueError("scores must be an object {criterion: 1–5} with at least one criterion")
        parsed = {parse_criterion(str(name)): _score(score) for name, score in value.items()}
        return MappingProxyType({c: parsed[c] for c in CRITERIA if c in parsed})

    @property
    def key(self) -> str:
        """The item's id in results and details: ``<doc_id>/<summary_id>``."""
        return f"{self.doc_id}/{self.summary_id}"


class _FewShotRow(BaseModel):
    model_config = ConfigDict(extra="ignore")

    criterion: Criterion
    document: str
    summary: str
    score: int
    explanation: str

    @field_validator("criterion", mode="before")
    @classmethod
    def _criterion(cls, value: Any) -> Criterion:
        return parse_criterion(str(value))

    @field_validator("document", "summary", "explanation", mode="before")
    @classmethod
    def _non_empty(cls, value: Any) -> str:
        return _text(value, "the text")

    @field_validator("score", mode="before")
    @classmethod
    def _score(cls, value: Any) -> int:
        return _score(value)


def _problem(where: str, exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "line"
        message = str(first.get("ctx", {}).get("error") or first["msg"])
        return f"{where}: field {field!r}: {message}"
    return f"{where}: {exc}"


def _rows(lines: Iterable[str], source: str) -> Iterable[tuple[str, Any]]:
    """``(where, decoded object)`` per non-blank line; a line that is not JSON raises at once."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as exc:
            raise JudgeDataError(f"{where}: not valid JSON ({exc.msg})") from None


def _validated(rows: Iterable[tuple[str, Any]], model: type[_Row], what: str, source: str) -> list[_Row]:
    parsed: list[_Row] = []
    problems: list[str] = []
    for where, row in rows:
        try:
            if not isinstance(row, Mapping):
                raise ValueError("not a JSON object")
            parsed.append(model.model_validate(row))
        except (ValidationError, ValueError, UnknownCriterionError) as exc:
            problems.append(_problem(where, exc))
    if problems:
        more = f" (and {len(problems) - _MAX_PROBLEMS} more)" if len(problems) > _MAX_PROBLEMS else ""
        raise JudgeDataError(f"{what} {source} is malformed: " + "; ".join(problems[:_MAX_PROBLEMS]) + more)
    if not parsed:
        raise JudgeDataError(f"{what} {source} is empty")
    return parsed


def validate_annotated(rows: Iterable[tuple[str, Any]], source: str) -> tuple[AnnotatedItem, ...]:
    """``(where, row)`` pairs → items; duplicates and a document whose text differs are errors."""
    items = _validated(rows, AnnotatedItem, "annotated set", source)
    seen: set[str] = set()
    documents: dict[str, str] = {}
    for item in items:
        if item.key in seen:
            raise JudgeDataError(f"annotated set {source}: item {item.key} appears twice")
        seen.add(item.key)
        if documents.setdefault(item.doc_id, item.document) != item.document:
            raise JudgeDataError(f"annotated set {source}: document {item.doc_id} has two different texts")
    return tuple(items)


def parse_annotated(text: str, source: str) -> tuple[AnnotatedItem, ...]:
    """The annotated set from the text of a JSONL file (``source`` names it in errors)."""
    return validate_annotated(_rows(text.splitlines(), source), source)


def annotated_digest(items: Iterable[AnnotatedItem]) -> str:
    """SHA-256 of the items as read: one canonical JSON line per item, sorted by item key."""
    lines = sorted(
        json.dumps(
            {
                "doc_id": item.doc_id,
                "document": item.document,
                "summary_id": item.summary_id,
                "summary": item.summary,
                "scores": {c.value: score for c, score in item.scores.items()},
                "annotator": item.annotator,
            },
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
        )
        for item in items
    )
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class AnnotatedSet:
    """The items of one annotated set and the label of where they came from."""

    label: str
    items: tuple[AnnotatedItem, ...]

    @property
    def sha256(self) -> str:
        """:func:`annotated_digest` of the items: what identifies the set whatever its source."""
        return annotated_digest(self.items)

    @property
    def criteria(self) -> tuple[Criterion, ...]:
        """The criteria that at least one item has a human score for, in rubric order."""
        return tuple(c for c in CRITERIA if any(c in item.scores for item in self.items))


#: Rows of a hub dataset: ``(repo, split) -> rows``; the worker supplies it (datasets cache).
HubRows = Callable[[str, str], Iterable[Mapping[str, Any]]]


def _read_bytes(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise JudgeDataError(f"{what} {path} does not exist") from None
    except OSError as err:
        raise JudgeDataError(f"{what} {path} cannot be read: {err.strerror or err}") from None


def _decoded(data: bytes, path: Path, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise JudgeDataError(f"{what} {path}: not UTF-8 ({err.reason} at byte {err.start})") from None


def _read_text(path: Path, what: str) -> str:
    return _decoded(_read_bytes(path, what), path, what)


def annotated_source(spec: str | DataSource) -> DataSource:
    """An annotated set's source: ``sample``, ``local:<dir>`` or ``hub:<org>/<name>`` (a plain ``hub``
    names no set: the paper's annotations may not be redistributed)."""
    try:
        src = spec if isinstance(spec, DataSource) else DataSource.parse(spec)
    except DataSourceError as exc:
        raise JudgeDataError(str(exc).replace("data source", "annotated-set source")) from None
    if src.kind is DataSourceKind.HUB and src.repo is None:
        raise JudgeDataError(
            "a plain 'hub' names no annotated set. Valid: sample, local:<dir>, hub:<org>/<name>."
        )
    return src


def load_annotated_set(source: str | DataSource, *, hub_rows: HubRows | None = None) -> AnnotatedSet:
    """Load and check the annotated set from ``sample``, ``local:<dir>`` or ``hub:<org>/<name>``."""
    src = annotated_source(source)
    if src.kind is DataSourceKind.HUB:
        assert src.repo is not None
        if hub_rows is None:
            raise JudgeDataError(f"reading the hub dataset {src.repo} needs the worker's datasets cache")
        name = f"{src.repo} (split {HUB_SPLIT})"
        rows = (
            (f"{name} row {i}", dict(row)) for i, row in enumerate(hub_rows(src.repo, HUB_SPLIT), start=1)
        )
        return AnnotatedSet(label=src.label, items=validate_annotated(rows, name))
    folder = src.folder(SAMPLE_DIR)
    assert folder is not None
    path = folder / ANNOTATED_FILE
    return AnnotatedSet(label=src.label, items=parse_annotated(_read_text(path, "annotated set"), str(path)))


#: Few-shot examples per criterion, in file order (criteria without examples are absent).
FewShotSet = Mapping[Criterion, tuple[FewShotExample, ...]]


def parse_few_shot(text: str, source: str) -> FewShotSet:
    """The few-shot examples from the text of a JSONL file (``source`` names it in errors)."""
    rows = _validated(_rows(text.splitlines(), source), _FewShotRow, "few-shot file", source)
    examples = [FewShotExample(r.criterion, r.document, r.summary, r.score, r.explanation) for r in rows]
    return MappingProxyType(
        {
            c: tuple(e for e in examples if e.criterion is c)
            for c in CRITERIA
            if any(e.criterion is c for e in examples)
        }
    )


def read_few_shot(path: Path | str) -> tuple[FewShotSet, bytes]:
    """A few-shot (examples) file read once: its checked examples and the bytes read (a run
    records their digest).  The one reader of the file (see the module docstring for its format)."""
    data = _read_bytes(Path(path), "few-shot file")
    return parse_few_shot(_decoded(data, Path(path), "few-shot file"), str(path)), data


def load_few_shot(path: Path | str) -> FewShotSet:
    """Load and check a few-shot file (see the module docstring for its format)."""
    return read_few_shot(path)[0]


def check_examples_cover(examples: FewShotSet, criteria: Sequence[Criterion], source: str) -> None:
    """The ``paper`` protocol fills every judged criterion's few-shot slot: a gap is a :class:`JudgeDataError`."""
    missing = [c.value for c in criteria if not examples.get(c)]
    if missing:
        raise JudgeDataError(
            f"the examples file {source} has no examples for {', '.join(missing)}: the paper protocol "
            "fills the few-shot slot of every criterion (one JSONL line per example, with its criterion)"
        )


def load_examples(path: Path | str, criteria: Sequence[Criterion] = CRITERIA) -> FewShotSet:
    """The ``paper`` protocol's examples file: a few-shot file with examples for every criterion."""
    examples = load_few_shot(path)
    check_examples_cover(examples, criteria, str(path))
    return examples


def examples_option(text: str) -> str:
    """``--judge-examples FILE`` as the worker starts: the file must be readable and cover all five
    criteria (a :class:`JudgeDataError` names the problem: the worker refuses to start, exit 2).
    The run reads it again, and records the digest of what it read."""
    path = Path(text).expanduser().resolve()
    load_examples(path)
    return str(path)


def load_paper_pins(path: Path | str) -> PaperDataPins:
    """A maintainer's pins file: the SHA-256 digests of the paper's examples file and annotated set.

    JSON, ``{"examples_sha256": "<64 hex>", "annotated_sha256": "<64 hex>"}`` — the digests a
    judge run records (``few_shot.sha256``: the examples file's bytes; ``annotated.sha256``: the
    set's items, :func:`annotated_digest`), computed once on the maintainer's copies of the
    paper's data.  Only runs on exactly those bytes are comparable with Table 1.
    """
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise JudgeDataError(f"paper pins file {path} cannot be read: {err.strerror or err}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise JudgeDataError(f"paper pins file {path} is not JSON: {err}") from None
    try:
        return PaperDataPins.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}" for e in err.errors())
        raise JudgeDataError(
            f'paper pins file {path}: {problems} (expected {{"examples_sha256": "<64 lower-case hex>", '
            '"annotated_sha256": "<64 lower-case hex>"}})'
        ) from None


def paper_pins_option(text: str) -> PaperDataPins:
    """``--judge-paper-pins FILE`` as the worker starts: read and checked once (a bad file stops it)."""
    return load_paper_pins(Path(text).expanduser())


def paper_pins_of(examples: Path | str, annotated: str | DataSource) -> PaperDataPins:
    """The pins of a maintainer's copies: the digests a run on them records (``local:``/``sample``).

    ``examples``: the examples file (its bytes' SHA-256, as :class:`FewShotInfo`); ``annotated``:
    the set (its items' digest, :func:`annotated_digest`).  A ``hub:`` set is read by the worker
    only: pin it from a ``local:`` copy, or from the ``annotated.sha256`` a hub run recorded.
    """
    _, data = read_few_shot(examples)
    return PaperDataPins(
        examples_sha256=hashlib.sha256(data).hexdigest(),
        annotated_sha256=load_annotated_set(annotated).sha256,
    )
