"""The judge track's entry in the results registry: its parser and ``leaderboard export --track judge``.

``parse`` reads one results file into a :class:`~leaderboard.tracks.judge.app.tables.JudgeRun`
(through the shared envelope's safe reader); ``export`` prints the judges table, the
paper's Table 1 layout (one row per judge: Spearman ρ, its p-value, MAE, bias and the
unparsed rate per criterion and overall).  Runs on the sample or a local set, or with a
limit, are left out unless ``--include-noncomparable`` asks for them, and a note says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from eval_queue.vocabulary import Track
from leaderboard.tracks import ExportOptions, ExportTable, ResultsTrack
from leaderboard.tracks.judge.app.tables import (
    NOT_ENOUGH_DATA,
    OVERALL,
    SCOPES,
    JudgeRun,
    TableFigure,
    judges_table,
    latest,
    stat_column,
)
from leaderboard.tracks.judge.definition import CRITERIA, JudgeMode
from leaderboard.tracks.judge.schema import JudgeResultsFile


def parse_judge_file(data: bytes, path: str) -> JudgeRun:
    """A judge results file as the record the tables need; :class:`MalformedFileError` if unusable."""
    return JudgeRun(path, JudgeResultsFile.from_json(data, path))


#: ``export --format table``: the judge, its data, then ρ and MAE overall and ρ per criterion.
JUDGES_SUMMARY: Mapping[str, str] = MappingProxyType(
    {
        "judge": "judge",
        "precision": "precision",
        "data": "data",
        "limit": "limit",
        stat_column(OVERALL, TableFigure.RHO): "ρ",
        stat_column(OVERALL, TableFigure.P): "p",
        stat_column(OVERALL, TableFigure.MAE): "MAE",
        stat_column(OVERALL, TableFigure.BIAS): "bias",
        stat_column(OVERALL, TableFigure.UNPARSED): "unparsed",
        **{stat_column(c, TableFigure.RHO): f"ρ {c.label.lower()}" for c in CRITERIA},
    }
)


def export_judges(records: Mapping[str, JudgeRun], options: ExportOptions) -> ExportTable:
    """The judges table (Table 1 layout) and notes on what it leaves out and on empty cells."""
    runs = list(records.values())
    table = judges_table(runs, include_noncomparable=options.include_noncomparable)
    notes: list[str] = []
    if not options.include_noncomparable:
        meta = [r for r in latest(runs) if r.mode is JudgeMode.META]
        hidden = sum(not r.comparable for r in meta)
        if hidden:
            notes.append(
                f"{hidden} judge run(s) on the sample or a local annotated set, or with a limit, were "
                "left out; --include-noncomparable shows them"
            )
    figures = [stat_column(scope, figure) for scope in SCOPES for figure in TableFigure]
    if table[figures].isna().any().any():
        notes.append(
            f"an empty cell is {NOT_ENOUGH_DATA} (fewer than three scored items, or constant scores)"
        )
    return ExportTable(table, frozenset(), tuple(notes), JUDGES_SUMMARY)


RESULTS: ResultsTrack[JudgeRun] = ResultsTrack(Track.JUDGE, parse=parse_judge_file, export=export_judges)
