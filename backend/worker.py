"""The evaluation worker: claim a request, run the suite, publish, record the outcome.

``run_once`` is one job: claim the next request (fair order, compare-and-swap, so
several workers on one queue never run the same request), renew its lease from a
heartbeat thread while the harness runs, then

* publish the per-sample details and the results file and mark it FINISHED, or
* mark it FAILED with a readable reason (what failed, where) and a short log tail, or
* on SIGTERM/SIGINT hand it back to PENDING (``release``), or
* if the heartbeat finds the lease lost (expired and re-claimed, or cancelled), stop
  and publish nothing, or
* if the store cannot be reached to claim, fail or release (hub outage, lock timeout),
  give up this round (``STORE_UNAVAILABLE``); a request left RUNNING is reaped when
  its lease expires.

``serve`` polls on an APScheduler interval and runs each job as a fresh
``python -m backend --once`` process, one at a time: a model's memory (GPU included)
is returned to the system between requests, and a crash takes down one job only.
It stops for good only on a usage error (exit 2); an unreachable store (exit 4) is
logged and polled again at the next interval.

Exit codes (:class:`ExitCode`): 0 done or nothing to do; 1 evaluation failed or lease
lost; 2 bad usage/configuration; 3 interrupted (request handed back to PENDING);
4 the store was unavailable (transient: retry later).

Only :func:`_evaluate` imports the harness (``backend.runner``), lazily: polling an
empty queue, ``--help`` and the tests of this module need neither torch nor lm-eval.
"""

from __future__ import annotations

import argparse
import collections
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

from backend.options import BACKENDS, RunOptions
from eval_queue.errors import EvalitaError, LeaseLostError, StorageError
from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest
from eval_queue.settings import Settings
from eval_queue.storage import Stores, open_stores
from leaderboard.schema import ResultsFile, RunInfo, results_file_path

log = logging.getLogger(__name__)

DATA_ENV = "EVALITA_EVAL_DATA"
DEFAULT_LEASE_S = 900.0
DEFAULT_POLL_S = 60.0
LOG_TAIL_LINES = 30


class ExitCode(IntEnum):
    """Exit status of ``python -m backend``."""

    OK = 0  # the request FINISHED, or there was nothing to do (serve: stopped cleanly)
    FAILED = 1  # the evaluation failed: the request is FAILED with a reason (or its lease was lost)
    USAGE = 2  # bad usage or configuration: nothing was claimed
    INTERRUPTED = 3  # SIGTERM/SIGINT: the request was handed back to PENDING
    STORE_UNAVAILABLE = 4  # the store could not be reached (hub outage, lock timeout): retry later


class Outcome(IntEnum):
    NOTHING = 0
    FINISHED = 1
    FAILED = 2
    RELEASED = 3
    LEASE_LOST = 4
    STORE_UNAVAILABLE = 5

    @property
    def exit_code(self) -> ExitCode:
        match self:
            case Outcome.NOTHING | Outcome.FINISHED:
                return ExitCode.OK
            case Outcome.FAILED | Outcome.LEASE_LOST:
                return ExitCode.FAILED
            case Outcome.RELEASED:
                return ExitCode.INTERRUPTED
            case Outcome.STORE_UNAVAILABLE:
                return ExitCode.STORE_UNAVAILABLE
            case _:
                raise AssertionError(self)


@dataclass(frozen=True)
class WorkerConfig:
    worker_id: str
    data: str = "sample"
    lease_s: float = DEFAULT_LEASE_S
    poll_s: float = DEFAULT_POLL_S
    harness: RunOptions = field(default_factory=RunOptions)

    @property
    def heartbeat_s(self) -> float:
        return max(self.lease_s / 3.0, 0.5)


@dataclass
class Evaluation:
    """What a successful evaluation hands to the publisher."""

    results: ResultsFile
    results_path: str
    details: dict[str, bytes]


Evaluator = Callable[[EvalRequest, WorkerConfig], Evaluation]


class StageError(EvalitaError):
    """An error tagged with the stage of the job where it happened."""

    def __init__(self, stage: str, cause: BaseException) -> None:
        super().__init__(f"{stage}: {type(cause).__name__}: {cause}")
        self.stage = stage
        self.cause = cause


class WorkerInterrupted(BaseException):  # like KeyboardInterrupt: not an error
    """Raised in the main thread by SIGTERM/SIGINT so that the run unwinds and releases."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _LeaseLostSignal(BaseException):  # control flow: `except Exception` must not catch it
    """Raised in the main thread when the heartbeat thread finds the lease lost."""


# --------------------------------------------------------------------------- log tail


class LogTail(logging.Handler):
    """Keeps the last lines logged, for the FAILED request's ``error`` field."""

    def __init__(self, lines: int = LOG_TAIL_LINES) -> None:
        super().__init__(level=logging.INFO)
        self.lines: collections.deque[str] = collections.deque(maxlen=lines)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:  # a broken log call must not break the worker
            text = str(record.msg)
        self.lines.extend(line[:300] for line in text.splitlines()[:5])

    def text(self) -> str:
        return "\n".join(self.lines)


@contextmanager
def _captured_log() -> Iterator[LogTail]:
    tail = LogTail()
    root = logging.getLogger()
    root.addHandler(tail)
    try:
        yield tail
    finally:
        root.removeHandler(tail)


def failure_reason(exc: BaseException, tail: str) -> str:
    """A readable reason: what failed and where, then the innermost frames and the log tail."""
    stage = exc.stage if isinstance(exc, StageError) else "worker"
    cause = exc.cause if isinstance(exc, StageError) else exc
    frames = traceback.extract_tb(cause.__traceback__)
    where = (
        f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    )
    lines = [f"{stage} failed: {type(cause).__name__}: {cause}{where}"]
    chain = cause.__cause__ or cause.__context__
    if chain is not None:
        lines.append(f"caused by {type(chain).__name__}: {chain}")
    if tail:
        lines += ["--- log tail ---", tail]
    return "\n".join(lines)[:6000]


# --------------------------------------------------------------------------- heartbeat


class Heartbeat:
    """Renews the lease every ``heartbeat_s`` in a thread, from the claim until the request is
    finished (publishing included); on loss, interrupts the main thread (while it evaluates).

    Transient errors (any :class:`EvalitaError`) are logged and retried at the next beat;
    unexpected exceptions are logged with their traceback and retried too.
    """

    def __init__(
        self, queue: RequestQueue, request_id: str, config: WorkerConfig, *, interrupt_main: bool
    ) -> None:
        self._queue = queue
        self._request_id = request_id
        self._config = config
        self._interrupt = interrupt_main
        self._stop = threading.Event()
        self.lost: LeaseLostError | None = None
        self._thread = threading.Thread(target=self._run, name="lease-heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self._config.heartbeat_s):
            try:
                self._queue.renew(self._request_id, self._config.worker_id, self._config.lease_s)
                log.debug("lease of %s renewed", self._request_id)
            except LeaseLostError as exc:
                if self._stop.is_set():  # raced with finish/fail/release: the job is over anyway
                    return
                self.lost = exc
                log.error("lease lost on %s: %s; stopping", self._request_id, exc)
                if self._interrupt:
                    os.kill(os.getpid(), signal.SIGUSR1)
                return
            except EvalitaError as exc:  # transient: keep trying while the lease may still be valid
                log.warning("could not renew the lease of %s: %s", self._request_id, exc)
            except Exception:  # a bug: say so loudly, but keep the lease alive if the next try works
                log.exception("unexpected error renewing the lease of %s", self._request_id)


class _SignalGate:
    """Turns SIGTERM/SIGINT (and the heartbeat's SIGUSR1) into exceptions in the main thread.

    Armed while the evaluation runs; disarmed once it is over (publishing, failing,
    releasing must not be cut short), when a signal only records that a stop was asked.
    """

    def __init__(self) -> None:
        self.armed = False
        self.pending: int | None = None
        self._owner_pid = os.getpid()

    def interrupted(self, signum: int, _frame: Any) -> None:
        if os.getpid() != self._owner_pid:
            # A process forked by the harness (lm-eval's bootstrap pool) inherited this
            # handler; its parent stops it with SIGTERM, which must simply end it.
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if not self.armed:
            self.pending = self.pending or signum
            log.warning("%s received: finishing the current step first", signal.Signals(signum).name)
            return
        self.armed = False
        raise WorkerInterrupted(signum)

    def lease_lost(self, _signum: int, _frame: Any) -> None:
        if self.armed:
            self.armed = False
            raise _LeaseLostSignal()


@contextmanager
def _signal_gate() -> Iterator[_SignalGate | None]:
    """Install a :class:`_SignalGate` (main thread only; elsewhere signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    gate = _SignalGate()
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1)}
    signal.signal(signal.SIGTERM, gate.interrupted)
    signal.signal(signal.SIGINT, gate.interrupted)
    signal.signal(signal.SIGUSR1, gate.lease_lost)
    try:
        yield gate
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _disarm(gate: _SignalGate | None) -> None:
    if gate is not None:
        gate.armed = False


# --------------------------------------------------------------------------- one job


def run_once(
    stores: Stores, queue: RequestQueue, config: WorkerConfig, evaluate: Evaluator | None = None
) -> Outcome:
    """Claim and run at most one request; see the module docstring for the outcomes."""
    evaluate = evaluate or _evaluate
    try:
        request = queue.claim_next(config.worker_id, config.lease_s)
    except StorageError as exc:
        log.error("could not claim: the store is unavailable: %s", exc)
        return Outcome.STORE_UNAVAILABLE
    if request is None:
        log.info("nothing to do: no PENDING request")
        return Outcome.NOTHING
    rid = request.request_id
    log.info(
        "claimed %s (%s@%s, %s, %d-shot)",
        rid,
        request.model,
        request.revision,
        request.precision,
        request.num_fewshot,
    )
    with _captured_log() as tail, _signal_gate() as gate:
        heartbeat = Heartbeat(queue, rid, config, interrupt_main=gate is not None).start()
        try:
            if gate is not None:
                gate.armed = True
            evaluation = evaluate(request, config)
            _disarm(gate)
            if heartbeat.lost:
                raise _LeaseLostSignal()
            # The heartbeat keeps renewing while publishing: a slow upload must not lose the lease.
            _publish(stores, queue, request, config, evaluation)
            heartbeat.stop()
        except _LeaseLostSignal:
            _disarm(gate)
            heartbeat.stop()
            log.error("%s: lease lost; nothing published", rid)
            return Outcome.LEASE_LOST
        except WorkerInterrupted as stop:
            _disarm(gate)
            heartbeat.stop()
            log.warning("%s: interrupted by %s; handing the request back", rid, stop)
            try:
                queue.release(rid, config.worker_id, f"worker {config.worker_id} stopped by {stop}")
            except LeaseLostError as exc:
                log.error("could not release %s: %s", rid, exc)
            except StorageError as exc:
                log.error("could not release %s (it stays RUNNING until its lease expires): %s", rid, exc)
                return Outcome.STORE_UNAVAILABLE
            return Outcome.RELEASED
        except Exception as exc:  # the outermost handler of a job: record a readable reason
            _disarm(gate)
            heartbeat.stop()
            reason = failure_reason(exc, tail.text())
            log.exception("%s failed", rid)
            try:
                queue.fail(rid, config.worker_id, reason)
            except LeaseLostError as lost:
                log.error("could not mark %s FAILED: %s", rid, lost)
                return Outcome.LEASE_LOST
            except StorageError as unavailable:
                log.error(
                    "could not mark %s FAILED (it stays RUNNING until its lease expires): %s",
                    rid,
                    unavailable,
                )
                return Outcome.STORE_UNAVAILABLE
            return Outcome.FAILED
        finally:
            heartbeat.stop()  # idempotent: every path above has stopped it already
        if gate is not None and gate.pending:
            log.warning("stop requested while publishing: %s was finished first", rid)
    log.info("%s FINISHED: %s", rid, evaluation.results_path)
    return Outcome.FINISHED


def _publish(
    stores: Stores, queue: RequestQueue, request: EvalRequest, config: WorkerConfig, evaluation: Evaluation
) -> None:
    rid = request.request_id
    try:
        # Still ours?  If not, stop here: nothing is published (LEASE_LOST, not FAILED).
        queue.renew(rid, config.worker_id, config.lease_s)
    except LeaseLostError as exc:
        log.error("%s: %s", rid, exc)
        raise _LeaseLostSignal() from exc
    try:
        for path, data in evaluation.details.items():
            stores.details.write(path, data, message=f"Details of {rid}")
        stores.results.write(
            evaluation.results_path, evaluation.results.to_json(), message=f"Results of {rid}"
        )
    except StorageError as exc:
        raise StageError("publishing the results", exc) from exc
    # A LeaseLostError here (lost while uploading) reaches run_once's failure handler, whose
    # ``fail`` is refused too: the outcome is LEASE_LOST and no request points at the upload.
    queue.finish(rid, config.worker_id, evaluation.results_path)


def _evaluate(request: EvalRequest, config: WorkerConfig) -> Evaluation:
    """The real evaluation: data override → harness → results file + details."""
    from backend import convert
    from backend.data import prepare_include_path

    try:
        _install_offline_metrics()
        with tempfile.TemporaryDirectory(prefix="evalita-run-") as workdir:
            override = prepare_include_path(config.data, Path(workdir))
            output = _run_harness(request, config, override.include_path)
    except StageError:
        raise
    except EvalitaError as exc:
        raise StageError("preparing the run", exc) from exc
    record = output.record
    try:
        folder, details = convert.details_files(request, record.finished_at, output.samples)
        run = RunInfo(
            num_fewshot=request.num_fewshot,
            data=override.label,
            limit=record.limit,
            harness=record.harness,
            backend=record.backend,
            model_args=record.model_args,
            batch_size=record.batch_size,
            chat_template=record.chat_template,
            started_at=record.started_at,
            finished_at=record.finished_at,
            duration_s=record.duration_s,
            hardware=record.hardware,
            request_id=request.request_id,
            details_path=folder,
            worker_id=config.worker_id,
            device=record.device,
            dtype=record.dtype,
            batch_size_used=record.batch_size_used,
            bootstrap_iters=record.bootstrap_iters,
            max_gen_toks=record.max_gen_toks,
            seeds=record.seeds,
            versions=record.versions,
            model_load_s=record.model_load_s,
        )
        results = convert.build_results_file(
            request, run, output.results, output.n_samples, architecture=record.architecture
        )
    except EvalitaError as exc:
        raise StageError("converting the harness output", exc) from exc
    return Evaluation(results, results_file_path(results, record.finished_at), details)


def _install_offline_metrics() -> None:
    try:
        from backend.metrics import install_offline_rouge
    except ImportError:  # the data layer's offline ROUGE is not available: SUM needs the hub
        log.warning("backend.metrics.install_offline_rouge is unavailable; ROUGE will need the hub")
        return
    install_offline_rouge()


def _run_harness(request: EvalRequest, config: WorkerConfig, include_path: Path | None) -> Any:
    try:
        from backend import runner
    except ImportError as exc:
        raise StageError("importing the harness (install requirements-backend.txt)", exc) from exc
    from backend.convert import all_harness_tasks

    model = runner.ModelRef(request.model, request.revision, request.precision.value)
    try:
        return runner.run_harness(
            model, all_harness_tasks(), request.num_fewshot, config.harness, include_path=include_path
        )
    except Exception as exc:
        raise StageError("running the harness", exc) from exc


# --------------------------------------------------------------------------- serve


def serve(config: WorkerConfig, once_argv: Sequence[str]) -> ExitCode:
    """Poll on an APScheduler interval; each job is a fresh ``python -m backend --once`` process."""
    from apscheduler.schedulers.blocking import BlockingScheduler

    scheduler = BlockingScheduler()
    state: dict[str, Any] = {"child": None, "stopping": False, "usage_error": False}
    lock = threading.Lock()

    def job() -> None:
        with lock:
            if state["stopping"]:
                return
            cmd = [sys.executable, "-m", "backend", "--once", *once_argv]
            child = subprocess.Popen(cmd)
            state["child"] = child
        code = child.wait()
        with lock:
            state["child"] = None
        log.info("job exited with %d (%s)", code, _describe_exit(code))
        if code == ExitCode.USAGE:
            state["usage_error"] = True
            _stop(scheduler)
        elif code == ExitCode.STORE_UNAVAILABLE:
            log.warning("the store is unavailable: polling again in %.0fs", config.poll_s)
        elif code in (ExitCode.OK, ExitCode.FAILED) and not state["stopping"]:
            # There may be more work: poll again right away instead of waiting an interval.
            scheduler.modify_job("poll", next_run_time=_now())

    def stop(signum: int, _frame: Any) -> None:
        log.info("received %s: stopping (a running job hands its request back)", signal.Signals(signum).name)
        with lock:
            state["stopping"] = True
            child = state["child"]
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)
        _stop(scheduler)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    scheduler.add_job(
        job,
        "interval",
        seconds=config.poll_s,
        id="poll",
        max_instances=1,
        coalesce=True,
        next_run_time=_now(),
    )
    log.info(
        "worker %s serving: polling every %.0fs (data: %s)", config.worker_id, config.poll_s, config.data
    )
    scheduler.start()
    # The job thread may still wait for a child that is handing its request back.
    deadline = time.monotonic() + 120
    while state["child"] is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    return ExitCode.USAGE if state["usage_error"] else ExitCode.OK


def _stop(scheduler: Any) -> None:
    try:
        scheduler.shutdown(wait=False)
    except Exception as exc:  # SchedulerNotRunningError: already stopping
        log.debug("scheduler shutdown: %s", exc)


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def _describe_exit(code: int) -> str:
    try:
        return ExitCode(code).name
    except ValueError:
        return f"killed by {signal.Signals(-code).name}" if code < 0 else "unexpected"


# --------------------------------------------------------------------------- CLI


def _positive_number(text: str) -> int | float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return int(value) if value.is_integer() and "." not in text else value


def _batch_size(text: str) -> str | int:
    if text.startswith("auto"):
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            "batch size must be 'auto', 'auto:N' or a positive integer"
        ) from None
    if value <= 0:
        raise argparse.ArgumentTypeError("batch size must be positive")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m backend",
        description="Evalita-LLM evaluation worker: claims requests from the queue and runs them through lm-eval.",
        epilog="Exit codes: 0 done or nothing to do; 1 evaluation failed (request FAILED) or lease lost; "
        "2 bad usage/configuration; 3 interrupted (request handed back to PENDING); "
        "4 store unavailable (hub outage, lock timeout: serve keeps polling).  "
        "Other commands: install-embedded, prefetch MODEL...",
    )
    parser.add_argument("--once", action="store_true", help="claim and run at most one request, then exit")
    parser.add_argument(
        "--data",
        default=None,
        help=f"hub | sample | local:<dir> (default: ${DATA_ENV}, else sample)",
    )
    parser.add_argument(
        "--limit", type=_positive_number, default=None, help="documents per task (not comparable runs)"
    )
    parser.add_argument(
        "--bootstrap-iters", type=int, default=1000, help="bootstrap draws for stderr (0: none)"
    )
    parser.add_argument(
        "--batch-size",
        type=_batch_size,
        default=None,
        help="auto | auto:N | N (default: auto on GPU, 4 on CPU)",
    )
    parser.add_argument("--device", default=None, help="cpu | cuda | cuda:N (default: cuda if available)")
    parser.add_argument("--backend", choices=BACKENDS, default="hf", help="harness model backend")
    parser.add_argument(
        "--apply-chat-template", action="store_true", help="render prompts with the model's chat template"
    )
    parser.add_argument(
        "--max-gen-toks",
        type=int,
        default=None,
        help="cap generated tokens (smoke tests only; not comparable)",
    )
    parser.add_argument("--worker-id", default=f"{socket.gethostname()}-{os.getpid()}")
    parser.add_argument(
        "--lease-s", type=float, default=DEFAULT_LEASE_S, help="lease length; renewed every third of it"
    )
    parser.add_argument("--poll-s", type=float, default=DEFAULT_POLL_S, help="serve: seconds between polls")
    parser.add_argument("--progress-s", type=float, default=30.0, help="seconds between progress lines")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def config_from_args(args: argparse.Namespace, settings: Settings) -> WorkerConfig:
    from backend.data import DataSource

    data = args.data or settings.eval_data
    DataSource.parse(data)  # DataSourceError (exit 2) for a bad --data
    if args.bootstrap_iters < 0:
        raise EvalitaError("--bootstrap-iters must be >= 0")
    if args.max_gen_toks is not None and args.max_gen_toks <= 0:
        raise EvalitaError("--max-gen-toks must be positive")
    if args.max_gen_toks is not None and args.limit is None:
        # A capped run without --limit would be labelled comparable with full runs.
        raise EvalitaError("--max-gen-toks is for smoke tests: use it together with --limit")
    if args.lease_s <= 0 or args.poll_s <= 0:
        raise EvalitaError("--lease-s and --poll-s must be positive")
    return WorkerConfig(
        worker_id=args.worker_id,
        data=data,
        lease_s=args.lease_s,
        poll_s=args.poll_s,
        harness=RunOptions(
            backend=args.backend,
            device=args.device,
            batch_size=args.batch_size,
            bootstrap_iters=args.bootstrap_iters,
            limit=args.limit,
            apply_chat_template=args.apply_chat_template,
            trust_remote_code=settings.allow_remote_code,
            progress_interval_s=args.progress_s,
            max_gen_toks=args.max_gen_toks,
        ),
    )


def main(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%Y-%m-%dT%H:%M:%S",
    )
    settings = Settings.from_env()
    config = config_from_args(args, settings)
    if not args.once:
        once_argv = [a for a in argv if a != "--once"]
        if not any(a == "--worker-id" or a.startswith("--worker-id=") for a in argv):
            once_argv += ["--worker-id", config.worker_id]
        return int(serve(config, once_argv))
    stores = open_stores(settings)
    queue = RequestQueue(stores.requests, secrets=[settings.hf_token])
    outcome = run_once(stores, queue, config)
    return int(outcome.exit_code)
