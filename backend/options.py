"""How a worker runs the harness: plain data, importable without torch or lm-eval.

:mod:`backend.runner` consumes these; the worker builds them from its command line
without importing the runner, so polling an empty queue needs no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from eval_queue.errors import EvalitaError

CPU_BATCH_SIZE = 4
#: The fast path (``backend.fastpath``): lm-eval's ``hf`` model with faster request handling.
FAST_BACKEND = "hf-fast"
#: ``hf`` stays the default everywhere: the fast path becomes the GPU default only once the
#: GPU benchmark (``bench/gpu/``) has shown it faster there and within the score targets.
BACKENDS = ("hf", FAST_BACKEND, "vllm")


class HarnessError(EvalitaError):
    """The harness could not run (model not loadable, task not loadable, bad option)."""


@dataclass(frozen=True)
class RunOptions:
    """How to run the harness; the same for every request a worker runs."""

    backend: str = "hf"
    device: str | None = None  # None: cuda when available, else cpu
    batch_size: str | int | None = None  # None: "auto" on GPU, CPU_BATCH_SIZE on CPU
    max_batch_size: int = 64
    dtype: str | None = None  # None: the request's precision on GPU, float32 on CPU
    # lm-eval's own bootstrap of its stderrs: off (no process pool); the project's intervals
    # come from the run's per-item file (leaderboard.core.uncertainty).
    bootstrap_iters: int = 0
    limit: int | float | None = None
    apply_chat_template: bool = False
    trust_remote_code: bool = False
    progress_interval_s: float = 30.0
    # Cap on generated tokens (lm-eval ``gen_kwargs``); None keeps each task's own setting.
    # Only for smoke tests and development: a capped run is not comparable.
    max_gen_toks: int | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise HarnessError(f"unknown backend {self.backend!r}; valid: {', '.join(BACKENDS)}")
        if self.bootstrap_iters < 0:
            raise HarnessError("bootstrap_iters must be >= 0")
        if self.limit is not None and self.limit <= 0:
            raise HarnessError("limit must be positive")


@dataclass(frozen=True)
class ModelRef:
    """The model a request names: hub id (resolved through the HF cache offline) or a folder."""

    model_id: str
    revision: str = "main"
    precision: str = "bfloat16"
