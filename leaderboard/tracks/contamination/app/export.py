"""``python -m leaderboard export --track contamination``: one row per run and set."""

from __future__ import annotations

from collections.abc import Mapping

from leaderboard.export import ExportOptions, ExportTable, hidden_runs_note
from leaderboard.tracks.contamination.app.tables import PERCENT_COLUMNS, set_table
from leaderboard.tracks.contamination.schema import ContaminationResults


def export_results(records: Mapping[str, ContaminationResults], options: ExportOptions) -> ExportTable:
    """Every set of every run; runs on sample or local data, a --limit or a set subset only on request.

    CoDeC and its band are percentages (0–100, as shown); p-values are text with three
    significant digits, never rounded to 0.
    """
    table = set_table(records, include_noncomparable=options.include_noncomparable)
    hidden = 0 if options.include_noncomparable else sum(not r.comparable for r in records.values())
    notes = hidden_runs_note(hidden, "sample or local data, a --limit, or a subset of the sets")
    return ExportTable(table, PERCENT_COLUMNS, notes)
