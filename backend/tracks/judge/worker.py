"""The judge track's runner for the worker (``TRACK_RUNNERS``): one judge request → :class:`Evaluation`.

Both modes go through :func:`~backend.tracks.judge.run.run_judge`:

* ``meta``: the judge scores the annotated set — the worker's ``--judge-data`` when given,
  else the set that follows its ``--data`` (:func:`annotated_set_source`);
* ``generations``: the judge scores the SUM outputs of the run at ``judge_target``, read
  from ``context.stores`` (its results file and per-sample details).

Failures are :class:`~backend.tracks.StageError` naming the stage (the FAILED reason's
headline): bad inputs (a target that is not in the store, has no details, an annotated
set that is missing or malformed) fail as "reading what to judge" before a model loads.
"""

from __future__ import annotations

import logging
from pathlib import Path

from backend.config import WorkerConfig
from backend.tracks import Evaluation, RunContext, StageError
from backend.tracks.judge.convert import JudgeRunError
from backend.tracks.judge.run import JudgeJob, run_judge
from eval_queue.requests import EvalRequest
from leaderboard.tracks.judge.data import ANNOTATED_FILE, JudgeDataError, JudgeDataKind, JudgeDataSource

log = logging.getLogger(__name__)

#: Inside a worker's ``local:<dir>`` data folder (beside the Evalita task folders).
LOCAL_JUDGE_FOLDER = "judge"


def annotated_set_source(data: str, judge_data: str | None = None) -> JudgeDataSource:
    """Where a meta-evaluation reads its annotated set.

    ``judge_data`` (``--judge-data``) when given; else it follows the worker's ``data``:
    ``sample`` → the bundled sample; ``local:<dir>`` → ``<dir>/judge/annotated.jsonl``
    (labelled ``local:<dir name>``, like the Evalita data of that folder); ``hub`` has no
    annotated set of its own (the paper's annotations may not be redistributed), so it
    needs ``--judge-data hub:<org>/<name>`` — raises :class:`JudgeDataError` saying so.
    """
    if judge_data is not None:
        return JudgeDataSource.parse(judge_data)
    kind, _, rest = data.strip().partition(":")
    match kind:
        case "sample":
            return JudgeDataSource.parse("sample")
        case "local":
            root = Path(rest).expanduser().resolve()
            folder = root / LOCAL_JUDGE_FOLDER
            if not (folder / ANNOTATED_FILE).is_file():
                raise JudgeDataError(
                    f"the worker's data folder {root} has no {LOCAL_JUDGE_FOLDER}/{ANNOTATED_FILE}: "
                    "add the annotated set there, or start the worker with --judge-data"
                )
            return JudgeDataSource(JudgeDataKind.LOCAL, root=folder, name=root.name)
        case _:
            raise JudgeDataError(
                f"a worker on --data {data} has no annotated set for judges: start it with "
                "--judge-data hub:<org>/<name> (prefetched into the datasets cache), local:<dir> or sample"
            )


def evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
    """Run one judge request (see the module docstring); raises :class:`StageError`."""
    try:
        job = JudgeJob.from_request(request)
        source = None if job.target else annotated_set_source(config.data, config.judge_data)
    except JudgeDataError as exc:
        raise StageError("reading what to judge", exc) from exc
    what = (
        f"the {job.task} outputs of {job.target}" if source is None else f"the annotated set {source.label}"
    )
    log.info("judge %s@%s scores %s", job.judge.model_id, job.judge.revision, what)
    try:
        output = run_judge(
            job,
            options=config.harness,
            workdir=context.workdir,
            data=source or "sample",  # generations: unused (the target's run names its own data)
            stores=context.stores,
            on_progress=context.progress.beat,
        )
    except JudgeDataError as exc:
        raise StageError("reading what to judge", exc) from exc
    except JudgeRunError as exc:
        raise StageError("converting the judge's answers", exc) from exc
    except Exception as exc:  # the harness and the model: anything it raises is this stage's failure
        raise StageError("running the harness", exc) from exc
    return Evaluation(output.results, output.results_path, output.details)
