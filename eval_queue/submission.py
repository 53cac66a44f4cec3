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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import ValidationError

from eval_queue.errors import (
    AlreadyExistsError,
    MalformedFileError,
    NotFoundError,
    StorageError,
    StoreUnavailableError,
    SubmissionRejected,
)
from eval_queue.names import MODEL_ID_RE, REVISION_RE, SUBMITTER_RE, is_model_id, is_revision
from eval_queue.queue import REPLACEABLE_STATUSES, QueueListing, RequestQueue
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
from eval_queue.safe_json import RESULTS_LIMITS, load_object
from eval_queue.settings import Settings
from eval_queue.storage.base import Storage
from eval_queue.text import shorten
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
            f"{model} needs trust_remote_code ({shorten(resolved.remote_code)}); the leaderboard only "
            "runs models that transformers supports natively. Ask a maintainer if it should be allowed."
        )
    requests = [_build(resolved, precision, k, model_type, submitter, now, form) for k in settings_asked]
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


def _check_fewshot(settings: Sequence[int]) -> tuple[int, ...]:
    chosen = tuple(dict.fromkeys(settings))  # drop repeats, keep order
    valid = " or ".join(str(k) for k in FEWSHOT_SETTINGS)
    if not chosen:
        raise SubmissionRejected(f"choose at least one few-shot setting: {valid}.")
    for k in chosen:
        if k not in FEWSHOT_SETTINGS:
            raise SubmissionRejected(f"few-shot setting {shorten(k)} is not offered: choose {valid}.")
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
                f"{request.num_fewshot}-shot is {what} ({existing.status.value}, request {existing.request_id})."
            )
        replaced[request.request_id] = existing
    return replaced


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


#: The generative task whose outputs a judge scores (``backend.tracks.judge``'s default).
JUDGED_TASK = "sum"


def check_judge_target(results: Storage, target: str) -> None:
    """Refuse a judge of generations whose target cannot be judged, before it is queued.

    ``target`` must be an Evalita results file in ``results`` whose run published per-sample
    details with the judged task.  Read through the safe reader, envelope only (the queue
    does not know the results schema).  Raises :class:`SubmissionRejected` saying how to fix it.
    """
    try:
        raw = load_object(results.read(target, max_bytes=RESULTS_LIMITS.max_bytes), target, RESULTS_LIMITS)
    except NotFoundError:
        raise SubmissionRejected(
            f"There is no results file {shorten(target, 200)!r} in the results store: give the results path "
            "of a finished Evalita run (python -m eval_queue list shows each FINISHED request's)."
        ) from None
    except MalformedFileError as exc:
        raise SubmissionRejected(f"The results file to judge is unreadable: {exc.reason}") from None
    run = raw.get("run") if isinstance(raw.get("run"), dict) else {}
    tasks = raw.get("tasks") if isinstance(raw.get("tasks"), dict) else {}
    if raw.get("track", Track.EVALITA.value) != Track.EVALITA.value or JUDGED_TASK not in tasks:
        raise SubmissionRejected(
            f"{shorten(target, 200)!r} is not an Evalita run with {JUDGED_TASK.upper()} outputs: "
            "a judge scores the summaries of an Evalita run that includes the SUM task."
        )
    if not run.get("details_path"):
        raise SubmissionRejected(
            f"The run {shorten(target, 200)!r} published no per-sample details, so there is nothing to judge."
        )
