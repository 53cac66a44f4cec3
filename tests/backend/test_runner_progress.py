"""backend.runner.ProgressTracker: progress, ETA and per-task attribution from the model's cache hook."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import pytest

from backend.progress import ProgressTracker
from backend.runner import (
    HarnessError,
    ModelRef,
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
    tracker = ProgressTracker(interval_s=5, clock=clock)
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
    assert progress == [
        "loglikelihood: 1/4 requests (25%), elapsed 0m05s, ETA (estimating); working on sa_p1 (1/1)",
        "loglikelihood: 3/4 requests (75%), elapsed 0m11s, ETA 0m03s; working on te_p1 (2/3)",
    ]


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


def test_log_likelihood_requests_count_alike_whatever_their_length(caplog: pytest.LogCaptureFixture) -> None:
    # Measured: lm-eval scores the choices of a context together and pads batches, so a long
    # request costs about what a short one does; weighting by length halved the time left.
    caplog.set_level(logging.INFO, logger="backend.runner")
    clock = Clock()
    tracker = ProgressTracker(interval_s=0, clock=clock)
    sizes = [900, 700, 500, 300, 100, 100, 100, 100]
    requests = [FakeInstance("te_p1", ("x" * size, " Sì")) for size in sizes]
    tracker.start_phase("loglikelihood", requests)
    for request in requests[:4]:
        clock.now += 3.0
        tracker.add_partial("loglikelihood", request.args, (-1.0, False))

    last = [r.getMessage() for r in caplog.records if "ETA" in r.getMessage()][-1]
    assert last.endswith("ETA 0m12s; working on te_p1 (4/8)")


def test_a_request_costs_what_it_reads_and_its_decoding_steps() -> None:
    assert ProgressTracker.cost("generate_until", ("ctx", {"max_gen_toks": 64})) == (3, 64)
    assert ProgressTracker.cost("generate_until", ("ctx", {"until": ["</s>"]})) == (3, 256)
    assert ProgressTracker.cost("loglikelihood", ("abc", " d")) == (0, 1)


def test_the_eta_of_generations_learns_prefill_and_decoding(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="backend.runner")
    clock = Clock()
    tracker = ProgressTracker(interval_s=0, clock=clock)
    # Long articles first (summaries), then short contexts with a smaller cap.
    shapes = [(3000, 128), (2800, 128), (2500, 128), (2200, 128), (400, 32), (300, 32), (200, 32), (100, 32)]
    cost = [0.002 * size + 0.05 * steps for size, steps in shapes]
    requests = [
        FakeInstance("sum_p1", ("x" * size, {"max_gen_toks": steps, "until": ["</s>"]}))
        for size, steps in shapes
    ]
    tracker.start_phase("generate_until", requests)
    for request, seconds in zip(requests[:5], cost, strict=False):
        clock.now += seconds
        tracker.add_partial("generate_until", request.args, "summary")

    last = [r.getMessage() for r in caplog.records if "ETA" in r.getMessage()][-1]
    eta = re.search(r"ETA 0m(\d\d)s", last)
    assert eta is not None, last
    assert abs(int(eta[1]) - sum(cost[5:])) <= 1  # 6 s left


def test_no_eta_is_guessed_from_the_first_requests_of_a_phase(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="backend.runner")
    clock = Clock()
    tracker = ProgressTracker(interval_s=0, clock=clock)
    requests = [FakeInstance("te_p1", (f"context {i}", " Sì")) for i in range(100)]
    tracker.start_phase("loglikelihood", requests)
    clock.now = 30.0
    tracker.add_partial("loglikelihood", requests[0].args, (-1.0, False))
    assert "ETA (estimating)" in caplog.records[-1].getMessage()
