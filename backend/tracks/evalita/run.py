"""The Evalita track's runner: data override → harness (one call) → results file + details.

A request runs every task of the suite unless it names a subset (``request.tasks``);
a worker started with ``--tasks`` runs only those (its data may hold nothing else).
A run of fewer than the ten tasks records them in ``run.tasks`` and carries their ids in
its file names: it is labelled a subset and never ranked beside full runs.

Beside the details, the run's per-item file (``items.parquet``, from lm-eval's logged samples)
and, in the results file, every interval computed from it (``uncertainty``:
:func:`leaderboard.tracks.evalita.uncertainty.evalita_summary`).  The harness's own bootstrap
is off by default (``--bootstrap-iters 0``, recorded in ``run.bootstrap_iters``): the project's
intervals replace its stderrs, and no process pool is started.
"""

from __future__ import annotations

import json
import logging
import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from backend.config import WorkerConfig
from backend.options import RecipeInclude
from backend.tracks import Evaluation, RunContext, StageError
from backend.tracks.evalita import convert
from eval_queue.errors import EvalitaError, NotFoundError
from eval_queue.requests import EvalRequest
from leaderboard.core.summary import ITEMS_FILE_NAME
from leaderboard.tracks.evalita.definition import (
    SUITE,
    EvalitaOptions,
    EvalitaTask,
    TaskSpec,
    all_harness_tasks,
)
from leaderboard.tracks.evalita.schema import DetailRecord, EvalitaRunInfo, MetricSetBlock, TaskResult

if TYPE_CHECKING:
    from backend.runner import HarnessOutput

log = logging.getLogger(__name__)


class TaskSelectionError(EvalitaError):
    """The request asks only for tasks this worker does not run."""


def selected_tasks(
    request_tasks: Sequence[str] | None, worker_tasks: Sequence[str] | None
) -> tuple[TaskSpec, ...]:
    """The suite's tasks a run evaluates: the request's subset (or all), within the worker's (or all).

    Raises :class:`TaskSelectionError` when nothing is left.
    """
    chosen = tuple(
        task
        for task in SUITE
        if (request_tasks is None or task.id in request_tasks)
        and (worker_tasks is None or task.id in worker_tasks)
    )
    if not chosen:
        asked = ", ".join(request_tasks or ()) or "all"
        raise TaskSelectionError(
            f"this worker runs only {', '.join(worker_tasks or ())}; the request asks for {asked}"
        )
    return chosen


def subset_ids(tasks: Sequence[TaskSpec]) -> list[str] | None:
    """``run.tasks``: the ids of a subset run in paper order, None for the whole suite."""
    return None if len(tasks) == len(SUITE) else [task.id for task in tasks]


def _worker_tasks(config: WorkerConfig) -> tuple[str, ...] | None:
    """The worker's ``--tasks`` (its spec's worker option), None when it runs them all."""
    return config.track_options.get("tasks")


def check_data(config: WorkerConfig, request: EvalRequest | None = None) -> None:
    """Before claiming: does the worker's data hold every file of the tasks it runs?

    Raises :class:`~backend.tracks.evalita.data.DataSourceError` naming every missing file at once.
    """
    from backend.tracks.evalita.data import check_data_source

    check_data_source(config.data, all_harness_tasks(selected_tasks(None, _worker_tasks(config))))


def evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
    """Run ``request`` on the worker's data through the harness; see the module docstring."""
    from backend.tracks.evalita.data import prepare_include_path

    try:
        options = request.options
        assert isinstance(options, EvalitaOptions)
        tasks = selected_tasks(
            [t.value for t in options.tasks] if options.tasks else None, _worker_tasks(config)
        )
        _install_offline_metrics()
        harness_names = all_harness_tasks(tasks)
        log.info(
            "evaluating %d of the %d Evalita tasks (%s: %d prompts, run as %d lm-eval tasks as NER runs each "
            "prompt on three domains), %d-shot, data %s%s",
            len(tasks),
            len(SUITE),
            ", ".join(task.abbrev for task in tasks),
            sum(len(task.prompts) for task in tasks),
            len(harness_names),
            request.num_fewshot,
            config.data,
            f", at most {config.harness.limit} items per prompt" if config.harness.limit else "",
        )
        override = prepare_include_path(config.data, context.workdir, tasks=harness_names)
    except EvalitaError as exc:
        raise StageError("preparing the run", exc) from exc
    include = recipe_include(override.label, harness_names if subset_ids(tasks) else None)
    output = _run_harness(request, config, override.task_manager_kwargs(), harness_names, context, include)
    subset = subset_ids(tasks)
    run = EvalitaRunInfo.model_validate({**output.run.model_dump(), "data": override.label, "tasks": subset})
    try:
        task_results = convert.task_results(output.results, output.n_samples, tasks)
        details = convert.details_files(output.samples, tasks)
    except EvalitaError as exc:
        raise StageError("converting the harness output", exc) from exc
    items, uncertainty = per_item_outputs(output.samples, tasks, task_results)
    body: dict[str, Any] = {
        "tasks": task_results,
        "metric_sets": [specified_block(task_results, details, run.finished_at, items.get(ITEMS_FILE_NAME))],
        **uncertainty,
    }
    details = {**details, **items}
    variant = EvalitaOptions(tasks=[EvalitaTask(t) for t in subset] if subset else None).variant()
    return Evaluation(run, body, details, variant, output.architecture)


#: Where a run's recipe writes its include folder (relative to the shell's directory).
RECIPE_INCLUDE_DIR = "evalita-include"


def recipe_include(data_label: str, harness_names: Sequence[str] | None) -> RecipeInclude | None:
    """How the recipe of a run on ``sample``/``local:<name>`` data writes and names its include
    folder (the worker's own was temporary); None for the official data (lm-eval's own tasks).

    ``harness_names``: the tasks of a subset run (a local folder may hold only theirs).
    """
    if data_label == "hub":
        return None
    from backend.tracks.evalita.data import INCLUDE_DIR_NAME

    # Python literals in double quotes (JSON's), so that the shell line needs only one pair of quotes.
    tasks = f", tasks={json.dumps(list(harness_names))}" if harness_names else ""
    code = (
        "from pathlib import Path; from backend.tracks.evalita.data import prepare_include_path; "
        f"prepare_include_path({json.dumps(data_label)}, Path({json.dumps(RECIPE_INCLUDE_DIR)}){tasks})"
    )
    return RecipeInclude(
        path=f"{RECIPE_INCLUDE_DIR}/{INCLUDE_DIR_NAME}",
        setup=shlex.join(["python", "-c", code]),
    )


def per_item_outputs(
    samples: Mapping[str, Sequence[Mapping[str, Any]]],
    tasks: Sequence[TaskSpec],
    published: Mapping[str, TaskResult],
) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The per-item file (``{"items.parquet": bytes}``) and the ``uncertainty`` body field.

    Both empty, with a warning in the log, when the samples do not give per-item data that
    reproduce the published scores: the run is then shown without intervals, never with
    made-up ones (and it is published all the same).
    """
    from leaderboard.core.items import ITEMS_FILE_NAME, items_to_parquet
    from leaderboard.tracks.evalita.uncertainty import evalita_run_items, evalita_summary

    scores = {t: {p: s.score for p, s in result.prompts.items()} for t, result in published.items()}
    try:
        run_items = evalita_run_items(samples, tasks)
        if not run_items.tasks:
            log.warning("no per-item data in the harness output: the run has no intervals")
            return {}, {}
        summary = evalita_summary(run_items, scores)
    except ValueError as exc:
        log.warning("no intervals for this run: %s", exc)
        return {}, {}
    log.info(
        "intervals: %d figures from %d items (%d resamples)",
        len(summary.intervals),
        sum(t.n_items for t in run_items.tasks.values()),
        summary.n_resamples,
    )
    return {ITEMS_FILE_NAME: items_to_parquet(run_items)}, {"uncertainty": summary}


def specified_block(
    tasks: Mapping[str, TaskResult],
    details: Mapping[str, bytes],
    finished_at: str | None,
    items_file: bytes | None = None,
) -> MetricSetBlock:
    """The ``as-specified`` scores of a run, from the very details files it publishes (what
    ``python -m backend rescore`` would compute from them later: the same block), with their
    intervals when the run has a per-item file (``items_file``, the bytes it publishes):
    bootstrapped on its items (:func:`leaderboard.tracks.evalita.uncertainty.metric_set_summary`).
    Intervals that cannot be computed are left out with a warning, as the lm-eval ones are."""
    from leaderboard.core.items import items_from_parquet
    from leaderboard.tracks.evalita.metric_sets import METRIC_SETS, MetricSet, block_of, score_run
    from leaderboard.tracks.evalita.schema import details_file_name, parse_details
    from leaderboard.tracks.evalita.uncertainty import metric_set_summary

    def read(task_id: str, prompt_id: str) -> list[DetailRecord]:
        name = details_file_name(task_id, prompt_id)
        if name not in details:
            raise NotFoundError(name)
        return parse_details(details[name], name)

    prompts = {task_id: list(result.prompts) for task_id, result in tasks.items()}
    spec = METRIC_SETS[MetricSet.AS_SPECIFIED]
    scores = score_run(spec, prompts, read)
    for task_id, reason in scores.skipped.items():
        log.warning("as-specified %s not scored: %s", task_id, reason)
    block = block_of(spec, scores, "worker", finished_at or "")
    if items_file is None or not block.tasks:
        return block
    try:
        summary, without = metric_set_summary(spec, tasks, block, read, items_from_parquet(items_file))
    except (ValueError, EvalitaError) as exc:
        log.warning("no as-specified intervals for this run: %s", exc)
        return block
    for task_id, reason in without.items():
        log.warning("as-specified %s has no interval: %s", task_id, reason)
    return block.model_copy(update={"uncertainty": summary})


def _install_offline_metrics() -> None:
    from backend.tracks.evalita.offline_rouge import install_offline_rouge

    install_offline_rouge()


def _run_harness(
    request: EvalRequest,
    config: WorkerConfig,
    task_manager_kwargs: dict[str, object],
    harness_names: Sequence[str],
    context: RunContext,
    include: RecipeInclude | None = None,
) -> HarnessOutput:
    try:
        from backend import runner
    except ImportError as exc:
        raise StageError("importing the harness (install requirements-backend.txt)", exc) from exc

    model = runner.ModelRef(request.model, request.revision, request.precision.value)
    # What it raises is the worker's "running the harness" failure (backend.worker tags it).
    return runner.run_harness(
        model,
        harness_names,
        request.num_fewshot,
        config.harness,
        task_manager_kwargs=task_manager_kwargs,
        on_progress=context.progress.beat,
        recipe_include=include,
    )
