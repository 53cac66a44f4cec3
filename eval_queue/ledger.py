"""The per-submitter ledger: the rate limit checked and charged in one compare-and-swap.

Checking a submitter's recent requests in a listing and then writing new ones are two
steps, so N concurrent submissions all pass the check before any is written (at a limit
of 2, 8 of 8 were accepted).  Instead, every submitter has one small file in the
requests store::

    .submitters/<sha256 of the submitter key, 32 hex>.json
    {"schema": "evalita-llm-ledger/1", "submitter": "hf-alice",
     "entries": [{"time": "2026-03-01T09:00:00Z", "request": "org/m_eval_request_…",
                  "token": "<one per submission>"}, …]}

A submission first *reserves* its requests there with ``Storage.update`` (or ``create``
for a submitter's first ledger): the transform drops entries older than the period,
refuses if the rest plus the new ones exceed the limit, else appends them.  The store
serialises these updates (a file lock locally, a conditional commit on the hub), so of N
concurrent submissions at limit L exactly L reserve and the others are refused.  Then
the requests are written; requests that could not be written are released from the
ledger again.  A crash in between leaves a reservation without a request: the
submitter is charged for it until the period ends (never the other way round).

The folder is hidden (leading ``.``), so listings of the queue never show the ledgers.
A submitter's first ledger is seeded from the requests already in the queue, so limits
carry over from stores written before ledgers existed.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field, field_validator

from eval_queue.errors import AlreadyExistsError, MalformedFileError, NotFoundError, SubmissionRejected
from eval_queue.requests import isoformat, parse_time
from eval_queue.safe_json import REQUEST_LIMITS, load_object, validate
from eval_queue.storage.base import Storage

LEDGER_SCHEMA = "evalita-llm-ledger/1"
LEDGER_FOLDER = ".submitters/"


class LedgerEntry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    time: str
    request: str
    # Which submission made the reservation, so that undoing it never removes another's
    # (two racers may reserve the same request id at the same second).
    token: str | None = None

    @field_validator("time")
    @classmethod
    def _is_iso_time(cls, value: str) -> str:
        parse_time(value)  # a ValueError makes the ledger malformed, not a later count crash
        return value

    @property
    def at(self) -> datetime:
        return parse_time(self.time)


class Ledger(BaseModel):
    """A submitter's reservations within the current period (older ones are dropped on update)."""

    model_config = ConfigDict(extra="allow")

    schema_: str = Field(default=LEDGER_SCHEMA, alias="schema")
    submitter: str
    entries: list[LedgerEntry] = Field(default_factory=list)

    def to_json(self) -> bytes:
        return self.model_dump_json(by_alias=True, indent=1).encode() + b"\n"

    @classmethod
    def from_json(cls, data: bytes, path: str) -> Ledger:
        raw = load_object(data, path, REQUEST_LIMITS)
        if raw.get("schema") != LEDGER_SCHEMA:
            raise MalformedFileError(
                path, f"unknown schema {raw.get('schema')!r} (expected {LEDGER_SCHEMA!r})"
            )
        return validate(cls, raw, path)


def ledger_path(key: str) -> str:
    """Where the ledger of the submitter key ``key`` lives (a hash: names may hold any character)."""
    return f"{LEDGER_FOLDER}{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}.json"


def reserve(
    storage: Storage,
    key: str,
    request_ids: Sequence[str],
    *,
    limit: int,
    period_s: float,
    now: datetime,
    label: str,
    seed: Sequence[LedgerEntry] = (),
) -> str:
    """Charge ``request_ids`` to the ledger of submitter ``key`` in one compare-and-swap.

    Returns the reservation's token (for :func:`unreserve`); ``SubmissionRejected`` (naming
    the submitter as ``label``) when over the limit; ``MalformedFileError`` for an unreadable
    ledger.  A missing ledger is created from ``seed`` (the submitter's requests already
    queued); if a concurrent first submission creates it first, that one is charged.
    """
    path = ledger_path(key)
    token = secrets.token_hex(8)

    def charge(current: Ledger) -> Ledger:
        return admit(
            current, request_ids, limit=limit, period_s=period_s, now=now, submitter=label, token=token
        )

    def transform(data: bytes) -> bytes:
        return charge(Ledger.from_json(data, path)).to_json()

    message = f"Reserve {len(request_ids)} for {key}"
    try:
        storage.update(path, transform, message=message)
        return token
    except NotFoundError:
        pass
    try:
        storage.create(path, charge(Ledger(submitter=key, entries=list(seed))).to_json(), message=message)
    except AlreadyExistsError:
        storage.update(path, transform, message=message)
    return token


def unreserve(storage: Storage, key: str, request_ids: Sequence[str], token: str) -> None:
    """Undo the reservation ``token`` for ``request_ids`` (they were not written after all)."""
    path = ledger_path(key)

    def transform(data: bytes) -> bytes:
        return release(Ledger.from_json(data, path), request_ids, token).to_json()

    storage.update(path, transform, message=f"Release {len(request_ids)} for {key}")


def admit(
    ledger: Ledger,
    request_ids: Sequence[str],
    *,
    limit: int,
    period_s: float,
    now: datetime,
    submitter: str,
    token: str,
) -> Ledger:
    """``ledger`` with ``request_ids`` reserved at ``now`` under ``token``, or ``SubmissionRejected``
    if over the limit.

    Entries older than the period are dropped; entries stamped later than ``now`` (another
    server's clock runs ahead) still count, so a clock skew cannot lift the limit.
    """
    window = timedelta(seconds=period_s)
    recent = sorted((e for e in ledger.entries if e.at > now - window), key=lambda e: e.at)
    adding = len(request_ids)
    if len(recent) + adding > limit:
        raise SubmissionRejected(_over_limit(recent, adding, limit, window, submitter))
    stamp = isoformat(now)
    added = [LedgerEntry(time=stamp, request=rid, token=token) for rid in request_ids]
    return ledger.model_copy(update={"entries": [*recent, *added]})


def release(ledger: Ledger, request_ids: Iterable[str], token: str) -> Ledger:
    """``ledger`` without the reservations ``token`` made for ``request_ids`` (they were not written)."""
    ids = set(request_ids)
    kept = [e for e in ledger.entries if not (e.token == token and e.request in ids)]
    return ledger.model_copy(update={"entries": kept})


def _over_limit(recent: list[LedgerEntry], adding: int, limit: int, window: timedelta, submitter: str) -> str:
    period = duration_text(window.total_seconds())
    if adding > limit:
        return (
            f"rate limit: this submission asks for {adding} evaluations but the limit is {limit} "
            f"per {period}; choose fewer few-shot settings."
        )
    # The moment enough of the recent submissions have left the window.
    retry_at = recent[len(recent) + adding - limit - 1].at + window
    return (
        f"rate limit: {submitter} has submitted {len(recent)} request(s) in the last {period}; "
        f"the limit is {limit} per {period}. Try again after {isoformat(retry_at)}."
    )


def duration_text(seconds: float) -> str:
    """``604800`` → ``7 days``; the largest whole unit, else seconds."""
    whole = int(seconds)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if whole >= size and whole % size == 0:
            count = whole // size
            return f"{count} {unit}" + ("s" if count != 1 else "")
    return f"{whole} seconds"
