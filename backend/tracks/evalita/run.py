"""The Evalita track's runner: data override → harness (one call) → results file + details.

A request runs every task of the suite unless it names a subset (``request.tasks``);
a worker started with ``--tasks`` runs only those (its data may hold nothing else).
A run of fewer than the ten tasks records them in ``run.tasks`` and carries their ids in
its file names: it is labelled a subset and never ranked beside full runs.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from backend.config import WorkerConfig
from backend.tracks import Evaluation, RunContext, StageError
from backend.tracks.evalita import convert
from eval_queue.errors import EvalitaError
from eval_queue.requests import EvalRequest
from leaderboard.tracks.evalita.definition import (
    SUITE,
    EvalitaOptions,
    EvalitaTask,
    TaskSpec,
    all_harness_tasks,
)
from leaderboard.tracks.evalita.schema import EvalitaRunInfo

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
    output = _run_harness(request, config, override.task_manager_kwargs(), harness_names, context)
    subset = subset_ids(tasks)
    run = EvalitaRunInfo.model_validate({**output.run.model_dump(), "data": override.label, "tasks": subset})
    try:
        body = {"tasks": convert.task_results(output.results, output.n_samples, tasks)}
        details = convert.details_files(output.samples, tasks)
    except EvalitaError as exc:
        raise StageError("converting the harness output", exc) from exc
    variant = EvalitaOptions(tasks=[EvalitaTask(t) for t in subset] if subset else None).variant()
    return Evaluation(run, body, details, variant, output.architecture)


def _install_offline_metrics() -> None:
    from backend.tracks.evalita.metrics import install_offline_rouge

    install_offline_rouge()


def _run_harness(
    request: EvalRequest,
    config: WorkerConfig,
    task_manager_kwargs: dict[str, object],
    harness_names: Sequence[str],
    context: RunContext,
) -> HarnessOutput:
    try:
        from backend import runner
    except ImportError as exc:
        raise StageError("importing the harness (install requirements-backend.txt)", exc) from exc

    model = runner.ModelRef(request.model, request.revision, request.precision.value)
    try:
        return runner.run_harness(
            model,
            harness_names,
            request.num_fewshot,
            config.harness,
            task_manager_kwargs=task_manager_kwargs,
            on_progress=context.progress.beat,
        )
    except Exception as exc:
        raise StageError("running the harness", exc) from exc
