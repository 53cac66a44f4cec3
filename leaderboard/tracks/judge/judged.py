"""What the judge track knows of the track whose outputs it judges: Evalita-LLM.

A judge of generations scores the summaries an Evalita run wrote for SUM (its details files), so
the judge reads that track's task definitions and its details and results schemas.  Every
other module of the judge takes them from here: this is the one place the judge names another
track's domain (its panels on Evalita's pages are the app layer's other one).
"""

from __future__ import annotations

from leaderboard.tracks.evalita.definition import TRACK as JUDGED_TRACK
from leaderboard.tracks.evalita.definition import EvalitaTask, TaskKind, get_task
from leaderboard.tracks.evalita.schema import DetailRecord, ResultsFile, details_file_name

#: The generative task whose outputs a judge of generations scores.
JUDGED_TASK = EvalitaTask.SUM

__all__ = [
    "JUDGED_TASK",
    "JUDGED_TRACK",
    "DetailRecord",
    "ResultsFile",
    "TaskKind",
    "details_file_name",
    "get_task",
]
