"""backend.runner.ProgressTracker: progress, ETA and per-task attribution from the model's cache hook."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pytest

from backend.runner import (
    HarnessError,
    ModelRef,
    ProgressTracker,
    RunOptions,
    TaskFailedError,
    _name_failures,
    build_model_args,
)


@dataclass
class FakeInstance:
    task_name: str
    args: tuple[Any, ...]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_counts_requests_per_task_and_logs_an_eta(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="backend.runner")
    clock = Clock()
    tracker = ProgressTracker(interval_s=10, clock=clock)
    requests = [FakeInstance("te_p1", (f"ctx{i}", " Sì")) for i in range(3)] + [
        FakeInstance("sa_p1", ("ctx", " No"))
    ]
    tracker.start_phase("loglikelihood", requests)

    for request, at in zip(reversed(requests), (5.0, 6.0, 11.0, 12.0), strict=True):  # any order
        clock.now = at
        tracker.add_partial("loglikelihood", request.args, (-1.0, False))
    tracker.close()

    summary = tracker.summary()
    assert summary["task_requests"] == {"te_p1": 3, "sa_p1": 1}
    assert summary["task_seconds"] == {"sa_p1": 5.0, "te_p1": 7.0}
    assert summary["phase_requests"] == {"loglikelihood": 4}
    progress = [r.getMessage() for r in caplog.records if "ETA" in r.getMessage()]
    assert progress == ["loglikelihood: 3/4 requests (75%), elapsed 0m11s, ETA 0m03s; working on te_p1 (2/3)"]


def test_generation_requests_are_matched_by_context() -> None:
    tracker = ProgressTracker(interval_s=1e9)
    tracker.start_phase("generate_until", [FakeInstance("ls_p1", ("Testo", {"until": ["</s>"]}))])
    tracker.add_partial("generate_until", ("Testo", {"until": ["</s>"], "max_gen_toks": 8}), "risposta")
    tracker.close()
    assert tracker.summary()["task_requests"] == {"ls_p1": 1}


def test_model_args_never_carry_a_token_and_vllm_disables_prefix_caching() -> None:
    model = ModelRef("org/name", "abc", "bfloat16")
    assert build_model_args(model, RunOptions(), "bfloat16") == (
        "pretrained=org/name,revision=abc,dtype=bfloat16,trust_remote_code=False"
    )
    assert "enable_prefix_caching=False" in build_model_args(model, RunOptions(backend="vllm"), "bfloat16")


def test_bad_options_are_rejected() -> None:
    with pytest.raises(HarnessError, match="unknown backend"):
        RunOptions(backend="tgi")
    with pytest.raises(HarnessError, match="limit"):
        RunOptions(limit=0)


def test_errors_raised_by_a_task_while_the_harness_runs_it_name_the_task() -> None:
    class Task:
        def build_all_requests(self, **kwargs: Any) -> None:
            return None

        def process_results(self, doc: dict[str, Any], results: list[str]) -> dict[str, float]:
            raise KeyError("entailment")

    task = Task()
    _name_failures("evalita-mp_te_prompt-1", task)

    task.build_all_requests(limit=1)
    with pytest.raises(
        TaskFailedError, match=r"task evalita-mp_te_prompt-1 failed while scoring an answer: KeyError"
    ):
        task.process_results({}, ["Sì"])
