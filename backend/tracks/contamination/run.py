"""Test one model for contamination: read the sets → score orders and contexts (harness, once) → tests.

The worker calls :func:`evaluate` (the spec's runner)::

    evaluation = run_contamination(request, "sample", workdir, RunOptions(), set_ids=["te", "wic"])

The harness runs through :func:`backend.runner.run_harness` with the worker's model backend
(``hf`` or ``hf-fast``, batched; ``hf-fast`` shares the prefixes the CoDeC contexts repeat), the
model loaded once for every set.  ``--limit`` cuts each set to its first items (a labelled,
non-comparable run); it never reaches the harness, whose documents are orders and contexts.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from backend.config import WorkerConfig
from backend.options import HarnessError, ModelRef, RunOptions
from backend.tracks import Evaluation, RunContext, StageError
from backend.tracks.contamination.convert import contamination_body
from backend.tracks.contamination.data import ContaminationData, prepare_contamination, read_sets
from eval_queue.requests import EvalRequest
from leaderboard.core.datasource import DataSource, DataSourceError
from leaderboard.tracks.contamination.definition import DEFAULT_CODEC, DEFAULT_ORDER, CodecDesign, OrderDesign
from leaderboard.tracks.contamination.schema import ContaminationRunInfo

log = logging.getLogger(__name__)


def _token_counter(model: ModelRef, options: RunOptions) -> Callable[[str], int] | None:
    """Counts tokens as the model's tokenizer does (for each test's cost); None when it cannot load."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(
            model.model_id, revision=model.revision, trust_remote_code=options.trust_remote_code
        )
    except (OSError, ValueError) as exc:
        log.warning("tokens not counted: the tokenizer did not load (%s)", exc)
        return None
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def run_contamination(
    request: EvalRequest,
    source: str | DataSource,
    workdir: Path,
    options: RunOptions,
    *,
    set_ids: Sequence[str] | None = None,
    order: OrderDesign = DEFAULT_ORDER,
    codec: CodecDesign = DEFAULT_CODEC,
    on_progress: Callable[[str], None] | None = None,
) -> Evaluation:
    """Prepare the sets, run the harness once, compute both tests per set.

    Raises :class:`DataSourceError` for unreadable data (before the model loads),
    :class:`HarnessError` when the harness cannot run, :class:`~backend.tracks.IncompleteRunError`
    when a document went unscored.
    """
    from backend import runner

    if options.backend == "vllm":
        raise HarnessError("the contamination track needs exact log-likelihoods: run it on hf or hf-fast")
    if options.apply_chat_template:
        raise HarnessError(
            "the contamination track scores the test files' text as published: no chat template"
        )
    limit = options.limit
    if limit is not None and not float(limit).is_integer():
        raise HarnessError("--limit for the contamination track is a number of items per set (an integer)")
    data: ContaminationData = prepare_contamination(
        source, workdir, set_ids, limit=int(limit) if limit is not None else None, order=order, codec=codec
    )
    model = ModelRef(request.model, request.revision, request.precision.value)
    output = runner.run_harness(
        model,
        data.task_names,
        0,
        dataclasses.replace(options, limit=None),
        task_manager_kwargs={"include_path": str(data.include_path), "include_defaults": False},
        on_progress=on_progress,
    )
    window = runner.context_window(model, options)
    body, details = contamination_body(
        data,
        output.samples,
        count=_token_counter(model, options),
    )
    run = ContaminationRunInfo(
        **output.run.model_dump(exclude={"data", "limit"}),
        data=data.label,
        limit=limit,
        sets=list(body),
        order_permutations=order.permutations,
        order_max_shards=order.max_shards,
        order_min_shard_items=order.min_shard_items,
        order_seed=order.seed,
        codec_context_items=codec.context_items,
        codec_seed=codec.seed,
        window_tokens=window,
        longest_sequence_chars=data.longest_sequence_chars,
    )
    for set_id, result in body.items():
        log.info(
            "%s: %d items, order p=%s (Holm %s), CoDeC %.2f",
            set_id,
            result.n_items,
            f"{result.order.p_value:.3g}" if result.order else "—",
            f"{result.order.p_holm:.3g}" if result.order else "—",
            result.codec.score if result.codec else float("nan"),
        )
    return Evaluation(
        run, {"sets": body, "skipped": data.skipped}, details, request.variant, output.architecture
    )


def check_data(config: WorkerConfig, request: EvalRequest | None = None) -> None:
    """Before claiming: can every chosen set be read from the worker's data (optional ones aside)?"""
    read_sets(DataSource.parse(config.data), config.track_options.get("contamination_sets"))


def evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
    """The track's runner: every set of the suite (or the worker's ``--contamination-sets``)."""
    permutations = config.track_options.get("contamination_permutations")
    order = dataclasses.replace(DEFAULT_ORDER, permutations=permutations) if permutations else DEFAULT_ORDER
    try:
        return run_contamination(
            request,
            config.data,
            context.workdir,
            config.harness,
            set_ids=config.track_options.get("contamination_sets"),
            order=order,
            on_progress=context.progress.beat,
        )
    except DataSourceError as exc:  # anything else is the worker's "running the harness" failure
        raise StageError("preparing the data", exc) from exc
