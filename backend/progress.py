"""Harness progress: requests done per phase and task, and an honest ETA.  Pure (no torch, no lm-eval).

lm-eval hands all requests of one type (log-likelihood, then generation) to the model in
one call and reorders them by length, longest first; the runner replaces the model's
``cache_hook`` (called once per finished request) by a :class:`ProgressTracker`, which maps
each request back to its task, tells the worker's stall watchdog, and logs every
``interval_s`` the phase, requests done, elapsed time and an ETA (:class:`EtaModel`).
"""

from __future__ import annotations

import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger("backend.runner")  # the progress lines are the runner's


def fmt_s(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


class EtaModel:
    """Seconds left in a phase, from the time its finished requests took.

    Each request has a *size* and *steps* (:meth:`ProgressTracker.cost`).  Time left is
    proportional to the steps left; for generations, once three windows between progress
    lines are in, ``t ≈ a·size + b·steps`` is fitted by least squares instead.  Measured on
    SmolLM2 (2 shared CPU cores), sample data: log-likelihood requests cost about the same
    each whatever their length (lm-eval computes the choices of one context together and pads
    batches), so steps = requests is their best estimate (within 4–40 %, where weighting by
    length said half the time left); generations run the longest contexts first and decode
    ``max_gen_toks`` steps each, so a count by requests said 1 h where 27 minutes were left.
    """

    MIN_WINDOWS = 3

    def __init__(self) -> None:
        self._sums = [0.0] * 5  # Σs², Σsk, Σk², Σst, Σkt
        self._windows = 0

    @property
    def windows(self) -> int:
        return self._windows

    def add_window(self, seconds: float, size: float, steps: float) -> None:
        t = seconds
        for index, value in enumerate((size * size, size * steps, steps * steps, size * t, steps * t)):
            self._sums[index] += value
        self._windows += 1

    def seconds_left(self, size_left: float, steps_left: float, elapsed: float, steps_done: float) -> float:
        ss, sk, kk, st, kt = self._sums
        det = ss * kk - sk * sk
        if self._windows >= self.MIN_WINDOWS and ss > 0 and det > 1e-9 * ss * kk:
            a, b = (st * kk - kt * sk) / det, (kt * ss - st * sk) / det
            if a >= 0 and b >= 0:
                return a * size_left + b * steps_left
        return elapsed * steps_left / steps_done


class ProgressTracker:
    """Stands in for an lm-eval model's ``cache_hook``: counts finished requests per task.

    lm-eval models call ``cache_hook.add_partial(kind, key, result)`` once per request,
    whatever order they process them in; ``key`` is ``(context, continuation)`` for a
    log-likelihood and ``(context, gen_kwargs)`` for a generation.
    """

    def __init__(
        self,
        interval_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        on_progress: Callable[[str], None] | None = None,
    ) -> None:
        self.interval_s = interval_s
        self._clock = clock
        # Told of every finished request (the worker's stall watchdog): where the run is.
        self._on_progress = on_progress
        self.phase = ""
        self.total = 0
        self.done = 0
        # request key → [(task, size, steps)] of the requests not yet done (several may share a key).
        self._owner: dict[Any, list[tuple[str, float, float]]] = {}
        self._total_cost = (0.0, 0.0)  # size, steps of the phase (see :meth:`cost`)
        self._done_cost = (0.0, 0.0)
        self._task_total: Counter[str] = Counter()
        self._task_done: Counter[str] = Counter()
        self.task_seconds: defaultdict[str, float] = defaultdict(float)
        self.task_requests: Counter[str] = Counter()
        self.phase_seconds: dict[str, float] = {}
        self.phase_requests: dict[str, int] = {}
        self._phase_start = 0.0
        #: When the first model phase started and the last one ended (the clock's time; None
        #: before): the runner splits setup and post-processing from the model's calls by them.
        self.first_phase_start: float | None = None
        self.last_phase_end: float | None = None
        self._last_event = 0.0
        self._last_log = 0.0
        self._eta = EtaModel()
        self._logged = (0.0, 0.0, 0.0)  # time, size and steps done at the last progress line
        self._current = ""

    @staticmethod
    def _key(kind: str, args: tuple[Any, ...]) -> Any:
        if kind == "generate_until":
            return (kind, args[0])
        return (kind, tuple(args))

    @staticmethod
    def cost(kind: str, args: tuple[Any, ...]) -> tuple[float, float]:
        """``(size, steps)`` of a request, for the ETA (:class:`EtaModel`).

        A generation: the characters of its context, and its decoding steps, bounded by its
        ``max_gen_toks`` (lm-eval's default 256).  A log-likelihood: one step, no size (they
        cost about the same each: see :class:`EtaModel`).
        """
        if kind == "generate_until":
            options = args[1] if len(args) > 1 and isinstance(args[1], dict) else {}
            return float(len(str(args[0]))), float(options.get("max_gen_toks") or 256)
        return 0.0, 1.0

    def start_phase(self, kind: str, requests: Sequence[Any]) -> None:
        """Called with the Instances of one request type before the model sees them."""
        self._finish_phase()
        self.phase, self.total, self.done = kind, len(requests), 0
        self._owner = {}
        self._task_total = Counter()
        self._task_done = Counter()
        size_total = steps_total = 0.0
        for request in requests:
            name = getattr(request, "task_name", None) or "?"
            size, steps = self.cost(kind, request.args)
            self._owner.setdefault(self._key(kind, request.args), []).append((name, size, steps))
            size_total += size
            steps_total += steps
            self._task_total[name] += 1
        self._total_cost, self._done_cost = (size_total, steps_total), (0.0, 0.0)
        now = self._clock()
        self._phase_start = self._last_event = self._last_log = now
        if self.first_phase_start is None:
            self.first_phase_start = now
        self._eta = EtaModel()
        self._logged = (now, 0.0, 0.0)
        if self._on_progress is not None:
            self._on_progress(f"{kind}: starting {self.total} requests")
        log.info("%s: %d requests from %d harness tasks", kind, self.total, len(self._task_total))
        log.debug(
            "%s requests per harness task: %s",
            kind,
            ", ".join(f"{name} {count}" for name, count in sorted(self._task_total.items())),
        )

    def add_partial(self, attr: str, req: Any, res: Any) -> None:
        del res
        if not self.phase:
            return
        key = (attr, req[0]) if attr == "generate_until" else (attr, tuple(req))
        owners = self._owner.get(key)
        name, size, steps = owners.pop() if owners else (self._current or "?", 0.0, 0.0)
        self._done_cost = (self._done_cost[0] + size, self._done_cost[1] + steps)
        now = self._clock()
        self.task_seconds[name] += now - self._last_event
        self.task_requests[name] += 1
        self._last_event = now
        self._current = name
        self.done += 1
        self._task_done[name] += 1
        if self._on_progress is not None:
            self._on_progress(f"{self.phase} {self.done}/{self.total} ({name})")
        if now - self._last_log >= self.interval_s:
            self._last_log = now
            self.log_progress()

    #: No ETA before this share of a phase's steps is done.
    ETA_AFTER = 0.05

    def log_progress(self) -> None:
        now = self._clock()
        elapsed = now - self._phase_start
        then, size_then, steps_then = self._logged
        size_done, steps_done = self._done_cost
        if now > then and steps_done > steps_then:
            self._eta.add_window(now - then, size_done - size_then, steps_done - steps_then)
        self._logged = (now, size_done, steps_done)
        size_left = max(self._total_cost[0] - size_done, 0.0)
        steps_left = max(self._total_cost[1] - steps_done, 0.0)
        eta = float("nan")
        # Not from the first batch alone (it also warms the model up), nor from a sliver of the phase.
        if self._eta.windows >= 2 and steps_done >= self.ETA_AFTER * self._total_cost[1]:
            eta = self._eta.seconds_left(size_left, steps_left, elapsed, steps_done)
        name = self._current
        log.info(
            "%s: %d/%d requests (%.0f%%), elapsed %s, ETA %s; working on %s (%d/%d)",
            self.phase,
            self.done,
            self.total,
            100.0 * self.done / max(self.total, 1),
            fmt_s(elapsed),
            fmt_s(eta) if eta == eta else "(estimating)",
            name,
            self._task_done[name],
            self._task_total[name],
        )

    def heartbeat(self) -> None:
        """Decoding goes on inside one long batch (no request finished yet): tell the stall watchdog."""
        if self._on_progress is not None and self.phase:
            self._on_progress(f"{self.phase} {self.done}/{self.total}: decoding a batch")

    def _finish_phase(self) -> None:
        if self.phase:
            self.last_phase_end = self._clock()
            elapsed = self.last_phase_end - self._phase_start
            self.phase_seconds[self.phase] = self.phase_seconds.get(self.phase, 0.0) + elapsed
            self.phase_requests[self.phase] = self.phase_requests.get(self.phase, 0) + self.total
            log.info("%s: %d/%d requests done in %s", self.phase, self.done, self.total, fmt_s(elapsed))
            if self._on_progress is not None:
                self._on_progress(f"{self.phase} done; then scoring (metrics, bootstrap stderr)")
            self.phase = ""

    def close(self) -> None:
        self._finish_phase()

    def summary(self) -> dict[str, Any]:
        return {
            "phase_seconds": dict(self.phase_seconds),
            "phase_requests": dict(self.phase_requests),
            "task_seconds": dict(self.task_seconds),
            "task_requests": dict(self.task_requests),
        }
