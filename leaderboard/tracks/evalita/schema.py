"""The Evalita results file (the public contract, DESIGN.md) and the per-sample detail record.

The file is the shared envelope (:class:`~leaderboard.core.schema.ResultsEnvelope`:
``schema``, ``track``, ``model``, ``run``) with the Evalita body ``tasks`` (:class:`ResultsFile`).  Scores are stored on the 0–1 scale as lm-evaluation-harness
reports them.  MaxP, AvgP and CPS are *not* stored: :mod:`leaderboard.tracks.evalita.metrics` derives
them at read time.  Older schema versions are upgraded in :mod:`leaderboard.core.migrations`,
never here.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from eval_queue.errors import MalformedFileError
from eval_queue.safe_json import DETAILS_LINE_LIMITS, load_object, validate
from eval_queue.vocabulary import Track
from leaderboard.core.schema import ResultsEnvelope


class PromptScore(BaseModel):
    model_config = ConfigDict(extra="allow")

    score: float | None = Field(default=None, description="0–1; None is the paper's N/A")
    stderr: float | None = None
    n: int | None = None
    # NER: F1 per domain (adg, fic, wn) before averaging.
    parts: dict[str, float] | None = None

    @field_validator("score")
    @classmethod
    def _unit_interval(cls, value: float | None) -> float | None:
        if value is not None and not 0.0 <= value <= 1.0:
            raise ValueError(f"score {value} is outside [0, 1] (scores are stored on the 0–1 scale)")
        return value


class TaskResult(BaseModel):
    model_config = ConfigDict(extra="allow")

    metric: str
    prompts: dict[str, PromptScore]


class ResultsFile(ResultsEnvelope):
    """An Evalita results file: the envelope and, per task, the prompt scores."""

    TRACK: ClassVar[Track] = Track.EVALITA

    track: Track = Track.EVALITA
    tasks: dict[str, TaskResult]


class DetailRecord(BaseModel):
    """One line of ``<details_path>/<task>_<prompt>.jsonl``: what the model saw and answered."""

    model_config = ConfigDict(extra="allow")

    doc_id: int
    input: str
    answer: str
    target: str
    score: float | None = None
    # Multiple choice: the options offered and the log-likelihood of each.
    choices: list[str] | None = None
    loglikelihoods: list[float] | None = None


def parse_details(data: bytes, path: str) -> list[DetailRecord]:
    """The records of a details file (JSON lines), each line through the store's safe reader.

    A bad line makes the whole file malformed (``MalformedFileError`` naming the file and
    the line): a half-shown run would mislead more than a missing one.
    """
    records = []
    for number, line in enumerate(data.splitlines(), start=1):
        if line.strip():
            where = f"{path} line {number}"
            try:
                records.append(validate(DetailRecord, load_object(line, where, DETAILS_LINE_LIMITS), where))
            except MalformedFileError as exc:
                raise MalformedFileError(path, f"line {number}: {exc.reason}") from None
    return records


def details_file_name(task_id: str, prompt_id: str) -> str:
    return f"{task_id}_{prompt_id}.jsonl"
