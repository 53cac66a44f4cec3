"""Before a judge of generations is queued: is its target a run that can be judged?"""

from __future__ import annotations

from eval_queue.errors import MalformedFileError, NotFoundError, SubmissionRejected
from eval_queue.safe_json import RESULTS_LIMITS, load_object
from eval_queue.storage.base import Storage
from eval_queue.text import shorten
from eval_queue.tracks import TrackOptions
from leaderboard.tracks.judge.definition import JudgeOptions
from leaderboard.tracks.judge.judged import JUDGED_TASK, JUDGED_TRACK


def check_judge_target(options: TrackOptions, results: Storage) -> None:
    """Refuse a judge of generations whose target cannot be judged, before it is queued.

    The track's submission check (``TrackSpec.check_submission``): a judge of the annotated
    set passes; a target must be an Evalita results file in ``results`` whose run published
    per-sample details with the judged task.  Read through the safe reader, envelope only.
    Raises :class:`SubmissionRejected` saying how to fix it.
    """
    target = options.judge_target if isinstance(options, JudgeOptions) else None
    if not target:
        return
    try:
        raw = load_object(results.read(target, max_bytes=RESULTS_LIMITS.max_bytes), target, RESULTS_LIMITS)
    except NotFoundError:
        raise SubmissionRejected(
            f"There is no results file {shorten(target, 200)!r} in the results store: give the results path "
            "of a finished Evalita run (python -m eval_queue list shows each FINISHED request's)."
        ) from None
    except MalformedFileError as exc:
        raise SubmissionRejected(f"The results file to judge is unreadable: {exc.reason}") from None
    run = raw.get("run") if isinstance(raw.get("run"), dict) else {}
    tasks = raw.get("tasks") if isinstance(raw.get("tasks"), dict) else {}
    if raw.get("track", JUDGED_TRACK) != JUDGED_TRACK or JUDGED_TASK.value not in tasks:
        raise SubmissionRejected(
            f"{shorten(target, 200)!r} is not an Evalita run with {JUDGED_TASK.value.upper()} outputs: "
            "a judge scores the summaries of an Evalita run that includes the SUM task."
        )
    if not run.get("details_path"):
        raise SubmissionRejected(
            f"The run {shorten(target, 200)!r} published no per-sample details, so there is nothing to judge."
        )
