"""Bounded retries with backoff for store calls that failed for a reason that may pass.

A store can fail in two ways: for good (a refused token, a missing repo, a full disk:
trying again changes nothing) or for now (:func:`is_transient`: no answer, HTTP 5xx/429,
a compare-and-swap that kept losing races, a lock held too long).  The worker retries the
second kind a few times on the calls that carry a finished run — the renew before
publishing, each upload, the finish — so one blip does not cost a good run; then gives up
with the last error, and the caller hands the request back without counting an attempt.

Retrying is only safe for calls whose retry is harmless after a first try that was applied
but whose answer was lost: writes of the same bytes to the same path, and the queue's
changes, which accept their own earlier result (:mod:`eval_queue.queue`).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from eval_queue.errors import AlreadyExistsError, ConflictError, StorageError, TransientStorageError

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Tries of one store call (the first one included).
DEFAULT_ATTEMPTS = 5
#: First pause, and the most any pause may be (full jitter: a pause is uniform in [0, cap]).
DEFAULT_BASE_S = 1.0
DEFAULT_MAX_S = 30.0


def is_transient(exc: BaseException) -> bool:
    """Whether the same store call may succeed if tried again later.

    ``TransientStorageError`` (no answer, 5xx, 429, a timeout) and ``ConflictError`` (a
    compare-and-swap that spent its retry budget on concurrent commits, or a local lock
    held past its timeout), but not ``AlreadyExistsError``: that one is an answer.
    """
    if isinstance(exc, AlreadyExistsError):
        return False
    return isinstance(exc, TransientStorageError | ConflictError)


@dataclass(frozen=True)
class StoreRetry:
    """``attempts`` tries of a call, pausing ``uniform(0, min(max_s, base_s * 2**n))`` after the n-th.

    With the defaults and the default hub timeouts (10 s to connect, 60 s to read) one call
    gives up after at most about 5 × 70 s + 60 s of pauses; most outages of the Hub that the
    worker should ride out are shorter than a minute.
    """

    attempts: int = DEFAULT_ATTEMPTS
    base_s: float = DEFAULT_BASE_S
    max_s: float = DEFAULT_MAX_S
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")

    def pause(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_s, self.base_s * 2**attempt))

    def call(self, what: str, call: Callable[[], T], *, before_each: Callable[[], None] | None = None) -> T:
        """``call()``, tried again after a transient store error, at most ``attempts`` times in all.

        ``before_each`` runs before every try (the worker beats its liveness there).  Any
        other error propagates at once; after the last try the last transient error does.
        """
        for attempt in range(self.attempts):
            if before_each is not None:
                before_each()
            try:
                return call()
            except StorageError as exc:
                if not is_transient(exc) or attempt + 1 >= self.attempts:
                    raise
                pause = self.pause(attempt)
                logger.warning(
                    "%s: %s (try %d of %d); trying again in %.1fs",
                    what,
                    exc,
                    attempt + 1,
                    self.attempts,
                    pause,
                )
                self.sleep(pause)
        raise AssertionError("unreachable: the loop returns or raises")
