"""The toy track's parser and export: no gradio, as every track's export module, so that
``python -m leaderboard export --track toy`` does not import the page (seconds of CPU)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from leaderboard.export import ExportOptions, ExportTable, hidden_runs_note
from tests.support.toy_track.schema import ToyResults


def parse_results_file(data: bytes, path: str) -> ToyResults:
    return ToyResults.from_json(data, path)


def score_table(records: Mapping[str, ToyResults], include_noncomparable: bool) -> pd.DataFrame:
    """One row per run: the export's table and the tab's."""
    rows = [
        {"model": r.model.id, "score": round(r.score * 100, 2), "worker": r.run.worker_id, "data": r.run.data}
        for r in records.values()
        if include_noncomparable or r.comparable
    ]
    return pd.DataFrame(rows, columns=["model", "score", "worker", "data"])


def export_results(records: Mapping[str, ToyResults], options: ExportOptions) -> ExportTable:
    table = score_table(records, options.include_noncomparable)
    hidden = 0 if options.include_noncomparable else sum(not r.comparable for r in records.values())
    return ExportTable(table, frozenset({"score"}), hidden_runs_note(hidden, "sample data"))
