"""The toy track's results file: the shared envelope and one score."""

from __future__ import annotations

from typing import ClassVar

from leaderboard.core.schema import ResultsEnvelope
from tests.support.toy_track.spec import TRACK


class ToyResults(ResultsEnvelope):
    TRACK: ClassVar[str] = TRACK

    track: str = TRACK
    score: float
