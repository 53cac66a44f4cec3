"""The Evalita results file (the public contract, DESIGN.md) and the per-sample detail record.

The file is the shared envelope (:class:`~leaderboard.core.schema.ResultsEnvelope`:
``schema``, ``track``, ``model``, ``run``) with the Evalita body ``tasks`` (:class:`ResultsFile`).  Scores are stored on the 0–1 scale as lm-evaluation-harness
reports them.  MaxP, AvgP and CPS are *not* stored: :mod:`leaderboard.tracks.evalita.metrics` derives
them at read time.  Older schema versions are upgraded in :mod:`leaderboard.core.migrations`,
never here.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_serializer,
    field_validator,
    model_serializer,
)

from eval_queue.errors import MalformedFileError
from eval_queue.safe_json import DETAILS_LINE_LIMITS, load_object, validate
from leaderboard.core.schema import ResultsEnvelope, RunInfo
from leaderboard.core.summary import UncertaintySummary
from leaderboard.tracks.evalita.definition import TRACK


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


class MetricSetBlock(BaseModel):
    """The prompt scores of one metric set at one version, beside the harness's ``tasks`` **[project]**.

    Written by the worker at publish time and by ``python -m backend rescore`` from the run's
    details (:mod:`leaderboard.tracks.evalita.metric_sets`).  It holds only the tasks the set
    scores differently from lm-eval (each :class:`TaskResult` names its metric); the other
    tasks of the set are the harness's numbers in ``tasks``.  Blocks are only ever added: a
    new version of a set's metrics adds a block and keeps the older ones.
    """

    model_config = ConfigDict(extra="allow")

    name: str
    version: int
    #: Who computed it: ``worker`` (at publish time) or ``rescore`` (later, from the details).
    computed_by: str
    computed_at: str
    tasks: dict[str, TaskResult]
    #: Tasks of the run the set could not score, with the reason (e.g. what the details lack).
    skipped: dict[str, str] = Field(default_factory=dict)
    #: The intervals of this set's scores, in the format of the file's ``uncertainty`` block
    #: (every task's prompts and CPS, the mean CPS and its draws), bootstrapped from the set's
    #: per-item statistics on the run's per-item file's items (absent in older blocks, and for a
    #: run without per-item data: no interval, never another set's).
    uncertainty: UncertaintySummary | None = None

    @model_serializer(mode="wrap")
    def _absent_when_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A block without intervals is written as before they existed (no "uncertainty": null).
        data: dict[str, Any] = handler(self)
        if data.get("uncertainty") is None:
            data.pop("uncertainty", None)
        return data


class EvalitaRunInfo(RunInfo):
    """The shared ``run`` block plus what an Evalita run adds: the tasks of a subset run."""

    # The task ids of a subset run, in paper order (None: all ten tasks).
    tasks: list[str] | None = None

    @property
    def subset(self) -> bool:
        """A run of some of the tasks only (labelled, never ranked beside full runs)."""
        return self.tasks is not None

    @property
    def comparable(self) -> bool:
        """A full run of all ten tasks on the official data (a subset is never ranked beside one)."""
        return self.official_full_run and not self.subset


class ResultsFile(ResultsEnvelope):
    """An Evalita results file: the envelope and, per task, the prompt scores."""

    TRACK: ClassVar[str] = TRACK

    track: str = TRACK
    run: EvalitaRunInfo
    tasks: dict[str, TaskResult]
    #: Other metric sets' scores, computed from the details (absent in older files) **[project]**.
    metric_sets: list[MetricSetBlock] = Field(default_factory=list)

    def metric_set_block(self, name: str, version: int) -> MetricSetBlock | None:
        """The block of metric set ``name`` at ``version``, if the file has one (the last if several)."""
        found = [block for block in self.metric_sets if block.name == name and block.version == version]
        return found[-1] if found else None

    @property
    def comparable(self) -> bool:
        """A full run of all ten tasks on the official data (:attr:`EvalitaRunInfo.comparable`)."""
        return self.run.comparable


_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _non_finite_key(value: float) -> str:
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


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
    # The gold as the metric reads it, from the dataset row [project] (absent in older details):
    # multiple choice the gold option's index; NER [[text, type], …]; RE [[result, test], …];
    # LS [[substitute, annotators], …].  ``target`` is only its joined string.
    gold: int | list[list[str | int]] | None = None

    @field_serializer("loglikelihoods")
    def _finite_or_named(self, values: list[float] | None) -> list[float | str] | None:
        # An fp16 overflow gives a NaN (or ±inf) log-likelihood, which JSON cannot hold and the
        # store's safe reader refuses: it is written "NaN", "Infinity" or "-Infinity", which the
        # model reads back as the float, so rescoring picks the same option (np.argmax's).
        if values is None:
            return None
        return [v if math.isfinite(v) else _NON_FINITE[_non_finite_key(v)] for v in values]


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
