"""The request file: one evaluation asked for (model, revision, precision, setting, track).

This module is the single place that knows the request schema, the allowed values
and the file-name format (:func:`request_path` builds it, :func:`parse_request_path`
reads it back).  Every request file passes through :class:`EvalRequest`.

Tracks (``docs/TRACKS.md``): a request names its ``track`` (absent = the default track,
:data:`eval_queue.tracks.DEFAULT_TRACK`, so files written before tracks existed stay valid)
and may carry the options that track owns (its :class:`~eval_queue.tracks.TrackOptions`:
e.g. a subset of its tasks), at the top level of the file.  An option of another track is
refused.  What the options select is the request's *variant*, which is part of its file
name so that a partial run never takes the place of the full one:

* the default track: ``<org>/<model>_eval_request_<rev12>_<precision>_<k>shot[-<variant>].json``
* the others:        ``<org>/<model>_eval_request_<rev12>_<precision>_<track>[-<variant>].json``
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from eval_queue.errors import MalformedFileError
from eval_queue.safe_json import REQUEST_LIMITS, load_object, validate
from eval_queue.tracks import DEFAULT_TRACK, TrackOptions, track_registry
from eval_queue.vocabulary import short_revision

REQUEST_SCHEMA = "evalita-llm-request/1"


class Status(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


ACTIVE_STATUSES = frozenset({Status.PENDING, Status.RUNNING})


class RunPhase(StrEnum):
    """Where a RUNNING request's run is (``EvalRequest.phase``; absent in older files = RUNNING).

    It tells whoever finds the lease expired what the worker was doing: a run that never
    started is not counted as an attempt, and one that was publishing is completed if its
    results are there (:mod:`eval_queue.queue`).
    """

    CLAIMED = "claimed"  # claimed; the worker has not started the run yet
    RUNNING = "running"  # the run (model, harness) is in progress
    PUBLISHING = "publishing"  # the run succeeded; its outputs are being written to ``results_path``


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


__all__ = [
    "ACTIVE_STATUSES",
    "REQUEST_SCHEMA",
    "EvalRequest",
    "ModelType",
    "Precision",
    "RequestPathParts",
    "Status",
    "parse_request_path",
    "request_path",
    "run_label",
]


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
    # RUNNING only: what the worker is doing (RunPhase); while PUBLISHING, ``results_path``
    # is where its results are being written.
    phase: RunPhase | None = None
    # Names this request's run outputs (results file and details folder): the time of the
    # first claim, kept when the run is handed back or its lease expires, so that a rerun
    # writes the same paths; cleared by requeue (a new run).  ``eval_queue.publication``.
    run_stamp: str | None = None
    # Free-form trail of status changes: [{"time":…, "status":…, "by":…, "note":…}]
    history: list[dict[str, Any]] = Field(default_factory=list)
    # The benchmark this request runs (docs/TRACKS.md); absent in older files = the default track.
    # The options the track owns are kept at the top level, as extra keys (``options``).
    track: str = DEFAULT_TRACK
    _options: TrackOptions | None = PrivateAttr(default=None)

    @field_validator("submitted_time", "lease_expires", "run_stamp")
    @classmethod
    def _is_iso_time(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_time(value)
            except ValueError as exc:
                raise ValueError(f"not an ISO-8601 time: {value!r}") from exc
        return value

    @field_validator("track")
    @classmethod
    def _registered_track(cls, value: str) -> str:
        track_registry().spec(value)  # UnknownTrackError (a ValueError) names the closest track
        return value

    @model_validator(mode="after")
    def _options_of_its_track(self) -> EvalRequest:
        """The track's options validated (and stored canonically); another track's refused."""
        registry = track_registry()
        spec = registry.spec(self.track)
        extra = self.__pydantic_extra__ if self.__pydantic_extra__ is not None else {}
        owned = spec.options.model_fields
        for name in list(extra):
            owner = None if name in owned else registry.owner_of_option(name)
            if owner is not None and extra[name] is not None:
                raise ValueError(f"{name} belongs to the {owner} track, not to {self.track}")
            if owner is not None:  # files written before options moved to the tracks carry nulls
                del extra[name]
        options = spec.options.parse({name: extra.pop(name) for name in list(extra) if name in owned})
        extra.update(options.model_dump(mode="json", exclude_none=True))
        self._options = options
        spec.check_fewshot(self.num_fewshot)
        return self

    @property
    def options(self) -> TrackOptions:
        """The options of its track (the track's :class:`~eval_queue.tracks.TrackOptions` subclass)."""
        if self._options is None:  # built with model_construct: validate now
            self._options = track_registry().spec(self.track).options.parse(self.__pydantic_extra__ or {})
        return self._options

    @property
    def variant(self) -> str | None:
        """What the track-specific fields select, as written in the file name (None: the whole track)."""
        return self.options.variant()

    @property
    def request_id(self) -> str:
        """Stable id: the request's path in the requests repo without ``.json``."""
        return self.path.removesuffix(".json")

    @property
    def lease_expires_at(self) -> datetime | None:
        return None if self.lease_expires is None else parse_time(self.lease_expires)

    @property
    def submitted_at(self) -> datetime:
        return parse_time(self.submitted_time)

    @property
    def path(self) -> str:
        return request_path(
            self.model, self.revision, self.precision, self.num_fewshot, self.track, self.variant
        )

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
_VARIANT_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{0,63}$")


@functools.cache
def _path_re(tracks: tuple[str, ...]) -> re.Pattern[str]:
    """The request file-name pattern for these registered tracks (built once per set of tracks)."""
    others = "|".join(re.escape(t) for t in sorted(tracks, key=len, reverse=True) if t != DEFAULT_TRACK)
    return re.compile(
        r"^(?P<org>[^/]+)/(?P<name>[^/]+)_eval_request_(?P<revision>[^/]+)"
        rf"_(?P<precision>{'|'.join(p.value for p in Precision)})"
        rf"_(?:(?P<fewshot>\d+)shot|(?P<track>{others or '(?!)'}))(?:-(?P<variant>[a-z0-9][a-z0-9.-]*))?\.json$"
    )


_PATH_FORMS = (
    "<org>/<model>_eval_request_<rev>_<precision>_<k>shot[-<variant>].json or "
    "<org>/<model>_eval_request_<rev>_<precision>_<track>[-<variant>].json"
)


def _safe(part: str) -> str:
    return _SAFE.sub("-", part)


def request_path(
    model: str,
    revision: str,
    precision: Precision | str,
    num_fewshot: int,
    track: str = DEFAULT_TRACK,
    variant: str | None = None,
) -> str:
    """``<org>/<model>_eval_request_<revision>_<precision>_<k>shot|<track>[-<variant>].json``.

    The revision is shortened to 12 characters (a sha prefix or a branch name).
    A model id without an organisation is filed under ``_``.  The default track keeps
    the ``<k>shot`` form it always had; the other tracks have no few-shot setting and
    name themselves instead.
    """
    org, _, name = model.rpartition("/")
    org = org or "_"
    return (
        f"{_safe(org)}/{_safe(name)}_eval_request_{short_revision(_safe(revision))}"
        f"_{Precision(precision).value}_{run_label(track, num_fewshot, variant)}.json"
    )


def run_label(track: str, num_fewshot: int, variant: str | None = None) -> str:
    """What a request's, a results file's and a details folder's names say about the run.

    ``<k>shot`` for the default track (the form files had before tracks), the track's name
    for the others, then ``-<variant>`` for part of a track.
    """
    label = f"{num_fewshot}shot" if str(track) == DEFAULT_TRACK else str(track)
    if variant is None:
        return label
    if not _VARIANT_RE.match(variant):
        raise ValueError(f"invalid run variant {variant!r}")
    return f"{label}-{variant}"


@dataclass(frozen=True)
class RequestPathParts:
    """What a request file name says: the inverse of :func:`request_path`."""

    org: str
    name: str
    revision: str  # shortened, as in the name
    precision: Precision
    track: str
    num_fewshot: int  # 0 for the tracks without a few-shot setting
    variant: str | None


def parse_request_path(path: str) -> RequestPathParts:
    """Inverse of :func:`request_path` for listings (both name forms).

    Raises :class:`MalformedFileError` for a file that is not named like a request.
    """
    match = _path_re(tuple(track_registry().names)).match(path)
    if not match:
        raise MalformedFileError(path, f"not named like a request file ({_PATH_FORMS})")
    fewshot = match["fewshot"]
    return RequestPathParts(
        org=match["org"],
        name=match["name"],
        revision=match["revision"],
        precision=Precision(match["precision"]),
        track=match["track"] or DEFAULT_TRACK,
        num_fewshot=int(fewshot) if fewshot is not None else 0,
        variant=match["variant"],
    )
