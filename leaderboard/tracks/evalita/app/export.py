"""``python -m leaderboard export`` (the default track): the ranked table, or one row per prompt.

The spec names :func:`export_results`; the rows come from :mod:`.tables`, the runs from
:mod:`.results` (what its parser kept of every Evalita file).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import pandas as pd

from leaderboard.export import ALL_METRIC_SETS, ExportOptions, ExportTable, hidden_runs_note
from leaderboard.tracks.evalita.app.records import LoadedResults, RunRecord, loaded_from_records
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
from leaderboard.tracks.evalita.metric_sets import DEFAULT_METRIC_SET, MetricSet, differing_tasks


def export_results(records: Mapping[str, RunRecord], options: ExportOptions) -> ExportTable:
    """The ranked table (or, with ``options.prompts``, the per-prompt table) and what it leaves out.

    In metric set ``options.metrics`` (default lm-eval; ``both``: the lm-eval rows, then the
    as-specified ones), named in the ``metrics`` column; each set is ranked on its own.
    """
    loaded = loaded_from_records(records, [])
    chosen = (
        list(MetricSet)
        if options.metrics == ALL_METRIC_SETS
        else [MetricSet(options.metrics or DEFAULT_METRIC_SET)]
    )
    tables = [
        _table(loaded.for_metric_set(metrics), options).assign(metrics=metrics.value) for metrics in chosen
    ]
    table = pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]
    summary = PROMPT_SUMMARY if options.prompts else RANKING_SUMMARY
    notes = _hidden(loaded, options) + _missing(loaded, chosen, options)
    return ExportTable(
        table, PERCENT_COLUMNS, notes, {**summary, **({"metrics": "metrics"} if len(chosen) > 1 else {})}
    )


def _table(loaded: LoadedResults, options: ExportOptions) -> pd.DataFrame:
    if options.prompts:
        return all_prompts_table(loaded, options.num_fewshot, options.include_noncomparable)
    return ranking_table(loaded, options.num_fewshot, options.include_noncomparable)


def _missing(loaded: LoadedResults, chosen: list[MetricSet], options: ExportOptions) -> tuple[str, ...]:
    """Say how many runs shown have no scores of a chosen set (their changed tasks are empty)."""
    notes = []
    if chosen != [MetricSet.LM_EVAL]:
        notes.append(
            "as-specified scores: the Evalita-LLM paper's own metrics for "
            + ", ".join(t.id for t in differing_tasks())
            + " (not comparable with the paper's tables or the official board; see the About page)"
        )
    for metrics in chosen:
        keys = [k for k in loaded.missing_in(metrics) if options.num_fewshot in (None, k[3])]
        if keys:
            notes.append(
                f"{len(keys)} run(s) have no {metrics} scores yet (their {', '.join(t.id for t in differing_tasks(metrics))} "
                "are empty and they are not ranked in that set); python -m backend rescore fills them"
            )
    return tuple(notes)


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
