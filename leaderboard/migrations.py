"""Upgrades of older results-file versions to the current schema, in one place."""

from __future__ import annotations

from typing import Any

from eval_queue.errors import MalformedFileError
from leaderboard.schema import RESULTS_SCHEMA


def upgrade(raw: dict[str, Any], path: str) -> dict[str, Any]:
    """Return ``raw`` in the current schema; raise for a schema this code does not know."""
    schema = raw.get("schema")
    match schema:
        case str() if schema == RESULTS_SCHEMA:
            return raw
        case _:
            raise MalformedFileError(path, f"unknown schema {schema!r} (expected {RESULTS_SCHEMA!r})")
