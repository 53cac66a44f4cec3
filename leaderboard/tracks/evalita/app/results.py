"""The Evalita track's results parser: one file → a :class:`~leaderboard.tracks.evalita.app.records.RunRecord`."""

from __future__ import annotations

from leaderboard.tracks.evalita.app.records import RunRecord
from leaderboard.tracks.evalita.schema import ResultsFile


def parse_results_file(data: bytes, path: str) -> RunRecord:
    """An Evalita results file (``/1`` or ``/2``) as the record the tables need; :class:`MalformedFileError` if unusable."""
    return RunRecord.of(path, ResultsFile.from_json(data, path))
