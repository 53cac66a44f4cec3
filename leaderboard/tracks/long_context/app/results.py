"""The long-context track's results parser: one file → its :class:`LongContextResults` (the app's record)."""

from __future__ import annotations

from leaderboard.tracks.long_context.schema import LongContextResults


def parse_results_file(data: bytes, path: str) -> LongContextResults:
    """A long-context results file, through the shared envelope's safe reader; ``MalformedFileError`` if unusable."""
    return LongContextResults.from_json(data, path)
