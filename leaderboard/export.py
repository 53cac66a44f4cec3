"""What ``python -m leaderboard export`` asks of a track, and what a track's export returns.

A track's spec names its export (``TrackSpec.export``: ``export(records, ExportOptions) ->
ExportTable``, records being ``{results path: what its results parser returned}``); the
command (:mod:`leaderboard.__main__`) formats the table as CSV, JSON or an aligned table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd


@dataclass(frozen=True)
class ExportOptions:
    """``python -m leaderboard export`` options a track's export may use."""

    #: A track with few-shot settings: only this one (None: all).
    num_fewshot: int | None = None
    #: A track with several prompts per task: one row per prompt instead of one per run.
    prompts: bool = False
    #: Also list runs that are not comparable with full runs on the official data.
    include_noncomparable: bool = False
    #: A track with several metric sets (``TrackSpec.metric_sets``): which one, or ``both``
    #: (None: its default, the first).
    metrics: str | None = None
    #: A custom average over these of the track's columns (task ids; empty: none).
    average_over: tuple[str, ...] = ()
    #: Only runs with a score in every column averaged (the custom average's, else all).
    complete_only: bool = False
    #: Only runs of these model kinds (``chat``, ``base``, ``unknown``; empty: all).
    kinds: tuple[str, ...] = ()
    #: Only each organisation's best ranked run per setting.
    org_best: bool = False


#: ``export --metrics both``: every metric set of the track, one block of rows each.
ALL_METRIC_SETS = "both"


@dataclass(frozen=True)
class ExportTable:
    """A track's export: the table, which columns hold 0–100 scores, and notes for stderr."""

    table: pd.DataFrame
    #: Columns printed with two decimals in CSV (``54.00``).
    percent_columns: frozenset[str] = frozenset()
    #: What a reader of the table must know, e.g. that rows were left out and how to show them.
    notes: tuple[str, ...] = ()
    #: ``--format table``: the columns a person reads first, with their short headers (empty: all).
    summary: Mapping[str, str] = field(default_factory=dict)


def hidden_runs_note(hidden: int, what: str) -> tuple[str, ...]:
    """The one "runs left out" note: how many runs an export hid as not comparable, and how to show them.

    ``what`` says what makes a run of the track not comparable (e.g. "sample or local data,
    a --limit, or a task subset").
    """
    if not hidden:
        return ()
    return (
        f"{hidden} run(s) not comparable with full runs on the official data ({what}) were left out; "
        "--include-noncomparable shows them",
    )
