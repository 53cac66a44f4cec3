"""The judge track's runner: one judge request → the results file and details the worker publishes.

The worker calls :func:`evaluate` (the spec's ``runner``); both modes go through :func:`run_judge`:

* ``meta``: the judge scores the annotated set — the worker's ``--judge-data`` when given,
  else the set that follows its ``--data`` (:func:`annotated_set_source`);
* ``generations``: the judge scores the SUM outputs of the run at ``judge_target``, read
  from ``context.stores`` (its results file and per-sample details).

A request's ``judge_protocol`` picks the prompts and decoding (``project``, the default, or
``paper``: Appendix A's few-shot templates filled from the worker's ``--judge-examples``, the
model's own generation settings, :mod:`backend.tracks.judge.generation`); :func:`check_data`
refuses a ``paper`` request before the claim on a worker without that file.

Failures are :class:`~backend.tracks.StageError` naming the stage (the FAILED reason's
headline): bad inputs (a target that is not in the store, has no details, an annotated
set that is missing or malformed) fail as "reading what to judge" before a model loads.
``python -m backend.tracks.judge`` runs :func:`run_judge` outside the queue.

The model is loaded once for all five criteria (one ``simple_evaluate`` call through
:func:`backend.runner.run_harness`, imported lazily so that this module stays free of
torch until a run starts).  A problem with the inputs raises
:class:`~leaderboard.tracks.judge.data.JudgeDataError` before any model is loaded; a run
whose output cannot be published raises :class:`~backend.tracks.judge.convert.JudgeRunError`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from backend.config import WorkerConfig
from backend.options import ModelRef, RunOptions
from backend.tracks import Evaluation, RunContext, StageError
from backend.tracks.judge import convert
from backend.tracks.judge import data as run_data
from backend.tracks.judge.convert import JudgeRunError, JudgeRunSetup
from backend.tracks.judge.generation import generation_settings, harness_generation_kwargs, load_tokenizer
from eval_queue.requests import EvalRequest
from eval_queue.storage.base import Stores
from leaderboard.core.datasource import DataSource, DataSourceError, DataSourceKind
from leaderboard.core.schema import ModelInfo
from leaderboard.tracks.judge.data import (
    ANNOTATED_FILE,
    HubRows,
    JudgeDataError,
    annotated_source,
    load_annotated_set,
    load_examples,
)
from leaderboard.tracks.judge.definition import (
    TRACK,
    Criterion,
    JudgeMode,
    JudgeOptions,
    JudgeProtocol,
    judge_variant,
)
from leaderboard.tracks.judge.items import JudgeUnit, meta_units, render_unit
from leaderboard.tracks.judge.judged import JUDGED_TASK
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.schema import (
    AnnotatedSetInfo,
    JudgedRun,
    PaperDataPins,
    judge_details_file_name,
)

log = logging.getLogger(__name__)

#: Inside a worker's ``local:<dir>`` data folder (beside the Evalita task folders).
LOCAL_JUDGE_FOLDER = "judge"
#: The worker option holding the ``paper`` protocol's examples file (``--judge-examples``).
EXAMPLES_OPTION = "judge_examples"
#: The worker option holding the digests pinned as the paper's data (``--judge-paper-pins``).
PINS_OPTION = "judge_paper_pins"


@dataclass(frozen=True)
class JudgeJob:
    """One judge request: the judge model, what it judges, and the model block of its results."""

    judge: ModelRef
    info: ModelInfo
    mode: JudgeMode
    #: ``generations``: the results path of the run whose outputs are judged.
    target: str | None = None
    task: str = JUDGED_TASK.value
    #: Prompts of ``task`` to judge; empty: all of them.
    prompts: tuple[str, ...] = ()
    protocol: JudgeProtocol = JudgeProtocol.PROJECT

    def __post_init__(self) -> None:
        if self.mode is JudgeMode.GENERATIONS and not self.target:
            raise JudgeDataError(
                "judge_mode 'generations' needs judge_target, the results path of the run to judge"
            )

    @property
    def variant(self) -> str | None:
        return judge_variant(self.mode, self.target, self.protocol)

    @classmethod
    def from_request(cls, request: EvalRequest) -> JudgeJob:
        """From a queue request: ``judge_mode`` (default ``meta``) and ``judge_target`` (docs/TRACKS.md)."""
        options = request.options
        if request.track != TRACK or not isinstance(options, JudgeOptions):
            raise JudgeDataError(f"an {request.track} request, not a judge one")
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
            mode=options.mode,
            target=options.judge_target,
            protocol=options.protocol,
        )


def _units(
    job: JudgeJob, data: str | DataSource, stores: Stores | None, hub_rows: HubRows | None
) -> tuple[list[JudgeUnit], str, JudgedRun | None, AnnotatedSetInfo | None]:
    """``(units, run.data label, the judged run for generations, the annotated set for meta)``."""
    if job.mode is JudgeMode.META:
        annotated = load_annotated_set(data, hub_rows=hub_rows or run_data.hub_rows_from_cache)
        info = run_data.annotated_info(annotated)
        log.info("annotated set %s: %d items, sha256 %s", info.name, info.items, info.sha256[:12])
        return meta_units(annotated), annotated.label, None, info
    if stores is None:
        raise JudgeDataError("judging generations needs the results and details stores")
    assert job.target is not None
    judged, units = run_data.read_judged_run(
        stores.results, stores.details, job.target, job.task, job.prompts or None, CRITERIA
    )
    log.info("judging %d outputs of %s on %s", len(units) // len(CRITERIA), judged.model, job.task)
    # The judged run's data label: its outputs were produced on that data.
    return units, judged.data, judged, None


def wants_chat_template(model: ModelRef, options: RunOptions, tokenizer: object = None) -> bool:
    """Whether the judge sees its prompt as a chat turn: yes if asked, else if its tokenizer has a template.

    A judge must follow instructions and answer in a fixed JSON shape; an instruction-tuned
    model does that only inside its chat format (the paper ran each judge "with the
    parameters suggested by the model's authors").  A base model without a template gets
    the plain prompt.  Read from the tokenizer files in the HF cache (offline).
    """
    if options.apply_chat_template:
        return True
    tokenizer = tokenizer if tokenizer is not None else load_tokenizer(model, options)
    return bool(getattr(tokenizer, "chat_template", None))


def run_judge(
    job: JudgeJob,
    *,
    options: RunOptions,
    workdir: Path,
    data: str | DataSource = "sample",
    stores: Stores | None = None,
    few_shot_path: Path | None = None,
    hub_rows: HubRows | None = None,
    on_progress: Callable[[str], None] | None = None,
    paper_pins: PaperDataPins | None = None,
) -> Evaluation:
    """Judge (meta: the annotated set from ``data``; generations: ``job.target`` from ``stores``).

    ``few_shot_path``: the examples file — required by the ``paper`` protocol (every judged
    criterion's slot is filled from it), optional for ``project`` (zero-shot without it).
    ``paper_pins``: the digests of the paper's own data, recorded so the file can say whether it
    is comparable with Table 1 (:attr:`JudgeResultsFile.standing`).
    Returns what the worker stamps and publishes (:func:`backend.provenance.stamp`)."""
    units, data_label, judged, annotated = _units(job, data, stores, hub_rows)
    criteria = [c for c in CRITERIA if any(u.criterion is c for u in units)]
    few_shot, shots = _examples(job.protocol, few_shot_path, criteria)
    tokenizer = load_tokenizer(job.judge, options)
    chat = wants_chat_template(job.judge, options, tokenizer)
    log.info("judge prompts %s the chat template (%s protocol)", "in" if chat else "without", job.protocol)
    options = replace(options, apply_chat_template=chat)
    generation = generation_settings(
        job.protocol,
        job.judge,
        options,
        tokenizer=tokenizer,
        prompts=[render_unit(u, few_shot, job.protocol) for u in units],
        chat=chat,
    )
    prepared = run_data.write_harness_tasks(
        units,
        workdir,
        few_shot,
        job.protocol,
        harness_generation_kwargs(generation) if job.protocol is JudgeProtocol.PAPER else None,
    )
    from backend import runner  # torch and lm-eval: only once the inputs are known to be good

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
    run = output.run.model_copy(update={"data": data_label})
    setup = JudgeRunSetup(job.protocol, shots, generation, annotated, paper_pins)
    body = (
        convert.meta_body(answers, setup)
        if judged is None
        else convert.generations_body(answers, judged, setup)
    )
    details = {judge_details_file_name(c): lines for c, lines in convert.detail_lines(answers).items()}
    parsed = sum(a.answer.parsed for a in answers)
    log.info(
        "judge %s: %d answers, %d parsed (%.0f%%)",
        job.info.id,
        len(answers),
        parsed,
        100 * parsed / len(answers),
    )
    return Evaluation(run, {"judge": body}, details, job.variant, output.architecture)


def _examples(
    protocol: JudgeProtocol, path: Path | None, criteria: list[Criterion]
) -> tuple[run_data.FewShotSet | None, convert.FewShotInfo | None]:
    """The examples the prompts hold and their record; the ``paper`` protocol needs one for each criterion."""
    if protocol is JudgeProtocol.PAPER:
        if path is None:
            raise JudgeDataError(
                "the paper protocol fills Appendix A's few-shot slots from an examples file, and none was "
                "given (worker: --judge-examples FILE; python -m backend.tracks.judge: --few-shot FILE)"
            )
        return run_data.read_examples(path, criteria)
    if path is None:
        return None, None
    return run_data.read_examples(path)


def annotated_set_source(data: str, judge_data: str | None = None) -> DataSource:
    """Where a meta-evaluation reads its annotated set.

    ``judge_data`` (``--judge-data``) when given; else it follows the worker's ``data``:
    ``sample`` → the bundled sample; ``local:<dir>`` → ``<dir>/judge/annotated.jsonl``
    (labelled ``local:<dir name>``, like the Evalita data of that folder); ``hub`` has no
    annotated set of its own (the paper's annotations may not be redistributed), so it
    needs ``--judge-data hub:<org>/<name>`` — raises :class:`JudgeDataError` saying so.
    """
    if judge_data is not None:
        return annotated_source(judge_data)
    try:
        worker_data = DataSource.parse(data)
    except DataSourceError as exc:
        raise JudgeDataError(str(exc)) from None
    match worker_data.kind:
        case DataSourceKind.SAMPLE:
            return annotated_source("sample")
        case DataSourceKind.LOCAL:
            assert worker_data.root is not None  # parse resolved it, and it exists
            root = worker_data.root
            folder = root / LOCAL_JUDGE_FOLDER
            if not (folder / ANNOTATED_FILE).is_file():
                raise JudgeDataError(
                    f"the worker's data folder {root} has no {LOCAL_JUDGE_FOLDER}/{ANNOTATED_FILE}: "
                    "add the annotated set there, or start the worker with --judge-data"
                )
            return DataSource(DataSourceKind.LOCAL, root=folder, name=root.name)
        case _:
            raise JudgeDataError(
                f"a worker on --data {data} has no annotated set for judges: start it with "
                "--judge-data hub:<org>/<name> (prefetched into the datasets cache), local:<dir> or sample"
            )


def evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
    """Run one judge request (see the module docstring); raises :class:`StageError`."""
    try:
        job = JudgeJob.from_request(request)
        source = (
            None if job.target else annotated_set_source(config.data, config.track_options.get("judge_data"))
        )
    except JudgeDataError as exc:
        raise StageError("reading what to judge", exc) from exc
    what = (
        f"the {job.task} outputs of {job.target}" if source is None else f"the annotated set {source.label}"
    )
    log.info(
        "judge %s@%s scores %s (%s protocol)", job.judge.model_id, job.judge.revision, what, job.protocol
    )
    try:
        evaluation = run_judge(
            job,
            options=config.harness,
            workdir=context.workdir,
            data=source or "sample",  # generations: unused (the target's run names its own data)
            stores=context.stores,
            # The project protocol stays zero-shot in the queue; the paper protocol's examples are the worker's.
            few_shot_path=_worker_examples(config) if job.protocol is JudgeProtocol.PAPER else None,
            on_progress=context.progress.beat,
            paper_pins=config.track_options.get(PINS_OPTION),
        )
    except JudgeDataError as exc:
        raise StageError("reading what to judge", exc) from exc
    except JudgeRunError as exc:  # anything else is the worker's "running the harness" failure
        raise StageError("converting the judge's answers", exc) from exc
    return evaluation


def _worker_examples(config: WorkerConfig) -> Path | None:
    path = config.track_options.get(EXAMPLES_OPTION)
    return None if path is None else Path(path)


def check_data(config: WorkerConfig, request: EvalRequest | None = None) -> None:
    """Before the worker claims ``request``: a ``paper`` judge needs the worker's examples file.

    The spec's pre-claim check (``TrackSpec.check_data``): raises :class:`JudgeDataError` (the
    worker claims nothing and exits 5, as for missing data) when the next request asks for
    the ``paper`` protocol and this worker has no ``--judge-examples``, or the file no longer
    reads or covers every criterion.  Other requests pass: the project protocol needs nothing.
    """
    if request is None or request.track != TRACK:
        return
    options = request.options
    if not isinstance(options, JudgeOptions) or options.protocol is not JudgeProtocol.PAPER:
        return
    path = _worker_examples(config)
    if path is None:
        raise JudgeDataError(
            f"the next request, {request.request_id}, asks for the paper protocol and this worker has no "
            "examples file: start it with --judge-examples FILE (the paper's few-shot examples, one JSONL "
            "line per example: criterion, document, summary, score, explanation)"
        )
    load_examples(path)
