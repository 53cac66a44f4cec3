"""Validating a submission and turning it into queued requests.

:func:`submit` checks everything first — model id syntax, precision, few-shot
settings, model type, that the model exists (and its revision, pinned to a commit
sha), remote code, duplicates, the submitter's rate limit — and only then writes.
A refusal raises :class:`~eval_queue.errors.SubmissionRejected` whose message tells
the user what to change, and leaves the store untouched.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import ValidationError

from eval_queue.errors import AlreadyExistsError, MalformedFileError, NotFoundError, SubmissionRejected
from eval_queue.queue import HISTORY_LIMIT, RequestQueue, submitter_key
from eval_queue.requests import (
    FEWSHOT_SETTINGS,
    EvalRequest,
    ModelType,
    Precision,
    Status,
    Track,
    isoformat,
    utc_now,
)
from eval_queue.resolver import (
    CacheModelResolver,
    FallbackResolver,
    HubModelResolver,
    ModelResolver,
    ResolvedModel,
    resolver_for,
)
from eval_queue.settings import Settings

logger = logging.getLogger(__name__)

__all__ = [
    "CacheModelResolver",
    "FallbackResolver",
    "HubModelResolver",
    "ModelResolver",
    "ResolvedModel",
    "SubmissionForm",
    "resolver_for",
    "submit",
]

# The Hub's own rule: org/name, letters, digits, "-", "_", "."; no "--" or "..";
# neither part starts or ends with "-" or ".".
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?"
MODEL_ID_RE = re.compile(rf"^{_PART}/{_PART}$")
REVISION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")
SUBMITTER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@ -]{0,99}$")
# A request in one of these states means the same evaluation is queued or done.
DUPLICATE_STATUSES = frozenset({Status.PENDING, Status.RUNNING, Status.FINISHED})


@dataclass(frozen=True)
class SubmissionForm:
    """What a user asks for; values are raw strings/ints as typed, validated by :func:`submit`."""

    model: str
    revision: str = "main"
    precision: str = Precision.BFLOAT16.value
    num_fewshot: Sequence[int] = (0,)
    model_type: str | None = None  # None: guessed from the model card, else "unknown"
    submitted_by: str = "anonymous"
    # The track and its optional fields (docs/TRACKS.md), validated by EvalRequest.
    track: str = Track.EVALITA.value
    tasks: Sequence[str] | None = None
    context_settings: Sequence[str] | None = None
    judge_mode: str | None = None
    judge_target: str | None = None


def submit(
    queue: RequestQueue,
    form: SubmissionForm,
    *,
    resolver: ModelResolver,
    settings: Settings,
    now: datetime | None = None,
) -> list[EvalRequest]:
    """Queue one request per chosen few-shot setting, or refuse with ``SubmissionRejected``.

    A FAILED or CANCELLED request for the same evaluation is replaced (a resubmission);
    a PENDING, RUNNING or FINISHED one makes this a duplicate.
    """
    now = now or utc_now()
    model = _check_model_id(form.model)
    revision = _check_revision(form.revision)
    precision = _check_precision(form.precision)
    track = _check_track(form.track)
    settings_asked = _check_fewshot(form.num_fewshot) if track is Track.EVALITA else _no_fewshot(form, track)
    model_type = _check_model_type(form.model_type)
    submitter = _check_submitter(form.submitted_by)

    resolved = resolver.resolve(model, revision)
    if resolved.remote_code and not settings.allow_remote_code:
        raise SubmissionRejected(
            f"{model} needs trust_remote_code ({resolved.remote_code}); the leaderboard only runs "
            "models that transformers supports natively. Ask a maintainer if it should be allowed."
        )
    requests = [_build(resolved, precision, k, model_type, submitter, now, form) for k in settings_asked]
    listing = queue.listing()
    replaced = _check_duplicates(queue, requests)
    _check_rate_limit(listing.requests, submitter, len(requests), settings, now)
    return _write(queue, requests, replaced)


# -- field checks ------------------------------------------------------------------


def _check_model_id(model: str) -> str:
    model = model.strip()
    if not MODEL_ID_RE.match(model) or "--" in model or ".." in model:
        raise SubmissionRejected(
            f"{model!r} is not a Hub model id: write it as organisation/model-name, "
            "e.g. HuggingFaceTB/SmolLM2-135M-Instruct."
        )
    return model


def _check_revision(revision: str) -> str:
    revision = (revision or "main").strip()
    if not REVISION_RE.match(revision) or ".." in revision:
        raise SubmissionRejected(
            f"{revision!r} is not a valid revision: give a branch, a tag or a commit sha (default: main)."
        )
    return revision


def _check_precision(precision: str) -> Precision:
    try:
        return Precision(precision.strip().lower())
    except ValueError:
        valid = ", ".join(p.value for p in Precision)
        raise SubmissionRejected(f"unknown precision {precision!r}: choose one of {valid}.") from None


def _check_fewshot(settings: Sequence[int]) -> tuple[int, ...]:
    chosen = tuple(dict.fromkeys(settings))  # drop repeats, keep order
    valid = " or ".join(str(k) for k in FEWSHOT_SETTINGS)
    if not chosen:
        raise SubmissionRejected(f"choose at least one few-shot setting: {valid}.")
    for k in chosen:
        if k not in FEWSHOT_SETTINGS:
            raise SubmissionRejected(f"few-shot setting {k!r} is not offered: choose {valid}.")
    return chosen


def _check_track(track: str) -> Track:
    try:
        return Track((track or Track.EVALITA.value).strip().lower())
    except ValueError:
        valid = ", ".join(t.value for t in Track)
        raise SubmissionRejected(f"unknown track {track!r}: choose one of {valid}.") from None


def _no_fewshot(form: SubmissionForm, track: Track) -> tuple[int, ...]:
    if tuple(dict.fromkeys(form.num_fewshot)) not in ((), (0,)):
        raise SubmissionRejected(f"the {track.value} track has no few-shot setting: leave --fewshot out.")
    return (0,)


def _check_model_type(model_type: str | None) -> ModelType | None:
    if model_type is None or not model_type.strip():
        return None
    try:
        return ModelType(model_type.strip().lower())
    except ValueError:
        valid = ", ".join(t.value for t in ModelType)
        raise SubmissionRejected(f"unknown model type {model_type!r}: choose one of {valid}.") from None


def _check_submitter(submitted_by: str) -> str:
    who = " ".join((submitted_by or "").split()) or "anonymous"
    if not SUBMITTER_RE.match(who):
        raise SubmissionRejected(
            f"{who!r} is not a usable submitter name: use your Hub user name "
            "(letters, digits, '.', '_', '-', '@', up to 100 characters)."
        )
    return who


# -- building and writing ------------------------------------------------------------


def _build(
    resolved: ResolvedModel,
    precision: Precision,
    num_fewshot: int,
    model_type: ModelType | None,
    submitter: str,
    now: datetime,
    form: SubmissionForm,
) -> EvalRequest:
    chosen_type = model_type or resolved.model_type or ModelType.UNKNOWN
    try:
        return _request(resolved, precision, num_fewshot, chosen_type, submitter, now, form)
    except ValidationError as exc:  # a track field that does not fit: say which and why
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "request"
        raise SubmissionRejected(f"{where}: {first['msg']}".replace("Value error, ", "")) from None


def _request(
    resolved: ResolvedModel,
    precision: Precision,
    num_fewshot: int,
    model_type: ModelType,
    submitter: str,
    now: datetime,
    form: SubmissionForm,
) -> EvalRequest:
    return EvalRequest(
        model=resolved.model_id,
        revision=resolved.sha,
        precision=precision,
        num_fewshot=num_fewshot,
        model_type=model_type,
        params_b=resolved.params_b,
        license=resolved.license,
        architecture=resolved.architecture,
        submitted_by=submitter,
        submitted_time=isoformat(now),
        track=form.track.strip().lower(),
        tasks=list(form.tasks) if form.tasks is not None else None,
        context_settings=list(form.context_settings) if form.context_settings is not None else None,
        judge_mode=form.judge_mode,
        judge_target=form.judge_target,
        history=[
            {"time": isoformat(now), "status": Status.PENDING.value, "by": submitter, "note": "submitted"}
        ],
    )


def _check_duplicates(queue: RequestQueue, requests: list[EvalRequest]) -> dict[str, EvalRequest]:
    """Refuse duplicates; return the FAILED/CANCELLED requests the submission will replace."""
    replaced: dict[str, EvalRequest] = {}
    for request in requests:
        try:
            existing = queue.get(request.request_id)
        except NotFoundError:
            continue
        except MalformedFileError as exc:
            raise SubmissionRejected(
                f"a request file for {request.model} already exists but is unreadable ({exc.reason}); "
                "ask a maintainer to fix or remove it."
            ) from None
        if existing.revision != request.revision:
            raise SubmissionRejected(
                f"{request.model} revision {existing.revision} is already queued under the same short id "
                f"as {request.revision}; ask a maintainer."
            )
        if existing.status in DUPLICATE_STATUSES:
            what = "already evaluated" if existing.status is Status.FINISHED else "already in the queue"
            raise SubmissionRejected(
                f"duplicate: {request.model} at {request.revision[:12]} in {request.precision.value}, "
                f"{request.num_fewshot}-shot is {what} ({existing.status.value}, request {existing.request_id})."
            )
        replaced[request.request_id] = existing
    return replaced


def _check_rate_limit(
    existing: list[EvalRequest], submitter: str, adding: int, settings: Settings, now: datetime
) -> None:
    window = timedelta(seconds=settings.submission_period_s)
    who = submitter_key(submitter)
    recent = sorted(
        r.submitted_at
        for r in existing
        if submitter_key(r.submitted_by) == who and now - window < r.submitted_at <= now
    )
    limit, period = settings.submission_limit, _duration(window)
    if len(recent) + adding <= limit:
        return
    if adding > limit:
        raise SubmissionRejected(
            f"rate limit: this submission asks for {adding} evaluations but the limit is {limit} "
            f"per {period}; choose fewer few-shot settings."
        )
    # The moment enough of the recent submissions have left the window.
    retry_at = recent[len(recent) + adding - limit - 1] + window
    raise SubmissionRejected(
        f"rate limit: {submitter} has submitted {len(recent)} request(s) in the last {period}; "
        f"the limit is {limit} per {period}. Try again after {isoformat(retry_at)}."
    )


def _write(
    queue: RequestQueue, requests: list[EvalRequest], replaced: dict[str, EvalRequest]
) -> list[EvalRequest]:
    """Write all requests, or none: on a lost race the ones already created are removed."""
    written: list[EvalRequest] = []
    try:
        for request in requests:
            if request.request_id in replaced:
                written.append(_resubmit(queue, request))
            else:
                written.append(queue.add(request))
    except AlreadyExistsError:
        for done in written:
            if done.request_id not in replaced:
                queue.storage.delete(done.path, message=f"Roll back {done.request_id}")
        raise SubmissionRejected(
            f"duplicate: {requests[0].model} was just submitted by someone else; check the queue."
        ) from None
    return written


def _resubmit(queue: RequestQueue, request: EvalRequest) -> EvalRequest:
    """Replace a FAILED/CANCELLED request, keeping its history; refused if it changed meanwhile."""

    def change(data: bytes) -> bytes:
        old = EvalRequest.from_json(data, request.path)
        if old.status in DUPLICATE_STATUSES:
            raise AlreadyExistsError(f"{request.request_id} is {old.status.value} again")
        history = [*old.history, *request.history][-HISTORY_LIMIT:]
        return request.model_copy(update={"history": history}).to_json()

    data = queue.storage.update(request.path, change, message=f"Resubmit {request.request_id}")
    logger.info("resubmitted %s", request.request_id)
    return EvalRequest.from_json(data, request.path)


def _duration(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}" + ("s" if count != 1 else "")
    return f"{seconds} seconds"
