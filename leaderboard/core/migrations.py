"""Upgrades of older results-file versions to the current schema, in one place.

``evalita-llm-results/1`` (before tracks): an Evalita file without ``track``; ``/2``
adds ``track`` and is otherwise the same for Evalita.
"""

from __future__ import annotations

from typing import Any

from eval_queue.errors import MalformedFileError
from eval_queue.vocabulary import Track
from leaderboard.core.schema import RESULTS_SCHEMA

RESULTS_SCHEMA_V1 = "evalita-llm-results/1"


def upgrade(raw: dict[str, Any], path: str) -> dict[str, Any]:
    """Return ``raw`` in the current schema; raise for a schema this code does not know."""
    track = track_of(raw.get("schema"), raw.get("track"), path)
    if raw.get("schema") == RESULTS_SCHEMA_V1:
        return {**raw, "schema": RESULTS_SCHEMA, "track": track.value}
    return raw


def track_of(schema: object, track: object, path: str) -> Track:
    """The track of a file from its envelope alone (``schema``, ``track``), without reading its body.

    A ``/1`` file is an Evalita file; a ``/2`` file names its track.  An unknown schema
    or track is a :class:`MalformedFileError`: a file's track is never guessed.
    """
    if schema == RESULTS_SCHEMA_V1:
        if track not in (None, Track.EVALITA.value):
            raise MalformedFileError(path, f"{RESULTS_SCHEMA_V1} files are Evalita files, not {track!r}")
        return Track.EVALITA
    if schema != RESULTS_SCHEMA:
        raise MalformedFileError(path, f"unknown schema {schema!r} (expected {RESULTS_SCHEMA!r})")
    if not isinstance(track, str):
        raise MalformedFileError(path, f"a {RESULTS_SCHEMA} file must name its track (a string)")
    try:
        return Track(track)
    except ValueError:
        known = ", ".join(t.value for t in Track)
        raise MalformedFileError(path, f"unknown track {track!r} (known: {known})") from None
