"""``python -m leaderboard export --track long-context``: every number of every run, one row per setting.

:func:`export_results` (the spec's export) prints both METEORs, the unparsed rate, counts and
truncation (:func:`~leaderboard.tracks.long_context.app.tables.export_table`); ``--format
table`` shows the paper's Table 5 columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from leaderboard.export import ExportOptions, ExportTable, hidden_runs_note
from leaderboard.tracks.long_context.app.tables import (
    SCORE_METRICS,
    TABLE5_COLUMN_NAMES,
    column,
    column_label,
    export_table,
    interval_columns,
)
from leaderboard.tracks.long_context.definition import Metric, QuestionSet
from leaderboard.tracks.long_context.schema import LongContextResults

#: ``export --format table``: the run, its setting and the Table 5 columns (with the unparsed rates).
TABLE5_SUMMARY: Mapping[str, str] = MappingProxyType(
    {
        "model": "model",
        "precision": "precision",
        "setting": "setting",
        "data": "data",
        "variant": "variant",
        **{name: column_label(name) for name in TABLE5_COLUMN_NAMES},
        **{
            column(qs, Metric.UNPARSED): column_label(column(qs, Metric.UNPARSED))
            for qs in (QuestionSet.LOCAL, QuestionSet.LOCAL_ALT)
        },
        "words_cut": "cut (words)",
        "window_cut": "cut (window)",
        "seen_fraction_mean": "book seen",
        "kept_side": "window kept",
    }
)
PERCENT_COLUMNS: frozenset[str] = frozenset(
    name
    for qs in QuestionSet
    for m in SCORE_METRICS
    for name in (column(qs, m), *interval_columns(column(qs, m)))
)


def export_results(records: Mapping[str, LongContextResults], options: ExportOptions) -> ExportTable:
    """One row per run and setting; runs not comparable with the official data only on request."""
    runs = list(records.values())
    table = export_table(runs, include_noncomparable=options.include_noncomparable)
    hidden = sum(1 for run in runs if not run.comparable) if not options.include_noncomparable else 0
    notes = hidden_runs_note(
        hidden,
        "sample or local data, a --limit, a variant (the window's start kept, a chat template), or hub "
        "data whose revision is unrecorded or whose counts differ from the paper's Table 2",
    )
    return ExportTable(table, PERCENT_COLUMNS, notes, TABLE5_SUMMARY)
