"""The request file: one evaluation asked for (model, revision, precision, setting).

This module is the single place that knows the request schema, the allowed values
and the file-name format (:func:`request_path` builds it, :func:`parse_request_path`
reads it back).  Every request file passes through :class:`EvalRequest`.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from eval_queue.errors import MalformedFileError
from eval_queue.safe_json import REQUEST_LIMITS, load_object, validate
from eval_queue.vocabulary import FEWSHOT_SETTINGS as FEWSHOT_SETTINGS  # re-exported (submission, cli)
from eval_queue.vocabulary import short_revision

REQUEST_SCHEMA = "evalita-llm-request/1"


class Status(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


ACTIVE_STATUSES = frozenset({Status.PENDING, Status.RUNNING})


class Precision(StrEnum):
    BFLOAT16 = "bfloat16"
    FLOAT16 = "float16"
    FLOAT32 = "float32"


class ModelType(StrEnum):
    PRETRAINED = "pretrained"
    CONTINUALLY_PRETRAINED = "continually-pretrained"
    FINE_TUNED = "fine-tuned"
    INSTRUCTION_TUNED = "instruction-tuned"
    MERGED = "merged"
    UNKNOWN = "unknown"


def utc_now() -> datetime:
    return datetime.now(UTC)


def isoformat(moment: datetime) -> str:
    """UTC ISO-8601 with a ``Z`` suffix, second precision (``submitted_time``, history)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def isoformat_ms(moment: datetime) -> str:
    """UTC ISO-8601 with a ``Z`` suffix and milliseconds (``lease_expires``).

    Leases can be a few seconds long; rounding them to the second would shorten them.
    """
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    """Inverse of :func:`isoformat` / :func:`isoformat_ms`; a naive time is taken as UTC."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class EvalRequest(BaseModel):
    """A queued evaluation.  Unknown keys are kept (``extra="allow"``) and ignored."""

    model_config = ConfigDict(extra="allow", use_enum_values=False)

    schema_: str = Field(default=REQUEST_SCHEMA, alias="schema")
    model: str
    revision: str = "main"
    precision: Precision = Precision.BFLOAT16
    num_fewshot: int = 0
    model_type: ModelType = ModelType.UNKNOWN
    params_b: float | None = None
    license: str | None = None
    architecture: str | None = None
    submitted_by: str = "anonymous"
    submitted_time: str
    status: Status = Status.PENDING
    claimed_by: str | None = None
    lease_expires: str | None = None
    # Runs lost to an expired lease (the worker died or hung).  ``release`` (a clean
    # hand-back) and ``fail`` (a readable failure) leave it unchanged; ``requeue`` resets it.
    attempts: int = Field(default=0, ge=0)
    error: str | None = None
    results_path: str | None = None
    # Free-form trail of status changes: [{"time":…, "status":…, "by":…, "note":…}]
    history: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("submitted_time", "lease_expires")
    @classmethod
    def _is_iso_time(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_time(value)
            except ValueError as exc:
                raise ValueError(f"not an ISO-8601 time: {value!r}") from exc
        return value

    @field_validator("num_fewshot")
    @classmethod
    def _fewshot_allowed(cls, value: int) -> int:
        if value not in FEWSHOT_SETTINGS:
            raise ValueError(f"num_fewshot must be one of {list(FEWSHOT_SETTINGS)}, got {value}")
        return value

    @property
    def request_id(self) -> str:
        """Stable id: the request's path in the requests repo without ``.json``."""
        return request_path(self.model, self.revision, self.precision, self.num_fewshot).removesuffix(".json")

    @property
    def lease_expires_at(self) -> datetime | None:
        return None if self.lease_expires is None else parse_time(self.lease_expires)

    @property
    def submitted_at(self) -> datetime:
        return parse_time(self.submitted_time)

    @property
    def path(self) -> str:
        return request_path(self.model, self.revision, self.precision, self.num_fewshot)

    def to_json(self) -> bytes:
        return (
            json.dumps(self.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False) + "\n"
        ).encode()

    @classmethod
    def from_json(cls, data: bytes, path: str) -> EvalRequest:
        """Parse a request file through the safe reader; raises :class:`MalformedFileError` naming ``path``."""
        raw = load_object(data, path, REQUEST_LIMITS)
        schema = raw.get("schema", REQUEST_SCHEMA)
        if schema != REQUEST_SCHEMA:
            raise MalformedFileError(path, f"unknown schema {schema!r} (expected {REQUEST_SCHEMA!r})")
        request = validate(cls, raw, path)
        if request.path != path:
            raise MalformedFileError(path, f"file is in the wrong place (its fields say {request.path})")
        return request


_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_PATH_RE = re.compile(
    r"^(?P<org>[^/]+)/(?P<name>[^/]+)_eval_request_(?P<revision>[^/]+)"
    rf"_(?P<precision>{'|'.join(p.value for p in Precision)})_(?P<fewshot>\d+)shot\.json$"
)


def _safe(part: str) -> str:
    return _SAFE.sub("-", part)


def request_path(model: str, revision: str, precision: Precision | str, num_fewshot: int) -> str:
    """``<org>/<model>_eval_request_<revision>_<precision>_<k>shot.json``.

    The revision is shortened to 12 characters (a sha prefix or a branch name).
    A model id without an organisation is filed under ``_``.
    """
    org, _, name = model.rpartition("/")
    org = org or "_"
    return f"{_safe(org)}/{_safe(name)}_eval_request_{short_revision(_safe(revision))}_{Precision(precision).value}_{num_fewshot}shot.json"


def parse_request_path(path: str) -> dict[str, str]:
    """Inverse of :func:`request_path` for listings: ``org``, ``name``, ``revision``, ``precision``, ``fewshot``.

    Raises :class:`MalformedFileError` for a file that is not named like a request.
    """
    match = _PATH_RE.match(path)
    if not match:
        raise MalformedFileError(
            path, "not named like a request file (<org>/<model>_eval_request_<rev>_<precision>_<k>shot.json)"
        )
    return match.groupdict()
