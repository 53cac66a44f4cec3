"""The data layer's error type."""

from __future__ import annotations

from eval_queue.errors import EvalitaError


class DataSourceError(EvalitaError):
    """A data source spec is invalid, or its files do not match the harness configs."""
