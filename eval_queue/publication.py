"""What ties a request to the outputs its run publishes: the run stamp, and whether they are there.

**The path rule.**  A run's results file and details folder are named after the request's
*run stamp* (:func:`run_stamp`: the time of its first claim), not the wall clock at the
end of the run.  A retry, a rerun after a crash and a second worker that takes over an
expired lease therefore write the very same paths, overwriting (or finding) an earlier
upload instead of adding a copy.  ``requeue`` clears the stamp: a deliberate new run gets
new files and the old ones are superseded as before.  The runners pass the stamp to
:func:`leaderboard.core.schema.results_file_path` and :func:`~leaderboard.core.schema.details_dir`
in place of the finish time; older files named after their finish time read as before.

**Published?**  :func:`results_published` answers whether the results file a request
recorded (``results_path`` while its phase is ``publishing``) is in the results store: the
test the worker, the next claim and the reaper use to complete a run to FINISHED.
"""

from __future__ import annotations

from eval_queue.errors import UnreadableFileError
from eval_queue.requests import EvalRequest, isoformat, parse_time
from eval_queue.storage.base import Storage
from eval_queue.storage.paths import check_path


def run_stamp(request: EvalRequest) -> str:
    """The time (UTC ISO-8601, seconds) that names ``request``'s run outputs.

    The stamp the queue set at the first claim; a request that has none (never claimed,
    or claimed before stamps existed) falls back to its ``submitted_time``, which is
    just as stable across reruns.
    """
    return isoformat(parse_time(request.run_stamp or request.submitted_time))


def details_prefix(request: EvalRequest) -> str:
    """The start of every details folder ``request``'s run can write: ``<model>/<stamp>_``.

    The same rule as :func:`leaderboard.core.schema.details_dir` (``:`` becomes ``-`` in names);
    the maintenance command uses it to leave the folders of runs in progress alone.
    """
    return f"{request.model}/{run_stamp(request).replace(':', '-')}_"


def results_published(results: Storage, path: str) -> bool:
    """Whether the results store holds ``path`` (a listing, nothing downloaded).

    A path that is not a safe store path (a crafted request file) is never published.
    Raises ``StorageError`` when the store cannot say: the caller must then not decide.
    """
    try:
        check_path(path)
    except UnreadableFileError:
        return False
    return path in results.versions(path)
