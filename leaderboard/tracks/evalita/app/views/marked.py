"""Other tracks' markers on the ranking's task cells (``TrackSpec.ranking_markers``): one pure function.

The ranking tab calls :func:`mark_task_cells` on the page of rows it shows, once, after paging:
the view's table (and its CSV) keep plain numbers.  Which tracks mark what is theirs to say
(:mod:`leaderboard.ui.markers`); this module only knows which columns are a task's.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from eval_queue.vocabulary import RunRef
from leaderboard.tracks.evalita.app.views.labels import column_label
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.vocabulary import RANKING_AGGREGATES
from leaderboard.ui.markers import MarkerKey, RankingMarker, marked_cell, markers_by_run
from leaderboard.views.common import KEY_COLUMN, html_text

#: The settings' suffixes of a task column in the both-settings view (``TE CPS 0``, ``TE CPS 5``).
_SUFFIXES = ("", " 0", " 5")


def task_of_column(columns: pd.Index) -> dict[str, str]:
    """Column → task id, for every column of ``columns`` that shows a task's score."""
    owned = {
        column_label(task.id, aggregate) + suffix: str(task.id)
        for task in SUITE
        for aggregate in RANKING_AGGREGATES
        for suffix in _SUFFIXES
    }
    return {column: owned[column] for column in columns if column in owned}


def _shown(value: object, na_rep: str) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return na_rep
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def mark_task_cells(
    rows: pd.DataFrame, markers: Mapping[MarkerKey, tuple[RankingMarker, ...]], na_rep: str = "—"
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """``rows`` with each marked task cell as HTML (its value, then its markers' links), and the
    columns that now hold HTML.  Unmarked rows and tables without markers come back unchanged."""
    if not markers or rows.empty or KEY_COLUMN not in rows.columns:
        return rows, ()
    by_run = markers_by_run(markers)
    columns = task_of_column(rows.columns)
    marked = rows.copy()
    html: set[str] = set()
    for position, key in enumerate(rows[KEY_COLUMN]):
        ref = RunRef.parse(key) if isinstance(key, str) else None
        tasks = by_run.get((ref.model, ref.revision)) if ref is not None else None
        if not tasks:
            continue
        for column, task in columns.items():
            if task in tasks:
                if column not in html:
                    marked[column] = marked[column].map(lambda v: html_text(_shown(v, na_rep))).astype(object)
                    html.add(column)
                marked.iat[position, marked.columns.get_loc(column)] = marked_cell(
                    _shown(rows[column].iloc[position], na_rep), tasks[task], key
                )
    return marked, tuple(c for c in rows.columns if c in html)
