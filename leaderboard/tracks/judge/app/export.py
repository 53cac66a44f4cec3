"""``python -m leaderboard export --track judge``: the judges table, the paper's Table 1 layout.

One row per judge: Spearman ρ, its p-value, MAE, bias and the unparsed rate per criterion and
overall, with the annotated set (``data``, ``set_sha256``) and the ``protocol``; the 95 %
intervals of ρ and MAE (``<scope>_rho_low``…) and whether the judge's ρ is distinguishable from
the best judge's on the same set (``<scope>_vs_best``); rows are grouped by set and ranked within
it.  Runs that are not comparable with the paper's Table 1 are left out unless
``--include-noncomparable`` asks for them, and a note says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from leaderboard.export import ExportOptions, ExportTable, hidden_runs_note
from leaderboard.tracks.judge.app.intervals import interval_table, vs_best_column
from leaderboard.tracks.judge.app.records import JudgeRun, latest
from leaderboard.tracks.judge.app.tables import (
    ALL_ANSWERS_COLUMNS,
    NOT_ENOUGH_DATA,
    OVERALL,
    SCOPES,
    TableFigure,
    judges_table,
    stat_column,
)
from leaderboard.tracks.judge.definition import JudgeMode
from leaderboard.tracks.judge.rubric import CRITERIA

#: ``export --format table``: the judge, its data, then ρ and MAE overall and ρ per criterion.
JUDGES_SUMMARY: Mapping[str, str] = MappingProxyType(
    {
        "judge": "judge",
        "precision": "precision",
        "protocol": "protocol",
        "data": "data",
        "limit": "limit",
        "standing": "standing",
        stat_column(OVERALL, TableFigure.RHO): "ρ",
        vs_best_column(OVERALL): "vs best ρ",
        stat_column(OVERALL, TableFigure.P): "p",
        stat_column(OVERALL, TableFigure.MAE): "MAE",
        stat_column(OVERALL, TableFigure.BIAS): "bias",
        stat_column(OVERALL, TableFigure.UNPARSED): "unparsed",
        ALL_ANSWERS_COLUMNS[0]: "ρ (unparsed at worst)",
        **{stat_column(c, TableFigure.RHO): f"ρ {c.label.lower()}" for c in CRITERIA},
    }
)


def export_results(records: Mapping[str, JudgeRun], options: ExportOptions) -> ExportTable:
    """The judges table (Table 1 layout) and notes on what it leaves out and on empty cells."""
    runs = list(records.values())
    table = judges_table(runs, include_noncomparable=options.include_noncomparable)
    intervals = interval_table(runs, include_noncomparable=options.include_noncomparable)
    table = table.merge(intervals, on="results_path", how="left")
    notes: list[str] = []
    if not options.include_noncomparable:
        meta = [r for r in latest(runs) if r.mode is JudgeMode.META]
        hidden = sum(not r.listed for r in meta)
        notes.extend(hidden_runs_note(hidden, "the project protocol, the sample, or a --limit"))
    figures = [stat_column(scope, figure) for scope in SCOPES for figure in TableFigure]
    if table[figures].isna().any().any():
        notes.append(
            f"an empty cell is {NOT_ENOUGH_DATA} (fewer than three scored items, or constant scores)"
        )
    notes.append(
        "ρ is over the parsed answers; 'ρ (unparsed at worst)' counts every answer, an unparsed one as "
        "the score farthest from the human's (Table 1's n = 250 per judge)"
    )
    return ExportTable(table, frozenset(), tuple(notes), JUDGES_SUMMARY)
