"""``python -m leaderboard export`` (the default track): the ranked table, or one row per prompt.

The spec names :func:`export_results`; the rows come from :mod:`.tables`, the runs from
:mod:`.results` (what its parser kept of every Evalita file).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from leaderboard.export import ExportOptions, ExportTable, hidden_runs_note
from leaderboard.tracks.evalita.app.results import LoadedResults, RunRecord, loaded_from_records
from leaderboard.tracks.evalita.app.tables import (
    MAIN_SCORE_COLUMN,
    PERCENT_COLUMNS,
    RANK_COLUMN,
    TIER_COLUMN,
    Aggregate,
    all_prompts_table,
    ranking_table,
    task_column,
)
from leaderboard.tracks.evalita.definition import SUITE


def export_results(records: Mapping[str, RunRecord], options: ExportOptions) -> ExportTable:
    """The ranked table (or, with ``options.prompts``, the per-prompt table) and what it leaves out."""
    loaded = loaded_from_records(records, [])
    if options.prompts:
        table = all_prompts_table(loaded, options.num_fewshot, options.include_noncomparable)
    else:
        table = ranking_table(loaded, options.num_fewshot, options.include_noncomparable)
    summary = PROMPT_SUMMARY if options.prompts else RANKING_SUMMARY
    return ExportTable(table, PERCENT_COLUMNS, _hidden(loaded, options), summary)


#: ``export --format table``: rank, tier, run, data, the mean CPS and each task's CPS (paper
#: abbreviations), in 120 columns; the intervals are in the CSV and JSON (``avg_cps_low``, …).
RANKING_SUMMARY: Mapping[str, str] = MappingProxyType(
    {
        RANK_COLUMN: "rank",
        TIER_COLUMN: "tier",
        "model": "model",
        "num_fewshot": "shots",
        "precision": "precision",
        "data": "data",
        "limit": "limit",
        MAIN_SCORE_COLUMN: "avg CPS",
        **{task_column(task.id, Aggregate.CPS): task.abbrev for task in SUITE},
    }
)
PROMPT_SUMMARY: Mapping[str, str] = MappingProxyType(
    {
        "task": "task",
        "num_fewshot": "shots",
        "paper_prompt": "prompt",
        "n_models": "models",
        "minp": "MinP",
        "maxp": "MaxP",
        "avgp": "AvgP",
        "cps": "CPS",
    }
)


def _hidden(loaded: LoadedResults, options: ExportOptions) -> tuple[str, ...]:
    """Say how many runs the table leaves out as not comparable, and how to show them."""
    if options.include_noncomparable:
        return ()
    runs = loaded.runs
    if options.num_fewshot is not None:
        runs = runs[runs["num_fewshot"] == options.num_fewshot]
    hidden = int((~runs["comparable"].astype(bool)).sum()) if not runs.empty else 0
    return hidden_runs_note(hidden, "sample or local data, a --limit, or a task subset")
