"""What the worker adds to every track's results: whose model, which request, which worker, where.

A track's runner only computes (:class:`~backend.tracks.Evaluation`: its run block, its results
body, its details files by name, the variant it covered).  :func:`stamp` turns that into what
is published, the same way for every track: the model block (from the request, with the
precision the weights ran in), ``request_id``, ``worker_id``, ``details_path``, the results
file's path and each details file's path — named after the request's run stamp, so that a
retry or a rerun of the request writes the very same paths (issue 24's path rule).  A body the track's results type refuses fails here,
as "converting the harness output".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from backend.tracks import Evaluation, StageError
from eval_queue.errors import MalformedFileError
from eval_queue.publication import run_stamp
from eval_queue.requests import EvalRequest
from eval_queue.tracks import track_spec
from leaderboard.core.schema import ModelInfo, ResultsEnvelope, RunInfo, details_dir, results_file_path


@dataclass(frozen=True)
class Publication:
    """What the worker writes: the results file, where it goes, and the details files by path."""

    results: ResultsEnvelope
    results_path: str
    details: Mapping[str, bytes]


def precision_run(requested: str, run: RunInfo) -> str:
    """The precision shown and written in file names: the dtype the weights ran in.

    A CPU run of a ``bfloat16`` request runs in float32; saying bfloat16 would mislabel
    it.  What the request asked for stays in ``run.requested_precision``.
    """
    return run.dtype or requested


def model_info(request: EvalRequest, run: RunInfo, architecture: str | None = None) -> ModelInfo:
    """The results file's model block: the request's model, as it ran."""
    return ModelInfo(
        id=request.model,
        revision=request.revision,
        precision=precision_run(request.precision.value, run),
        params_b=request.params_b,
        model_type=request.model_type.value,
        license=request.license,
        architecture=architecture or request.architecture,
    )


def stamp(
    evaluation: Evaluation,
    *,
    track: str,
    model: ModelInfo,
    request_id: str | None = None,
    worker_id: str | None = None,
    named_at: str | None = None,
) -> Publication:
    """The results file of ``evaluation`` with its provenance, its path and its details' paths.

    ``named_at`` is the time the paths carry: the request's run stamp
    (:func:`eval_queue.publication.run_stamp`, so that a rerun writes the same paths), else
    the run's finish time.
    """
    run = evaluation.run
    named_at = named_at or run.finished_at or ""
    folder = details_dir(model.id, named_at, model.precision, run.num_fewshot, track, evaluation.variant)
    run = run.model_copy(update={"request_id": request_id, "worker_id": worker_id, "details_path": folder})
    results_type: type[ResultsEnvelope] = track_spec(track).load("results_type")
    try:
        results = results_type.from_raw(
            {
                "track": track,
                "model": model.model_dump(),
                "run": run.model_dump(),
                **{name: _raw(value) for name, value in evaluation.body.items()},
            },
            f"the {track} results of {model.id}",
        )
    except MalformedFileError as exc:
        raise StageError("converting the harness output", exc) from exc
    details = {f"{folder}/{name}": data for name, data in evaluation.details.items()}
    return Publication(results, results_file_path(results, named_at, evaluation.variant), details)


def stamp_request(request: EvalRequest, worker_id: str, evaluation: Evaluation) -> Publication:
    """:func:`stamp` for a claimed request: its track, its model, its id, this worker, its run stamp."""
    return stamp(
        evaluation,
        track=request.track,
        model=model_info(request, evaluation.run, evaluation.architecture),
        request_id=request.request_id,
        worker_id=worker_id,
        named_at=run_stamp(request),
    )


def _raw(value: object) -> object:
    """A body value as plain data (pydantic models dumped), validated again by the results type."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(getattr(k, "value", k)): _raw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_raw(v) for v in value]
    return value
