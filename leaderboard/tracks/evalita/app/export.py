"""The Evalita track's entry in the results registry: its parser and its export table.

The Evalita track predates ``leaderboard/tracks/`` (docs/TRACKS.md): its definition is
:mod:`leaderboard.tracks.evalita.definition`, its results view :mod:`leaderboard.tracks.evalita.app.results`, its tables
:mod:`leaderboard.tracks.evalita.app.tables`.  This module only plugs them into :mod:`leaderboard.tracks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from eval_queue.vocabulary import Track
from leaderboard.tracks import ExportOptions, ExportTable, ResultsTrack
from leaderboard.tracks.evalita.app.results import (
    LoadedResults,
    RunRecord,
    loaded_from_records,
    parse_evalita_file,
)
from leaderboard.tracks.evalita.app.tables import (
    MAIN_SCORE_COLUMN,
    PERCENT_COLUMNS,
    RANK_COLUMN,
    Aggregate,
    all_prompts_table,
    ranking_table,
    task_column,
)
from leaderboard.tracks.evalita.definition import SUITE


def export_table(records: Mapping[str, RunRecord], options: ExportOptions) -> ExportTable:
    """The ranked table (or, with ``options.prompts``, the per-prompt table) and what it leaves out."""
    loaded = loaded_from_records(records, [])
    if options.prompts:
        table = all_prompts_table(loaded, options.num_fewshot, options.include_noncomparable)
    else:
        table = ranking_table(loaded, options.num_fewshot, options.include_noncomparable)
    summary = PROMPT_SUMMARY if options.prompts else RANKING_SUMMARY
    return ExportTable(table, PERCENT_COLUMNS, hidden_runs_note(loaded, options), summary)


#: ``export --format table``: rank, run, data, the mean CPS and each task's CPS (paper abbreviations).
RANKING_SUMMARY: Mapping[str, str] = MappingProxyType(
    {
        RANK_COLUMN: "rank",
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


def hidden_runs_note(loaded: LoadedResults, options: ExportOptions) -> tuple[str, ...]:
    """Say how many runs the table leaves out as not comparable, and how to show them."""
    if options.include_noncomparable:
        return ()
    runs = loaded.runs
    if options.num_fewshot is not None:
        runs = runs[runs["num_fewshot"] == options.num_fewshot]
    hidden = int((~runs["comparable"].astype(bool)).sum()) if not runs.empty else 0
    if not hidden:
        return ()
    return (
        f"{hidden} run(s) not comparable with full runs on the official data (sample or local data, "
        "a --limit, or a task subset) were left out; --include-noncomparable shows them",
    )


RESULTS: ResultsTrack[RunRecord] = ResultsTrack(Track.EVALITA, parse=parse_evalita_file, export=export_table)
