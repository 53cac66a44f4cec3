"""Run one judge request: build the units, run the harness once, convert.  The worker calls :func:`run_judge`.

::

    job = JudgeJob.from_request(request)                 # judge_mode / judge_target from the request
    output = run_judge(job, options=run_options, workdir=tmp, data="sample", stores=stores)
    stores.results.write(output.results_path, output.results.to_json())
    for path, data in output.details.items():
        stores.details.write(path, data)

The model is loaded once for all five criteria (one ``simple_evaluate`` call through
:func:`backend.runner.run_harness`, imported lazily so that this module stays free of
torch until a run starts).  A problem with the inputs raises
:class:`~leaderboard.tracks.judge.data.JudgeDataError` before any model is loaded; a run
whose output cannot be published raises :class:`~backend.tracks.judge.convert.JudgeRunError`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from backend.options import HarnessError, ModelRef, RunOptions
from backend.tracks.judge import convert
from backend.tracks.judge import data as run_data
from eval_queue.requests import EvalRequest
from eval_queue.storage.base import Stores
from eval_queue.vocabulary import Track
from leaderboard.core.schema import ModelInfo, details_dir, results_file_path
from leaderboard.tracks.judge.data import (
    HubRows,
    JudgeDataError,
    JudgeDataSource,
    load_annotated_set,
    load_few_shot,
)
from leaderboard.tracks.judge.definition import CRITERIA, JudgeMode, judge_variant
from leaderboard.tracks.judge.items import JudgeUnit, meta_units
from leaderboard.tracks.judge.schema import (
    FewShotInfo,
    JudgedRun,
    JudgeResultsFile,
    judge_details_file_name,
)

log = logging.getLogger(__name__)

#: The generative task whose outputs are judged unless a job says otherwise.
DEFAULT_JUDGED_TASK = "sum"


@dataclass(frozen=True)
class JudgeJob:
    """One judge request: the judge model, what it judges, and the model block of its results."""

    judge: ModelRef
    info: ModelInfo
    mode: JudgeMode
    #: ``generations``: the results path of the run whose outputs are judged.
    target: str | None = None
    task: str = DEFAULT_JUDGED_TASK
    #: Prompts of ``task`` to judge; empty: all of them.
    prompts: tuple[str, ...] = ()
    request_id: str | None = None

    def __post_init__(self) -> None:
        if self.mode is JudgeMode.GENERATIONS and not self.target:
            raise JudgeDataError(
                "judge_mode 'generations' needs judge_target, the results path of the run to judge"
            )

    @property
    def variant(self) -> str | None:
        return judge_variant(self.mode, self.target)

    @classmethod
    def from_request(cls, request: EvalRequest) -> JudgeJob:
        """From a queue request: ``judge_mode`` (default ``meta``) and ``judge_target`` (docs/TRACKS.md)."""
        if request.track is not Track.JUDGE:
            raise JudgeDataError(f"an {request.track.value} request, not a judge one")
        mode = request.judge_mode or JudgeMode.META
        return cls(
            judge=ModelRef(request.model, request.revision, request.precision.value),
            info=ModelInfo(
                id=request.model,
                revision=request.revision,
                precision=request.precision.value,
                params_b=request.params_b,
                model_type=request.model_type.value,
                license=request.license,
                architecture=request.architecture,
            ),
            mode=mode,
            target=request.judge_target,
            request_id=request.request_id,
        )


@dataclass(frozen=True)
class JudgeOutput:
    """What the worker publishes: the results file at ``results_path`` and ``{path: bytes}`` details."""

    results: JudgeResultsFile
    results_path: str
    details_folder: str
    details: Mapping[str, bytes] = field(default_factory=dict)


def _units(
    job: JudgeJob, data: str | JudgeDataSource, stores: Stores | None, hub_rows: HubRows | None
) -> tuple[list[JudgeUnit], str, JudgedRun | None]:
    """``(units, run.data label, the judged run for generations)``."""
    if job.mode is JudgeMode.META:
        annotated = load_annotated_set(data, hub_rows=hub_rows or run_data.hub_rows_from_cache)
        log.info("annotated set %s: %d items", annotated.label, len(annotated.items))
        return meta_units(annotated), annotated.label, None
    if stores is None:
        raise JudgeDataError("judging generations needs the results and details stores")
    assert job.target is not None
    judged, units = run_data.read_judged_run(
        stores.results, stores.details, job.target, job.task, job.prompts or None, CRITERIA
    )
    log.info("judging %d outputs of %s on %s", len(units) // len(CRITERIA), judged.model, job.task)
    # The judged run's data label: its outputs were produced on that data.
    return units, judged.data, judged


def wants_chat_template(model: ModelRef, options: RunOptions) -> bool:
    """Whether the judge sees its prompt as a chat turn: yes if asked, else if its tokenizer has a template.

    A judge must follow instructions and answer in a fixed JSON shape; an instruction-tuned
    model does that only inside its chat format (the paper ran each judge "with the
    parameters suggested by the model's authors").  A base model without a template gets
    the plain prompt.  Read from the tokenizer files in the HF cache (offline).
    """
    if options.apply_chat_template:
        return True
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(
            model.model_id, revision=model.revision, trust_remote_code=options.trust_remote_code
        )
    except (OSError, ValueError) as exc:
        raise HarnessError(
            f"could not read the tokenizer of {model.model_id}: {type(exc).__name__}: {exc}"
        ) from exc
    return bool(getattr(tokenizer, "chat_template", None))


def run_judge(
    job: JudgeJob,
    *,
    options: RunOptions,
    workdir: Path,
    data: str | JudgeDataSource = "sample",
    stores: Stores | None = None,
    few_shot_path: Path | None = None,
    hub_rows: HubRows | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> JudgeOutput:
    """Judge (meta: the annotated set from ``data``; generations: ``job.target`` from ``stores``)."""
    units, data_label, judged = _units(job, data, stores, hub_rows)
    few_shot = load_few_shot(few_shot_path) if few_shot_path else None
    shots: FewShotInfo | None = (
        run_data.few_shot_info(few_shot_path, few_shot) if few_shot_path and few_shot else None
    )
    prepared = run_data.write_harness_tasks(units, workdir, few_shot)
    from backend import runner  # torch and lm-eval: only once the inputs are known to be good

    chat = wants_chat_template(job.judge, options)
    log.info("judge prompts %s the chat template", "in" if chat else "without")
    options = replace(options, apply_chat_template=chat)
    # Judge tasks have no few-shot setting of the harness's own (examples, if any, are in the prompt).
    output = runner.run_harness(
        job.judge,
        prepared.task_names,
        0,
        options,
        # The judge's own tasks only: no built-in task is indexed.
        task_manager_kwargs={"include_path": str(prepared.include_path), "include_defaults": False},
        on_progress=on_progress,
    )
    answers = convert.answers_from_samples(output.samples)
    convert.check_harness_agreement(output.results, answers)
    variant = job.variant
    finished_at = output.run.finished_at or ""
    # The precision shown and named in paths is the one the weights ran in (as for Evalita).
    precision = output.run.dtype or job.info.precision
    folder = details_dir(job.info.id, finished_at, precision, 0, Track.JUDGE, variant)
    run = output.run.model_copy(
        update={"data": data_label, "request_id": job.request_id, "details_path": folder}
    )
    body = (
        convert.meta_body(answers, shots)
        if judged is None
        else convert.generations_body(answers, judged, shots)
    )
    info = job.info.model_copy(update={"precision": precision})
    if not info.architecture and output.architecture:
        info = info.model_copy(update={"architecture": output.architecture})
    results = JudgeResultsFile(model=info, run=run, judge=body)
    details = {
        f"{folder}/{judge_details_file_name(c)}": lines for c, lines in convert.detail_lines(answers).items()
    }
    path = results_file_path(results, finished_at, variant)
    parsed = sum(a.answer.parsed for a in answers)
    log.info(
        "judge %s: %d answers, %d parsed (%.0f%%)",
        job.info.id,
        len(answers),
        parsed,
        100 * parsed / len(answers),
    )
    return JudgeOutput(results=results, results_path=path, details_folder=folder, details=details)
