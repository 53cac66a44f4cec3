"""The contamination track's results parser: one file → its :class:`ContaminationResults`."""

from __future__ import annotations

from leaderboard.tracks.contamination.schema import ContaminationResults


def parse_results_file(data: bytes, path: str) -> ContaminationResults:
    """A contamination results file through the shared envelope's safe reader (``MalformedFileError``)."""
    return ContaminationResults.from_json(data, path)
