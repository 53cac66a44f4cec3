"""How a worker runs the harness: plain data, importable without torch or lm-eval.

:mod:`backend.runner` consumes these; the worker builds them from its command line
without importing the runner, so polling an empty queue needs no torch.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection
from dataclasses import dataclass, fields
from typing import Any, Self

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
        if self.max_gen_toks is not None and self.max_gen_toks <= 0:
            raise HarnessError("max_gen_toks must be positive")

    @classmethod
    def from_args(cls, args: argparse.Namespace, **fixed: Any) -> Self:
        """The options a command line parsed with :func:`add_harness_arguments` asks for; ``fixed``
        sets the others (``trust_remote_code=…``) or overrides one (a bench's own bootstrap)."""
        given = {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}
        if given.get("max_gen_toks") is not None and given.get("limit") is None:
            # A capped run without --limit would be labelled comparable with full runs.
            raise HarnessError("--max-gen-toks is for smoke tests: use it together with --limit")
        return cls(**(given | fixed))


def positive_number(text: str) -> int | float:
    """argparse type: a positive int (``10``) or float (``0.5``, a share of the documents)."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return int(value) if value.is_integer() and "." not in text else value


def batch_size(text: str) -> str | int:
    """argparse type: ``auto``, ``auto:N`` or a positive integer."""
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


#: The harness flags a command line can offer (:func:`add_harness_arguments`), each read back
#: by :meth:`RunOptions.from_args` under its ``RunOptions`` field name.
HARNESS_FLAGS = (
    "--backend",
    "--device",
    "--batch-size",
    "--bootstrap-iters",
    "--limit",
    "--apply-chat-template",
    "--max-gen-toks",
)


def add_harness_arguments(
    parser: argparse.ArgumentParser,
    flags: Collection[str] = HARNESS_FLAGS,
    *,
    limit_help: str = "documents per task (not comparable runs)",
    bootstrap_iters: int = 0,
) -> None:
    """Add the harness flags ``flags`` to ``parser``: one definition (type, default, help) for the
    worker, a track's own command line and the benches."""
    if "--limit" in flags:
        parser.add_argument("--limit", type=positive_number, default=None, help=limit_help)
    if "--bootstrap-iters" in flags:
        parser.add_argument(
            "--bootstrap-iters",
            type=int,
            default=bootstrap_iters,
            help=f"lm-eval's own bootstrap draws for its stderrs (default {bootstrap_iters}; 0: off, no "
            "process pool; the project computes every interval from the run's per-item file)",
        )
    if "--batch-size" in flags:
        parser.add_argument(
            "--batch-size",
            type=batch_size,
            default=None,
            help="auto | auto:N | N (default: auto on GPU, 4 on CPU)",
        )
    if "--device" in flags:
        parser.add_argument("--device", default=None, help="cpu | cuda | cuda:N (default: cuda if available)")
    if "--backend" in flags:
        parser.add_argument("--backend", choices=BACKENDS, default="hf", help="harness model backend")
    if "--apply-chat-template" in flags:
        parser.add_argument(
            "--apply-chat-template", action="store_true", help="render prompts with the model's chat template"
        )
    if "--max-gen-toks" in flags:
        parser.add_argument(
            "--max-gen-toks",
            type=int,
            default=None,
            help="cap generated tokens (smoke tests only; not comparable)",
        )


@dataclass(frozen=True)
class ModelRef:
    """The model a request names: hub id (resolved through the HF cache offline) or a folder."""

    model_id: str
    revision: str = "main"
    precision: str = "bfloat16"


@dataclass(frozen=True)
class RecipeInclude:
    """How a run's recipe names its include folder, and the shell line that writes it.

    The worker's include folder is a temporary one (deleted after the run); the recipe names
    ``path`` instead and gives ``setup``, a command that writes the same folder there
    (e.g. a track's data override for ``--data sample``).
    """

    path: str
    setup: str
