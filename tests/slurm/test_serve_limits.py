"""The serve loop's own stops (``--until-empty``, ``--deadline-s``) with stand-in ``--once`` jobs.

The real jobs and store are exercised through ``backend slurm --cluster local`` in
``test_slurm.py``; here each job is a fake process the test controls.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from backend import serve
from backend.config import ExitCode, WorkerConfig
from backend.serve import ServeLimits


class FakeJob:
    """A ``--once`` process: exits with ``code`` at once, or (``code`` None) when sent SIGTERM (3)."""

    def __init__(self, code: int | None) -> None:
        self.code = code
        self.signals: list[int] = []
        self._stopped = threading.Event()

    def wait(self) -> int:
        if self.code is None:
            assert self._stopped.wait(30), "the job was never stopped"
            return int(ExitCode.INTERRUPTED)
        return self.code

    def poll(self) -> int | None:
        return self.code if self.code is not None else (3 if self._stopped.is_set() else None)

    def send_signal(self, signum: int) -> None:
        self.signals.append(signum)
        self._stopped.set()


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[int | None], list[FakeJob]]]:
    """``codes`` the next jobs exit with (None: runs until stopped); ``started`` the jobs run."""
    codes: list[int | None] = []
    started: list[FakeJob] = []

    def popen(command: list[str]) -> FakeJob:
        assert "--once" in command
        job = FakeJob(codes.pop(0) if codes else ExitCode.OK)
        started.append(job)
        return job

    monkeypatch.setattr(serve.subprocess, "Popen", popen)
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield codes, started
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def _config() -> WorkerConfig:
    return WorkerConfig(worker_id="w1", poll_s=0.2)


def test_until_empty_stops_once_nothing_is_left_to_claim(jobs: tuple[list, list[FakeJob]]) -> None:
    _, started = jobs
    left = iter([True, True, False])

    code = serve.serve(_config(), [], ServeLimits(until_empty=True), lambda: next(left))

    assert code is ExitCode.OK
    assert len(started) == 2  # the queue was looked at before each job, and the third time it was empty


def test_until_empty_stops_when_the_data_source_lacks_files(jobs: tuple[list, list[FakeJob]]) -> None:
    codes, started = jobs
    codes.append(ExitCode.DATA_UNAVAILABLE)

    assert (
        serve.serve(_config(), [], ServeLimits(until_empty=True), lambda: True) is ExitCode.DATA_UNAVAILABLE
    )
    assert len(started) == 1


def test_at_the_deadline_the_running_job_is_told_to_hand_its_request_back(
    jobs: tuple[list, list[FakeJob]],
) -> None:
    codes, started = jobs
    codes.append(None)  # runs until stopped

    began = time.monotonic()
    code = serve.serve(_config(), [], ServeLimits(deadline_s=0.5))

    assert code is ExitCode.OK
    assert [job.signals for job in started] == [[signal.SIGTERM]]
    assert 0.5 <= time.monotonic() - began < 20


def test_a_deadline_passed_before_the_first_poll_still_ends_serving(jobs: tuple[list, list[FakeJob]]) -> None:
    _, started = jobs

    code = serve.serve(_config(), [], ServeLimits(deadline_s=1e-6))

    assert code is ExitCode.OK
    assert len(started) <= 1  # the first poll may or may not have started a job: serving ends either way


def test_after_a_request_the_next_job_runs_at_once_while_the_queue_has_work(
    jobs: tuple[list, list[FakeJob]],
) -> None:
    _, started = jobs
    answers = iter([True, False])

    def has_work() -> bool:
        answer = next(answers)
        if not answer:  # the queue is empty: stop serving here (a plain worker would wait a poll)
            os.kill(os.getpid(), signal.SIGTERM)
        return answer

    began = time.monotonic()
    code = serve.serve(WorkerConfig(worker_id="w1", poll_s=30), [], ServeLimits(), has_work)

    assert code is ExitCode.OK
    assert len(started) == 2
    assert time.monotonic() - began < 15  # not a 30 s poll interval between the two
