"""``python -m leaderboard export`` (the default track): the ranked table, or one row per prompt.

The spec names :func:`export_results`; the rows come from :mod:`.tables`, the runs from
:mod:`.results` (what its parser kept of every Evalita file).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import pandas as pd

from eval_queue.text import unknown_name
from leaderboard.export import ALL_METRIC_SETS, ExportOptions, ExportTable, hidden_runs_note
from leaderboard.tracks.evalita.app.records import LoadedResults, RunRecord, loaded_from_records
from leaderboard.tracks.evalita.app.tables import (
    MAIN_SCORE_COLUMN,
    PERCENT_COLUMNS,
    RANK_COLUMN,
    TIER_COLUMN,
    Aggregate,
    all_prompts_table,
    high_column,
    low_column,
    ranking_table,
    task_column,
)
from leaderboard.tracks.evalita.app.views import subsets
from leaderboard.tracks.evalita.definition import SUITE, TASK_IDS, TASKS
from leaderboard.tracks.evalita.metric_sets import DEFAULT_METRIC_SET, MetricSet, differing_tasks


def export_results(records: Mapping[str, RunRecord], options: ExportOptions) -> ExportTable:
    """The ranked table (or, with ``options.prompts``, the per-prompt table) and what it leaves out.

    In metric set ``options.metrics`` (default lm-eval; ``both``: the lm-eval rows, then the
    as-specified ones), named in the ``metrics`` column; each set is ranked on its own.
    """
    check_view_options(options)
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
    notes = _hidden(loaded, options) + _missing(loaded, chosen, options) + _incomplete(loaded, options)
    custom = {subsets.CUSTOM_COLUMN, low_column(subsets.CUSTOM_COLUMN), high_column(subsets.CUSTOM_COLUMN)}
    return ExportTable(
        table,
        PERCENT_COLUMNS | custom,
        notes,
        {**summary, **({"metrics": "metrics"} if len(chosen) > 1 else {})},
    )


def _table(loaded: LoadedResults, options: ExportOptions) -> pd.DataFrame:
    if options.prompts:
        return all_prompts_table(loaded, options.num_fewshot, options.include_noncomparable)
    table = ranking_table(loaded, options.num_fewshot, options.include_noncomparable)
    return _with_views(loaded, table, options)


def check_view_options(options: ExportOptions) -> None:
    """``ValueError`` naming an unknown task id or model kind (nothing is exported then)."""
    for task_id in options.average_over:
        if task_id not in TASKS:
            raise ValueError(unknown_name("task", task_id, TASK_IDS))
    for kind in options.kinds:
        if kind not in subsets.MODEL_KINDS:
            raise ValueError(unknown_name("model kind", kind, subsets.MODEL_KINDS))


def _with_views(loaded: LoadedResults, table: pd.DataFrame, options: ExportOptions) -> pd.DataFrame:
    """The ranking with the user views' columns (kind, organisation counts and best run, and the
    custom average when ``--average-over`` names tasks), each setting on its own, filtered as asked."""
    tasks = subsets.chosen_tasks(options.average_over)
    parts = [
        subsets.with_view_columns(group, loaded, tasks, RANK_COLUMN)
        for _, group in table.groupby("num_fewshot", sort=True)
    ]
    extra = [*subsets.VIEW_COLUMNS, *(subsets.CUSTOM_COLUMNS if tasks else ())]
    if not parts:
        return table.reindex(columns=[*table.columns, *extra])
    rows = pd.concat(parts, ignore_index=True)
    if options.kinds:
        rows = rows[rows[subsets.KIND_COLUMN].isin(options.kinds)]
    if options.org_best:
        rows = rows[rows[subsets.ORG_BEST_COLUMN]]
    if options.complete_only:
        rows = rows[subsets.missing_tasks(rows, _cps_columns(tasks)) == ""]
    return rows[[*table.columns, *extra]].reset_index(drop=True)


def _cps_columns(tasks: tuple[str, ...]) -> dict[str, str]:
    return {t: task_column(t, Aggregate.CPS) for t in (tasks or TASK_IDS)}


def _incomplete(loaded: LoadedResults, options: ExportOptions) -> tuple[str, ...]:
    """With ``--complete-only``: how many runs it hid, and which tasks they miss."""
    if not options.complete_only or options.prompts:
        return ()
    table = ranking_table(loaded, options.num_fewshot, options.include_noncomparable)
    text = subsets.hidden_text(
        subsets.missing_tasks(table, _cps_columns(subsets.chosen_tasks(options.average_over)))
    )
    return (f"{text} (--complete-only)",) if text else ()


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
        subsets.CUSTOM_COLUMN: "custom avg",
        subsets.CUSTOM_TIER_COLUMN: "custom tier",
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
