"""Validating a submission and turning it into queued requests.

:func:`submit` checks everything first — model id syntax, precision, few-shot
settings, model type, that the model exists (and its revision, pinned to a commit
sha), remote code, duplicates — then charges the submitter's rate limit in one
compare-and-swap on their ledger (:mod:`eval_queue.ledger`), and only then writes.
A refusal raises :class:`~eval_queue.errors.SubmissionRejected` whose message tells
the user what to change (echoing at most :data:`~eval_queue.text.ECHO_LIMIT`
characters of what they typed), and leaves the store untouched.  When the store
cannot be used, :class:`~eval_queue.errors.StoreUnavailableError` says why.

Everything goes through :class:`~eval_queue.queue.RequestQueue`, and the queue is
listed once per submission.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from eval_queue.errors import (
    AlreadyExistsError,
    ConfigurationError,
    MalformedFileError,
    StorageError,
    StoreUnavailableError,
    SubmissionRejected,
)
from eval_queue.names import MODEL_ID_RE, REVISION_RE, SUBMITTER_RE, is_model_id, is_revision
from eval_queue.queue import REPLACEABLE_STATUSES, QueueListing, RequestQueue
from eval_queue.requests import (
    EvalRequest,
    ModelType,
    Precision,
    Status,
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
from eval_queue.storage.base import Storage
from eval_queue.text import shorten
from eval_queue.tracks import (
    DEFAULT_TRACK,
    TrackOptions,
    TrackSpec,
    UnknownTrackError,
    track_registry,
    track_spec,
)
from eval_queue.vocabulary import short_revision

logger = logging.getLogger(__name__)

__all__ = [
    "MODEL_ID_RE",
    "REVISION_RE",
    "SUBMITTER_RE",
    "CacheModelResolver",
    "FallbackResolver",
    "HubModelResolver",
    "ModelResolver",
    "ResolvedModel",
    "SubmissionForm",
    "resolver_for",
    "submit",
]


@dataclass(frozen=True)
class SubmissionForm:
    """What a user asks for; values are raw strings/ints as typed, validated by :func:`submit`."""

    model: str
    revision: str = "main"
    precision: str = Precision.BFLOAT16.value
    num_fewshot: Sequence[int] = (0,)
    model_type: str | None = None  # None: guessed from the model card, else "unknown"
    submitted_by: str = "anonymous"
    # The track (docs/TRACKS.md) and the options it owns, by request field (raw values: the
    # track's TrackOptions validate them); absent or None: the whole track.
    track: str = DEFAULT_TRACK
    options: Mapping[str, Any] = field(default_factory=dict)


def submit(
    queue: RequestQueue,
    form: SubmissionForm,
    *,
    resolver: ModelResolver,
    settings: Settings,
    results: Storage | None = None,
    now: datetime | None = None,
) -> list[EvalRequest]:
    """Queue one request per chosen few-shot setting, or refuse with ``SubmissionRejected``.

    A FAILED or CANCELLED request for the same evaluation is replaced (a resubmission);
    a PENDING, RUNNING or FINISHED one makes this a duplicate.  The track's own check
    (``TrackSpec.check_submission``, e.g. that a run an option names exists) reads
    ``results``, the results store, before anything is written.
    """
    now = now or utc_now()
    model = _check_model_id(form.model)
    revision = _check_revision(form.revision)
    precision = _check_precision(form.precision)
    spec = _check_track(form.track)
    options = _check_options(spec, form.options)
    settings_asked = _check_fewshot(form.num_fewshot, spec)
    model_type = _check_model_type(form.model_type)
    submitter = _check_submitter(form.submitted_by)

    _track_check(spec, options, results)
    resolved = resolver.resolve(model, revision)
    if resolved.remote_code and not settings.allow_remote_code:
        raise SubmissionRejected(
            f"{model} needs trust_remote_code ({shorten(resolved.remote_code)}); the leaderboard only "
            "runs models that transformers supports natively. Ask a maintainer if it should be allowed."
        )
    requests = [
        _build(resolved, precision, k, model_type, submitter, now, spec.name, options) for k in settings_asked
    ]
    try:
        listing = queue.listing()  # the one read of the queue
        replaced = _check_duplicates(listing, requests)
        token = _reserve(queue, listing, submitter, requests, settings, now)
        return _write(queue, requests, replaced, submitter, token)
    except StorageError as exc:
        raise StoreUnavailableError.because(exc) from exc


# -- field checks ------------------------------------------------------------------


def _check_model_id(model: str) -> str:
    model = (model or "").strip()
    if not is_model_id(model):
        raise SubmissionRejected(
            f"{shorten(model)} is not a Hub model id: write it as organisation/model-name, "
            "e.g. HuggingFaceTB/SmolLM2-135M-Instruct."
        )
    return model


def _check_revision(revision: str) -> str:
    revision = (revision or "main").strip()
    if not is_revision(revision):
        raise SubmissionRejected(
            f"{shorten(revision)} is not a valid revision: give a branch, a tag or a commit sha (default: main)."
        )
    return revision


def _check_precision(precision: str) -> Precision:
    try:
        return Precision(str(precision).strip().lower())
    except ValueError:
        valid = ", ".join(p.value for p in Precision)
        raise SubmissionRejected(f"unknown precision {shorten(precision)}: choose one of {valid}.") from None


def _check_fewshot(settings: Sequence[int], spec: TrackSpec) -> tuple[int, ...]:
    chosen = tuple(dict.fromkeys(settings))  # drop repeats, keep order
    if not spec.fewshot:
        if chosen not in ((), (0,)):
            raise SubmissionRejected(f"the {spec.name} track has no few-shot setting: leave --fewshot out.")
        return (0,)
    valid = " or ".join(str(k) for k in spec.fewshot)
    if not chosen:
        raise SubmissionRejected(f"choose at least one few-shot setting: {valid}.")
    for k in chosen:
        if k not in spec.fewshot:
            raise SubmissionRejected(f"few-shot setting {shorten(k)} is not offered: choose {valid}.")
    return chosen


def _check_track(track: str) -> TrackSpec:
    try:
        return track_spec((track or DEFAULT_TRACK).strip().lower())
    except UnknownTrackError:
        valid = ", ".join(track_registry().names)
        raise SubmissionRejected(f"unknown track {shorten(track)}: choose one of {valid}.") from None


def _check_options(spec: TrackSpec, raw: Mapping[str, Any]) -> TrackOptions:
    """The track's options from raw values; another track's option, or a bad value, is refused."""
    given = {name: value for name, value in raw.items() if value is not None}
    registry = track_registry()
    for name in given:
        if name not in spec.options.model_fields:
            owner = registry.owner_of_option(name)
            where = f"belongs to the {owner} track" if owner else "is not an option of any track"
            raise SubmissionRejected(f"{name} {where}, not to {spec.name}.")
    try:
        return spec.options.parse(given)
    except ValueError as exc:
        raise SubmissionRejected(str(exc)) from None


def _track_check(spec: TrackSpec, options: TrackOptions, results: Storage | None) -> None:
    check = spec.load("check_submission")
    if check is None:
        return
    if results is None:
        raise ConfigurationError(
            f"submitting to the {spec.name} track needs the results store (its check reads it)"
        )
    check(options, results)


def _check_model_type(model_type: str | None) -> ModelType | None:
    if model_type is None or not model_type.strip():
        return None
    try:
        return ModelType(model_type.strip().lower())
    except ValueError:
        valid = ", ".join(t.value for t in ModelType)
        raise SubmissionRejected(
            f"unknown model type {shorten(model_type)}: choose one of {valid}."
        ) from None


def _check_submitter(submitted_by: str) -> str:
    who = " ".join((submitted_by or "").split()) or "anonymous"
    if not SUBMITTER_RE.match(who):
        raise SubmissionRejected(
            f"{shorten(who)} is not a usable submitter name: use your Hub user name "
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
    track: str,
    options: TrackOptions,
) -> EvalRequest:
    try:
        return EvalRequest(
            model=resolved.model_id,
            revision=resolved.sha,
            precision=precision,
            num_fewshot=num_fewshot,
            model_type=model_type or resolved.model_type or ModelType.UNKNOWN,
            params_b=resolved.params_b,
            license=resolved.license,
            architecture=resolved.architecture,
            submitted_by=submitter,
            submitted_time=isoformat(now),
            track=track,
            **options.model_dump(mode="json", exclude_none=True),
            history=[
                {"time": isoformat(now), "status": Status.PENDING.value, "by": submitter, "note": "submitted"}
            ],
        )
    except ValidationError as exc:  # a field that does not fit: say which and why
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "request"
        raise SubmissionRejected(f"{where}: {first['msg']}".replace("Value error, ", "")) from None


def _check_duplicates(listing: QueueListing, requests: list[EvalRequest]) -> dict[str, EvalRequest]:
    """Refuse duplicates; return the FAILED/CANCELLED requests the submission will replace."""
    by_id = {r.request_id: r for r in listing.requests}
    unreadable = {p.path: p for p in listing.problems}
    replaced: dict[str, EvalRequest] = {}
    for request in requests:
        problem = unreadable.get(request.path)
        if problem is not None:
            raise SubmissionRejected(
                f"a request file for {request.model} already exists but is unreadable ({problem.reason}); "
                "ask a maintainer to fix or remove it."
            )
        existing = by_id.get(request.request_id)
        if existing is None:
            continue
        if existing.revision != request.revision:
            raise SubmissionRejected(
                f"{request.model} revision {existing.revision} is already queued under the same short id "
                f"as {request.revision}; ask a maintainer."
            )
        if existing.status not in REPLACEABLE_STATUSES:
            what = "already evaluated" if existing.status is Status.FINISHED else "already in the queue"
            raise SubmissionRejected(
                f"duplicate: {request.model} at {short_revision(request.revision)} in {request.precision.value}, "
                f"{_run_words(request)} is {what} ({existing.status.value}, request {existing.request_id})."
            )
        replaced[request.request_id] = existing
    return replaced


def _run_words(request: EvalRequest) -> str:
    """How a duplicate message names the run: ``0-shot``, or the track and its options."""
    spec = track_spec(request.track)
    words = f"{request.num_fewshot}-shot" if spec.fewshot else f"on the {spec.label} track"
    described = request.options.describe()
    return f"{words} ({described})" if described else words


def _reserve(
    queue: RequestQueue,
    listing: QueueListing,
    submitter: str,
    requests: list[EvalRequest],
    settings: Settings,
    now: datetime,
) -> str:
    try:
        return queue.reserve(
            submitter,
            [r.request_id for r in requests],
            limit=settings.submission_limit,
            period_s=settings.submission_period_s,
            now=now,
            listing=listing,
        )
    except MalformedFileError as exc:
        raise SubmissionRejected(
            f"the submission record of {submitter} is unreadable ({exc.reason}); ask a maintainer."
        ) from None


def _write(
    queue: RequestQueue,
    requests: list[EvalRequest],
    replaced: dict[str, EvalRequest],
    submitter: str,
    token: str,
) -> list[EvalRequest]:
    """Write all requests, or none: on a lost race the ones already created are removed and
    the reservations of the requests not written are released."""
    written: list[EvalRequest] = []
    try:
        for request in requests:
            if request.request_id in replaced:
                written.append(queue.resubmit(request))
            else:
                written.append(queue.add(request))
    except (AlreadyExistsError, StorageError) as exc:
        kept = _roll_back(queue, written, replaced)
        unwritten = [r.request_id for r in requests if r.request_id not in kept]
        try:
            queue.release_reservation(submitter, unwritten, token)
        except (StorageError, MalformedFileError) as release_error:
            # The submitter stays charged for them until the period ends; never the reverse.
            logger.error("could not release the reservation of %s: %s", submitter, release_error)
        if not isinstance(exc, AlreadyExistsError):
            raise
        raise SubmissionRejected(
            f"duplicate: {requests[0].model} was just submitted by someone else; check the queue."
        ) from None
    return written


def _roll_back(queue: RequestQueue, written: list[EvalRequest], replaced: dict[str, EvalRequest]) -> set[str]:
    """Remove the requests this submission created; returns the ids that stay (resubmissions)."""
    kept = set()
    for done in written:
        if done.request_id in replaced:
            kept.add(done.request_id)  # a replaced FAILED/CANCELLED request cannot be restored safely
        else:
            try:
                queue.withdraw(done)
            except StorageError as exc:
                kept.add(done.request_id)
                logger.error("could not roll back %s: %s", done.request_id, exc)
    return kept
