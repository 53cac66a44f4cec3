"""The judge track's results parser: one file → a :class:`~leaderboard.tracks.judge.app.records.JudgeRun`."""

from __future__ import annotations

from leaderboard.tracks.judge.app.records import JudgeRun
from leaderboard.tracks.judge.schema import JudgeResultsFile


def parse_results_file(data: bytes, path: str) -> JudgeRun:
    """A judge results file as the record the tables need; :class:`MalformedFileError` if unusable."""
    return JudgeRun(path, JudgeResultsFile.from_json(data, path))
