"""The harness runner: one ``lm_eval.simple_evaluate`` call per request.

This is the only module of the project that imports ``lm_eval`` and ``torch`` at module
level (ARCHITECTURE.md); the worker imports it lazily, when it has a request to run.

:func:`run_harness` loads the model once for all tasks, runs them with fixed seeds and
returns the harness output untouched (:class:`HarnessOutput`) together with the results
file's ``run`` block as far as the harness knows it (a :class:`~leaderboard.core.schema.RunInfo`:
harness version, model arguments — never a token —, backend, dtype as run and precision
as asked, batch size, chat-template use, bootstrap draws, hardware, wall time); the worker
adds where the data came from, :mod:`backend.provenance` who ran it and where it goes.

Backends
--------
``hf`` (default): ``transformers`` through lm-eval's ``HFLM``; ``batch_size="auto"`` on
GPU (lm-eval probes the largest batch that fits), a fixed small batch on CPU.  Weights in
the request's precision on GPU, float32 on CPU (CPU half precision is slow and lossy)
unless ``dtype`` is given.

``vllm`` (optional, not installed by ``requirements-backend.txt``): lm-eval's ``VLLM``
with ``enable_prefix_caching=False`` — prefix caching reuses KV blocks across requests
and makes log-likelihoods depend on the order requests arrive in, which would make
scores irreproducible.  Imported lazily; a clear error says how to install it.

Progress
--------
lm-eval hands all requests of one type to the model in one call, so the runner watches the
model itself: its ``cache_hook`` is replaced by :class:`backend.progress.ProgressTracker`
(progress lines with an ETA, the stall watchdog's beats, wall time and tokens per task for
the benchmark).
"""

from __future__ import annotations

import logging
import os
import platform
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lm_eval
import numpy as np
import torch
from lm_eval.api.registry import get_model
from lm_eval.tasks import TaskManager, get_task_dict

from backend.energy import EnergyMeter, NullMeter, meter_for
from backend.fastpath import fastpath_session  # also registers the ``hf-fast`` lm-eval model
from backend.fastpath.vllm_settings import prepare_vllm_environment
from backend.options import BACKENDS, CPU_BATCH_SIZE, HarnessError, ModelRef, RecipeInclude, RunOptions
from backend.progress import ProgressTracker, fmt_s
from backend.recipe import PROJECT, lm_eval_recipe, project_version, run_cost, task_hashes
from backend.tokens import TokenTally, tally_for
from eval_queue.errors import EvalitaError
from leaderboard.core.schema import RunInfo

log = logging.getLogger(__name__)

# lm-eval's own defaults (``python -m lm_eval`` uses the same): results are comparable
# with a plain command-line run on the same model and data.
RANDOM_SEED = 0
NUMPY_SEED = 1234
TORCH_SEED = 1234
FEWSHOT_SEED = 1234
#: The four seeds as the run block records them (and ``lm_eval --seed`` takes them, in this order).
SEEDS = {"random": RANDOM_SEED, "numpy": NUMPY_SEED, "torch": TORCH_SEED, "fewshot": FEWSHOT_SEED}

__all__ = ["BACKENDS", "CPU_BATCH_SIZE", "HarnessError", "ModelRef", "RunOptions", "run_harness"]


@dataclass
class HarnessOutput:
    """``simple_evaluate``'s return value plus what ran.

    ``results``: ``{harness task: {"<metric>,none": float, …}}``; ``n_samples``:
    ``{harness task: {"original": int, "effective": int}}``; ``samples``: per-sample
    outputs by harness task; ``run``: the run block as the harness knows it;
    ``progress``: wall time and tokens per phase and task (for benchmarks).
    """

    results: dict[str, dict[str, Any]]
    n_samples: dict[str, dict[str, int]]
    samples: dict[str, list[dict[str, Any]]]
    run: RunInfo
    architecture: str | None = None
    progress: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(repr=False, default_factory=dict)
    # What the model class itself reports about the run (its ``run_report()``, if it has
    # one), e.g. a track's own model class's truncation and prefix-reuse statistics.
    model_report: dict[str, Any] = field(default_factory=dict)
    # The lm-eval task objects that ran, by task name (their documents, ``process_results`` and
    # aggregations score recorded answers again: ``python -m backend reproduce``).
    tasks: dict[str, Any] = field(repr=False, default_factory=dict)


@dataclass
class TokenCounter:
    """Tokens the HF model forwarded (log-likelihood) and generated, for throughput figures."""

    forward_tokens: int = 0
    forward_calls: int = 0
    generated_tokens: int = 0
    generate_calls: int = 0
    # Prompt tokens prefilled for generation (padding included).
    generation_prompt_tokens: int = 0
    detected_batch_sizes: list[int] = field(default_factory=list)


class DecodingHeartbeat:
    """A ``generate`` stopping criterion that never stops: it calls ``beat`` at most every ``every_s``.

    One batch of long answers (a reasoning model's thousands of tokens) finishes no request for
    many minutes; without a beat the worker's stall watchdog would take it for a hung run.
    """

    def __init__(
        self, beat: Callable[[], None], every_s: float = 10.0, clock: Callable[[], float] = time.monotonic
    ):
        self._beat, self._every_s, self._clock = beat, every_s, clock
        self._last = clock()

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
        now = self._clock()
        if now - self._last >= self._every_s:
            self._last = now
            self._beat()
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)


def _beat_while_decoding(model: Any, beat: Callable[[], None]) -> None:
    """Wrap ``model.generate`` (this instance only) so that decoding beats the progress tracker."""
    from transformers import StoppingCriteriaList

    original = model.generate

    def generate(*args: Any, stopping_criteria: Any = None, **kwargs: Any) -> Any:
        criteria = StoppingCriteriaList([*(stopping_criteria or []), DecodingHeartbeat(beat)])
        return original(*args, stopping_criteria=criteria, **kwargs)

    model.generate = generate


def _instrument(
    lm: Any,
    tracker: ProgressTracker,
    tokens: TokenCounter,
    tally: TokenTally | None = None,
    meter: EnergyMeter | NullMeter | None = None,
) -> None:
    """Hook progress and token counting into an lm-eval model instance (no behaviour change).

    ``tally`` (if any) counts each request's tokens by its task with the run's tokenizer;
    ``meter`` reads the GPUs' energy counters at the start and end of each call (phase).
    """
    lm.set_cache_hook(tracker)
    for kind in ("loglikelihood", "loglikelihood_rolling", "generate_until"):
        original = getattr(lm, kind)

        def wrapped(
            requests: Any, *args: Any, _original: Any = original, _kind: str = kind, **kwargs: Any
        ) -> Any:
            tracker.start_phase(_kind, requests)
            if meter is not None:
                meter.begin(_kind)
            try:
                answers = _original(requests, *args, **kwargs)
            finally:
                tracker.close()
                if meter is not None:
                    meter.end(_kind)
            if tally is not None:
                tally.count(_kind, requests, answers)
            return answers

        setattr(lm, kind, wrapped)
    if hasattr(lm, "_model_call"):
        model_call = lm._model_call

        def counted_call(inps: Any, *args: Any, **kwargs: Any) -> Any:
            tokens.forward_tokens += int(inps.numel())
            tokens.forward_calls += 1
            return model_call(inps, *args, **kwargs)

        lm._model_call = counted_call
    model = getattr(lm, "_model", None)
    if isinstance(model, torch.nn.Module) and hasattr(model, "generate"):
        _beat_while_decoding(model, tracker.heartbeat)
    if hasattr(lm, "_model_generate"):
        model_generate = lm._model_generate

        def counted_generate(context: Any, *args: Any, **kwargs: Any) -> Any:
            out = model_generate(context, *args, **kwargs)
            tokens.generation_prompt_tokens += int(context.numel())
            tokens.generated_tokens += int(out.shape[0] * max(out.shape[1] - context.shape[1], 0))
            tokens.generate_calls += 1
            return out

        lm._model_generate = counted_generate
    if hasattr(lm, "_detect_batch_size"):
        detect = lm._detect_batch_size

        def recorded_detect(*args: Any, **kwargs: Any) -> int:
            size = detect(*args, **kwargs)
            tokens.detected_batch_sizes.append(int(size))
            log.info("lm-eval detected batch size %s", size)
            return size

        lm._detect_batch_size = recorded_detect


# --------------------------------------------------------------------------- helpers


class _RoutineWarnings(logging.Filter):
    """Drops lm-eval's one-per-task warnings about settings we pass on purpose."""

    ROUTINE = ("Overwriting default num_fewshot", "generation_kwargs: {'max_gen_toks'")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(text in message for text in self.ROUTINE)


def resolve_device(requested: str | None) -> str:
    if requested:
        return requested
    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_dtype(options: RunOptions, precision: str, device: str) -> str:
    if options.dtype:
        return options.dtype
    return precision if device.startswith("cuda") else "float32"


def resolve_batch_size(options: RunOptions, device: str) -> str | int:
    if options.batch_size is not None:
        size = options.batch_size
        return size if isinstance(size, int) or str(size).startswith("auto") else int(size)
    return "auto" if device.startswith("cuda") else CPU_BATCH_SIZE


def describe_hardware(device: str) -> str:
    if device.startswith("cuda") and torch.cuda.is_available():
        index = torch.cuda.current_device() if device == "cuda" else int(device.split(":")[1])
        props = torch.cuda.get_device_properties(index)
        count = torch.cuda.device_count()
        return f"{count}x {props.name} ({props.total_memory / 2**30:.0f} GiB), CUDA {torch.version.cuda}"
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"CPU: {cpu}, {os.cpu_count()} logical cores, {torch.get_num_threads()} torch threads"


def _versions() -> dict[str, str]:
    import transformers

    found = {
        "lm_eval": lm_eval.__version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    try:
        import datasets

        found["datasets"] = datasets.__version__
    except ImportError:  # pragma: no cover - lm-eval depends on datasets
        pass
    found[PROJECT] = project_version()
    return found


def _architecture(lm: Any) -> str | None:
    config = getattr(getattr(lm, "model", None), "config", None)
    names = getattr(config, "architectures", None) or []
    return str(names[0]) if names else None


def build_model_args(model: ModelRef, options: RunOptions, dtype: str) -> str:
    """lm-eval ``model_args`` string.  Never contains a token: the hub client reads HF_TOKEN itself."""
    parts = [f"pretrained={model.model_id}", f"revision={model.revision}", f"dtype={dtype}"]
    parts.append(f"trust_remote_code={options.trust_remote_code}")
    if options.backend == "vllm":
        parts += ["enable_prefix_caching=False", f"seed={TORCH_SEED}"]
    return ",".join(parts)


def context_window(model: ModelRef, options: RunOptions, tokenizer: Any = None) -> int:
    """The model's window in tokens as lm-eval's ``hf`` model reads it (config, then tokenizer, then
    its default): what a prompt plus its answer budget must fit in, or lm-eval cuts the prompt's start."""
    from lm_eval.models.huggingface import HFLM
    from lm_eval.models.utils import resolve_max_length
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(
            model.model_id, revision=model.revision, trust_remote_code=options.trust_remote_code
        )
    except (OSError, ValueError) as exc:
        raise HarnessError(
            f"could not read the config of {model.model_id}: {type(exc).__name__}: {exc}"
        ) from exc
    return int(resolve_max_length(config, tokenizer, default=HFLM._DEFAULT_MAX_LENGTH))


def _seed_everything() -> None:
    random.seed(RANDOM_SEED)
    np.random.seed(NUMPY_SEED)
    torch.manual_seed(TORCH_SEED)


def _load_model(
    model_args: str,
    options: RunOptions,
    device: str,
    batch_size: str | int,
    model_class: str | None = None,
    model_kwargs: Mapping[str, Any] | None = None,
) -> Any:
    if options.backend == "vllm":
        prepare_vllm_environment()  # before vllm is imported
        try:
            import vllm  # noqa: F401  (only to fail early with a clear message)
        except ImportError as exc:
            raise HarnessError(
                "backend 'vllm' needs the vllm package (pip install vllm matching your torch/CUDA); "
                "it is not part of requirements-backend.txt"
            ) from exc
    lm_class = get_model(model_class or options.backend)
    extra: dict[str, Any] = {
        "batch_size": batch_size,
        "max_batch_size": options.max_batch_size,
        "device": device,
        **(model_kwargs or {}),
    }
    try:
        return lm_class.create_from_arg_string(model_args, extra)
    except EvalitaError:
        raise
    except Exception as exc:
        raise HarnessError(f"could not load the model ({model_args}): {type(exc).__name__}: {exc}") from exc


class TaskFailedError(HarnessError):
    """A task's own code (prompt rendering, scoring) raised while the harness ran it."""


def _name_failures(name: str, task: Any) -> None:
    """Make errors raised by a task's hooks name the task (lm-eval's do not)."""
    for method in ("build_all_requests", "process_results"):
        original = getattr(task, method)

        def wrapped(*args: Any, _original: Any = original, _method: str = method, **kwargs: Any) -> Any:
            try:
                return _original(*args, **kwargs)
            except Exception as exc:
                stage = "building its prompts" if _method == "build_all_requests" else "scoring an answer"
                raise TaskFailedError(
                    f"task {name} failed while {stage}: {type(exc).__name__}: {exc}"
                ) from exc

        setattr(task, method, wrapped)


def _load_tasks(names: Sequence[str], task_manager: TaskManager) -> list[Any]:
    """Load each task on its own so that a broken one is named in the error."""
    tasks: list[Any] = []
    for name in names:
        try:
            loaded = get_task_dict([name], task_manager)
        except Exception as exc:
            raise HarnessError(f"could not load task {name}: {type(exc).__name__}: {exc}") from exc
        for task_name, task in loaded.items():
            _name_failures(str(task_name), task)
            tasks.append(task)
    return tasks


# --------------------------------------------------------------------------- entry point


def run_harness(
    model: ModelRef,
    task_names: Sequence[str],
    num_fewshot: int,
    options: RunOptions,
    *,
    task_manager_kwargs: Mapping[str, Any] | None = None,
    on_progress: Callable[[str], None] | None = None,
    log_samples: bool = True,
    model_class: str | None = None,
    model_kwargs: Mapping[str, Any] | None = None,
    recipe_include: RecipeInclude | None = None,
) -> HarnessOutput:
    """Evaluate ``model`` on ``task_names`` (lm-eval task names) in one ``simple_evaluate`` call.

    ``task_manager_kwargs`` builds lm-eval's ``TaskManager`` — pass a data override's
    ``task_manager_kwargs()`` (its include folder *alone*, so a task missing from a local
    override is unknown instead of read from the hub); None: the built-in tasks.
    ``on_progress(note)`` is called whenever the harness makes progress (the worker's
    stall watchdog); ``note`` says where the run is.

    ``model_class`` names a registered lm-eval model to use instead of ``options.backend``'s
    (a track's own subclass of it, registered with lm-eval by the track's worker side);
    ``model_kwargs`` are extra constructor arguments for it (never secrets: not recorded).

    The run block records how to run it again (``run.recipe``: the plain ``lm_eval`` command,
    lm-eval's task hashes; ``recipe_include`` says how the command names the include folder and
    how to write it) and what it cost (``run.cost``: wall time per phase, tokens, GPU-hours).
    """
    beat = on_progress or (lambda _note: None)
    device = resolve_device(options.device)
    dtype = resolve_dtype(options, model.precision, device)
    batch_size = resolve_batch_size(options, device)
    model_args = build_model_args(model, options, dtype)
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    _seed_everything()
    log.info(
        "loading %s@%s (%s, %s, %s) on %s",
        model.model_id,
        model.revision,
        options.backend,
        dtype,
        batch_size,
        device,
    )
    # The meter reads the GPUs' idle power before the model loads (backend/energy.py).
    meter = meter_for(device)
    beat("loading the model")
    meter.begin("model_load")
    lm = _load_model(model_args, options, device, batch_size, model_class, model_kwargs)
    meter.end("model_load")
    model_load_s = time.perf_counter() - t0
    tracker = ProgressTracker(options.progress_interval_s, on_progress=beat)
    tokens = TokenCounter()
    tally = tally_for(lm)
    _instrument(lm, tracker, tokens, tally, meter)

    _quiet_harness_logs()
    setup_start = time.monotonic()  # the tracker's clock: phases are split by its stamps
    beat("loading the tasks")
    task_manager = TaskManager(**dict(task_manager_kwargs or {}))
    tasks = _load_tasks(task_names, task_manager)
    log.info("running %d harness tasks, %d-shot, limit=%s", len(tasks), num_fewshot, options.limit)
    beat("building the requests")
    with fastpath_session(options.backend, lm, tasks) as fastpath_report:
        output = _simple_evaluate(lm, tasks, task_manager, num_fewshot, options, log_samples)
    evaluate_end = time.monotonic()
    tracker.close()
    energy = meter.finish()
    log.info("energy: %s", energy.summary())
    if output is None:  # only on non-zero ranks of a multi-process run
        raise HarnessError("lm-eval returned no results (not the main process?)")
    beat("done")
    duration = time.perf_counter() - t0
    finished = datetime.now(UTC)
    run = RunInfo(
        num_fewshot=num_fewshot,
        limit=options.limit,
        backend=model_class or options.backend,
        model_args=model_args,
        batch_size=batch_size,
        started_at=started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        finished_at=finished.strftime("%Y-%m-%dT%H:%M:%SZ"),
        duration_s=round(duration, 3),
        device=device,
        dtype=dtype,
        requested_precision=model.precision,
        batch_size_used=sorted(set(tokens.detected_batch_sizes))
        or ([batch_size] if isinstance(batch_size, int) else []),
        model_load_s=round(model_load_s, 3),
        recipe=lm_eval_recipe(
            model_class or options.backend,
            model_args,
            task_names,
            num_fewshot,
            options,
            batch_size,
            device,
            seeds=SEEDS,
            include=recipe_include,
            task_hashes=task_hashes(output.get("samples") or {}),
            uses_include=bool(task_manager_kwargs and task_manager_kwargs.get("include_path")),
        ),
        cost=run_cost(
            tracker,
            tokens,
            fastpath_report.get("fastpath") or {},
            setup_start=setup_start,
            evaluate_end=evaluate_end,
            duration_s=duration,
            gpus=1 if device.startswith("cuda") else 0,
            tally=tally,
            energy=energy,
            scored_items=sum(int(n.get("effective", 0)) for n in (output.get("n-samples") or {}).values()),
        ),
        **_fixed_run_fields(options, device),
    )
    log.info("harness finished in %s (model load %s)", fmt_s(duration), fmt_s(model_load_s))
    return HarnessOutput(
        results=dict(output.get("results", {})),
        n_samples={k: dict(v) for k, v in output.get("n-samples", {}).items()},
        samples=dict(output.get("samples", {}) or {}),
        run=run,
        architecture=_architecture(lm),
        progress=tracker.summary() | asdict(tokens) | fastpath_report,
        raw=dict(output),
        model_report=dict(lm.run_report()) if hasattr(lm, "run_report") else {},
        tasks={str(getattr(task.config, "task", "")): task for task in tasks},
    )


def _quiet_harness_logs() -> None:
    """lm-eval logs every task it indexes and selects at INFO: keep the log (and the FAILED
    request's log tail) for what matters."""
    logging.getLogger("lm_eval").setLevel(
        max(logging.WARNING, logging.getLogger("lm_eval").getEffectiveLevel())
    )
    evaluator_log = logging.getLogger("lm_eval.evaluator")
    if not any(isinstance(f, _RoutineWarnings) for f in evaluator_log.filters):
        evaluator_log.addFilter(_RoutineWarnings())


def _simple_evaluate(
    lm: Any,
    tasks: list[Any],
    task_manager: TaskManager,
    num_fewshot: int,
    options: RunOptions,
    log_samples: bool,
) -> dict[str, Any] | None:
    """The one ``simple_evaluate`` call, with the project's fixed seeds."""
    return lm_eval.simple_evaluate(
        model=lm,
        tasks=tasks,
        num_fewshot=num_fewshot,
        limit=options.limit,
        bootstrap_iters=options.bootstrap_iters,
        log_samples=log_samples,
        apply_chat_template=options.apply_chat_template,
        fewshot_as_multiturn=options.apply_chat_template,
        gen_kwargs={"max_gen_toks": options.max_gen_toks} if options.max_gen_toks else None,
        task_manager=task_manager,
        random_seed=RANDOM_SEED,
        numpy_random_seed=NUMPY_SEED,
        torch_random_seed=TORCH_SEED,
        fewshot_random_seed=FEWSHOT_SEED,
        verbosity="WARNING",
    )


def _fixed_run_fields(options: RunOptions, device: str) -> dict[str, Any]:
    """The run block's fields that do not depend on how the run went."""
    return {
        "harness": f"lm-eval {lm_eval.__version__}",
        "chat_template": options.apply_chat_template,
        "hardware": describe_hardware(device),
        "bootstrap_iters": options.bootstrap_iters,
        "max_gen_toks": options.max_gen_toks,
        "seeds": dict(SEEDS),
        "versions": _versions(),
    }
