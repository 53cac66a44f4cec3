"""Publishing a finished run as one transaction: intent, details, results, FINISHED.

Steps, in this order (each one harmless to repeat, so each is retried on transient
store errors with :attr:`WorkerConfig.store_retry <backend.config.WorkerConfig.store_retry>`):

1. ``begin_publishing``: the request records its phase ``publishing`` and the results
   path about to be written (renewing the lease: is it still ours?).  Whoever finds its
   lease expired later knows where to look.
2. The details files, then the results file, each written whole at a path the request
   determines (:mod:`eval_queue.publication`): a retry or a rerun overwrites, never adds.
   The results file goes last, so its presence means the run is fully published.
   Then the run's rows go into the store's contents table (``contents.parquet``, a
   compare-and-swap update, retried like the other steps): a derived index, so a failure
   there is logged and never fails the run (``python -m leaderboard rebuild-contents``
   repairs the table; the app reads the results files it lacks).
3. ``finish``: FINISHED with the results path.  An answer that was lost is resolved by
   trying again: the queue accepts a request already FINISHED with this path.

What can go wrong, and what the caller (:func:`backend.worker.run_once`) does:

* :class:`LeaseLostError` — the request is no longer ours: stop, nothing more is written;
* :class:`Unconfirmed` — the store stayed unreachable through the retries: before the
  results file was written the request is handed back without counting an attempt;
  after, it is left in phase ``publishing`` for the next claim or the reaper to complete;
* :class:`~backend.tracks.StageError` — a store error that is not transient (refused
  token, full disk, a file the hub will not take) before the results were written: the
  request ends FAILED with that reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from backend.config import WorkerConfig
from backend.provenance import Publication
from backend.tracks import Progress, StageError
from eval_queue.errors import EvalitaError, LeaseLostError, MalformedFileError, StorageError
from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest
from eval_queue.retry import is_transient
from eval_queue.storage import Stores

log = logging.getLogger(__name__)

T = TypeVar("T")


class Unconfirmed(EvalitaError):
    """Publishing stopped because the store could not be used; the request is not FINISHED.

    ``results_written``: the results file is in the store (only FINISHED is missing).
    """

    def __init__(self, step: str, cause: BaseException, *, results_written: bool) -> None:
        super().__init__(f"{step}: {cause}")
        self.step = step
        self.cause = cause
        self.results_written = results_written


def publish(
    stores: Stores,
    queue: RequestQueue,
    request: EvalRequest,
    config: WorkerConfig,
    evaluation: Publication,
    *,
    liveness: Progress | None = None,
) -> EvalRequest:
    """Publish ``evaluation`` for ``request`` and mark it FINISHED; returns the FINISHED request.

    ``liveness`` is beaten before every store call (the heartbeat stops renewing when it
    goes quiet too long).  Raises :class:`LeaseLostError`, :class:`Unconfirmed` or
    :class:`StageError` (module docstring).
    """
    rid, worker = request.request_id, config.worker_id
    path = evaluation.results_path

    def step(what: str, call: Callable[[], T]) -> T:
        def beat() -> None:
            if liveness is not None:
                liveness.beat(what)

        return config.store_retry.call(f"{rid}: {what}", call, before_each=beat)

    try:
        step(
            "recording where its results go",
            lambda: queue.begin_publishing(rid, worker, config.lease_s, path),
        )
        for detail, data in evaluation.details.items():
            step(
                f"writing {detail}",
                lambda detail=detail, data=data: stores.details.write(
                    detail, data, message=f"Details of {rid}"
                ),
            )
        results = evaluation.results.to_json()
        step("writing its results", lambda: stores.results.write(path, results, message=f"Results of {rid}"))
    except LeaseLostError:
        raise
    except StorageError as exc:
        if is_transient(exc):
            raise Unconfirmed("publishing the results", exc, results_written=False) from exc
        raise StageError("publishing the results", exc) from exc
    log.info("%s: results written to %s", rid, path)
    _update_contents(stores, evaluation, step)
    if config.publish_eee:
        _publish_eee(stores, evaluation, step)
    try:
        return step("marking it FINISHED", lambda: queue.finish(rid, worker, path))
    except LeaseLostError:
        raise
    except (StorageError, MalformedFileError) as exc:
        # The results are in the store: this is no failure of the run, and never FAILED.
        # The request stays in phase publishing; whoever finds its lease expired finishes it.
        raise Unconfirmed("marking the request FINISHED", exc, results_written=True) from exc


def _update_contents(
    stores: Stores, publication: Publication, step: Callable[[str, Callable[[], T]], T]
) -> None:
    """Put the published run's rows into the results store's contents table; never raises."""
    from leaderboard.core.contents_io import publish_rows

    try:
        rows = step(
            "updating the contents table",
            lambda: publish_rows(stores.results, publication.results, publication.results_path),
        )
    except Exception as exc:  # a derived index must never fail a published run (see the module docstring)
        log.warning(
            "%s: the contents table was not updated (%s: %s); python -m leaderboard rebuild-contents repairs it",
            publication.results_path,
            type(exc).__name__,
            exc,
        )
        return
    log.info("%s: %d row(s) in the contents table", publication.results_path, rows)


def _publish_eee(stores: Stores, publication: Publication, step: Callable[[str, Callable[[], T]], T]) -> None:
    """The run as Every Eval Ever records under ``eee/`` in the results store; never raises.

    The files are validated by the package's validator first; a run whose records fail it is
    logged and not published as EEE (``leaderboard export --format eee`` names what failed).
    """
    import tempfile
    from pathlib import Path

    from leaderboard.eee.export import STORE_FOLDER, run_records
    from leaderboard.eee.validate import validate_tree

    path = publication.results_path
    try:
        records = run_records(publication.results, path, stores.details)
        files = {records.aggregate_path: records.aggregate_bytes()}
        if records.samples_path is not None:
            files[records.samples_path] = records.samples_bytes()
        with tempfile.TemporaryDirectory() as tmp:
            for relative, data in files.items():
                (Path(tmp) / relative).parent.mkdir(parents=True, exist_ok=True)
                (Path(tmp) / relative).write_bytes(data)
            errors, _warnings = validate_tree(Path(tmp), list(files))
        if errors:
            log.warning("%s: EEE records not published, the validator refused them: %s", path, errors[0])
            return
        for relative, data in files.items():
            target = f"{STORE_FOLDER}/{relative}"
            step(
                f"writing {target}",
                lambda target=target, data=data: stores.results.write(target, data, message=f"EEE: {path}"),
            )
    except Exception as exc:  # a derived export must never fail a published run (as the contents table)
        log.warning("%s: EEE records not published (%s: %s)", path, type(exc).__name__, exc)
        return
    log.info("%s: EEE records published under %s/", path, STORE_FOLDER)
