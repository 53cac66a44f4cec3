"""The results file — the public contract (DESIGN.md) — and the per-sample detail record.

Scores are stored on the 0–1 scale as lm-evaluation-harness reports them.  MaxP,
AvgP and CPS are *not* stored: :mod:`leaderboard.scoring` derives them at read time.
Older schema versions are upgraded in :mod:`leaderboard.migrations`, never here.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, field_validator

from eval_queue.errors import MalformedFileError
from eval_queue.requests import FEWSHOT_SETTINGS
from eval_queue.safe_json import DETAILS_LINE_LIMITS, RESULTS_LIMITS, load_object, validate
from eval_queue.text import printable

RESULTS_SCHEMA = "evalita-llm-results/1"


class ModelInfo(BaseModel):
    model_config = ConfigDict(extra="allow", protected_namespaces=())

    id: str
    revision: str = "main"
    precision: str = "bfloat16"
    params_b: float | None = None
    model_type: str | None = None
    license: str | None = None
    architecture: str | None = None

    @field_validator("id", "revision", "precision")
    @classmethod
    def _no_control_characters(cls, value: str) -> str:
        # Identifiers reach terminals (export) and file names; a real one has none.
        if printable(value, keep_newlines=False) != value:
            raise ValueError("contains control characters")
        return value


class RunInfo(BaseModel):
    model_config = ConfigDict(extra="allow", protected_namespaces=())

    num_fewshot: int
    # "hub" | "sample" | "local:<name>"; only "hub" runs with no limit are comparable.
    data: str = "hub"
    limit: int | float | None = None
    harness: str | None = None
    backend: str | None = None
    model_args: str | None = None
    batch_size: str | int | None = None
    chat_template: bool | None = None
    started_at: str | None = None
    finished_at: str | None = None
    duration_s: float | None = None
    hardware: str | None = None
    request_id: str | None = None
    # Folder in the details store holding <task>_<prompt>.jsonl files of this run.
    details_path: str | None = None

    @field_validator("num_fewshot")
    @classmethod
    def _fewshot_offered(cls, value: int) -> int:
        # A run in another setting would be counted but shown nowhere: refuse it instead.
        if value not in FEWSHOT_SETTINGS:
            raise ValueError(f"num_fewshot must be one of {list(FEWSHOT_SETTINGS)}, got {value}")
        return value

    @property
    def comparable(self) -> bool:
        """Full runs on the official data are the only ones ranked by default."""
        return self.data == "hub" and self.limit is None


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


class ResultsFile(BaseModel):
    model_config = ConfigDict(extra="allow", protected_namespaces=())

    schema_: str = Field(default=RESULTS_SCHEMA, alias="schema")
    model: ModelInfo
    run: RunInfo
    tasks: dict[str, TaskResult]

    def to_json(self) -> bytes:
        payload = self.model_dump(mode="json", by_alias=True, exclude_none=False)
        return (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes, path: str) -> ResultsFile:
        """Parse (and upgrade) a results file; raises :class:`MalformedFileError` naming ``path``.

        The bytes go through the store's safe reader (:mod:`eval_queue.safe_json`: size,
        depth, numbers, encoding), then the migrations, then this schema.
        """
        from leaderboard.migrations import upgrade  # local: migrations imports this module

        raw = upgrade(load_object(data, path, RESULTS_LIMITS), path)
        return validate(cls, raw, path)


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


def _stamp(moment_iso: str) -> str:
    """``2026-11-22T19:06:53Z`` → ``2026-11-22T19-06-53Z`` (no ``:`` in file names)."""
    return moment_iso.replace(":", "-")


def results_file_path(results: ResultsFile, finished_at_iso: str) -> str:
    """Where a run's results file lives: ``<org>/<model>/results_<ts>_<precision>_<k>shot.json``.

    DESIGN.md names it ``results_<timestamp>.json``; the precision and setting are appended
    (readers match ``results_*.json``) so that two runs of one model finishing in the same
    second, e.g. its 0-shot and 5-shot requests on two workers, never overwrite each other.
    """
    stamp = _stamp(finished_at_iso)
    return f"{results.model.id}/results_{stamp}_{results.model.precision}_{results.run.num_fewshot}shot.json"


def details_dir(model_id: str, finished_at_iso: str, precision: str, num_fewshot: int) -> str:
    """Folder in the details store for one run's per-sample files (``<task>_<prompt>.jsonl``)."""
    return f"{model_id}/{_stamp(finished_at_iso)}_{precision}_{num_fewshot}shot"


def details_file_name(task_id: str, prompt_id: str) -> str:
    return f"{task_id}_{prompt_id}.jsonl"
