"""The Evalita ranking's labels and filters: per-task column headings, size buckets, metadata columns."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from leaderboard.tracks.evalita.app.tables import task_column
from leaderboard.tracks.evalita.definition import TASKS
from leaderboard.tracks.evalita.vocabulary import Aggregate
from leaderboard.views.common import _num

AVG = "Avg CPS"

#: Run metadata copied next to the scores when the two settings are merged side by side.
META_COLUMNS = ("params_b", "model_type", "license", "comparable", "data", "limit")


@dataclass(frozen=True)
class SizeBucket:
    label: str
    low: float | None  # inclusive, billions of parameters; None for unknown size
    high: float | None  # exclusive


SIZE_BUCKETS: tuple[SizeBucket, ...] = (
    SizeBucket("< 3B", 0.0, 3.0),
    SizeBucket("3–10B", 3.0, 10.0),
    SizeBucket("10–35B", 10.0, 35.0),
    SizeBucket("35–80B", 35.0, 80.0),
    SizeBucket("≥ 80B", 80.0, math.inf),
    SizeBucket("unknown", None, None),
)


@dataclass(frozen=True)
class RankingFilters:
    """What the user narrowed the ranking to; empty tuples mean "all"."""

    model_types: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    search: str = ""
    columns: tuple[Aggregate, ...] = (Aggregate.CPS,)
    show_noncomparable: bool = False
    #: The tasks of a custom average (suite order; empty: none, the ranking's mean CPS only).
    average_over: tuple[str, ...] = ()
    #: Only runs with a CPS on every task in view (the custom average's, else all ten).
    complete_only: bool = False
    #: Model kinds kept (``chat``, ``base``, ``unknown``; empty: all).
    kinds: tuple[str, ...] = ()
    #: Only each organisation's best ranked run (its siblings hidden).
    org_best: bool = False

    @property
    def narrowed(self) -> bool:
        """Whether any filter hides rows (the column chooser and the scope do not)."""
        return bool(
            self.model_types
            or self.sizes
            or self.precisions
            or self.search.strip()
            or self.complete_only
            or self.kinds
            or self.org_best
        )


def task_label(task_id: str) -> str:
    task = TASKS.get(task_id)
    return task.abbrev if task is not None else task_id.upper()


def heading(aggregate: Aggregate) -> str:
    """An aggregate's label as a column heading of its own: ``Best prompt``, ``MaxP``."""
    return aggregate.label[:1].upper() + aggregate.label[1:]


def column_label(task_id: str, aggregate: Aggregate) -> str:
    """``TE CPS``, ``SUM best prompt``: the header of a per-task column."""
    return f"{task_label(task_id)} {aggregate.label}"


def _spread(row: pd.Series | None, task_id: str) -> float | None:
    """MaxP − AvgP as :mod:`leaderboard.tracks.evalita.app.tables` computed it, from the unrounded scores."""
    if row is None:
        return None
    return _num(row.get(task_column(task_id, Aggregate.SPREAD)))
