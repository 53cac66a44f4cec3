"""The leaderboard's tables, computed from loaded results (the UI and the export render them).

Every column name is derived here, once, from the suite: ``<task>_<aggregate>`` for
each task and :class:`Aggregate`, plus the overall averages.  Scores are shown as the
paper does: 0–100 with two decimals (:func:`leaderboard.tracks.evalita.metrics.percent`); a value
that cannot be computed is empty (NaN in the frame, ``null`` in JSON), never 0.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from eval_queue.vocabulary import MODEL_AGGREGATES, PROMPT_AGGREGATES, Aggregate
from leaderboard.core.numbers import percent
from leaderboard.tracks.evalita.app.results import RUN_KEY, LoadedResults, PromptScores, RunKey
from leaderboard.tracks.evalita.definition import SUITE, TaskSpec, get_task
from leaderboard.tracks.evalita.metrics import (
    OverallScore,
    Score,
    TaskScore,
    overall_score,
    prompt_summary,
    score_task,
)


def task_column(task_id: str, aggregate: Aggregate) -> str:
    """``te_cps``, ``sum_best_prompt``, …: the one place that builds a task column name."""
    return f"{task_id}_{aggregate}"


def _task_cell(result: TaskScore, aggregate: Aggregate) -> Score | str | None:
    match aggregate:
        case Aggregate.MAXP:
            return percent(result.maxp)
        case Aggregate.AVGP:
            return percent(result.avgp)
        case Aggregate.CPS:
            return percent(result.cps)
        case Aggregate.BEST_PROMPT:
            return result.best_prompt
        case Aggregate.SPREAD:
            # From the unrounded scores (1 − Sat), never from the rounded MaxP and AvgP.
            return None if result.sat is None else percent(1.0 - result.sat)
        case _:
            raise AssertionError(f"unhandled aggregate {aggregate!r}")


RANK_COLUMN = "rank"
#: The ranking score: mean CPS over the ten tasks.
MAIN_SCORE_COLUMN = "avg_cps"
OVERALL_COLUMNS: tuple[str, ...] = (MAIN_SCORE_COLUMN, "mc_avg_cps", "gen_avg_cps")
METADATA_COLUMNS: tuple[str, ...] = (
    "params_b",
    "model_type",
    "license",
    "architecture",
    "data",
    "limit",
    "comparable",
    "finished_at",
    "results_path",
    "details_path",
)
TASK_COLUMNS: tuple[str, ...] = tuple(task_column(task.id, agg) for task in SUITE for agg in MODEL_AGGREGATES)
RANKING_COLUMNS: tuple[str, ...] = (RANK_COLUMN, *RUN_KEY, *METADATA_COLUMNS, *OVERALL_COLUMNS, *TASK_COLUMNS)

PROMPT_COLUMNS: tuple[str, ...] = (
    "task",
    "num_fewshot",
    "prompt",
    "paper_prompt",
    "n_models",
    *(aggregate.value for aggregate in PROMPT_AGGREGATES),
)

#: Columns holding 0–100 scores with two decimals (the export prints them as such).
PERCENT_COLUMNS: frozenset[str] = frozenset(
    (
        *OVERALL_COLUMNS,
        *(task_column(t.id, agg) for t in SUITE for agg in MODEL_AGGREGATES if agg.is_score),
        *(aggregate.value for aggregate in PROMPT_AGGREGATES),
    )
)


def _selected_runs(
    loaded: LoadedResults, num_fewshot: int | None, include_noncomparable: bool
) -> pd.DataFrame:
    runs = loaded.runs
    if num_fewshot is not None:
        runs = runs[runs["num_fewshot"] == num_fewshot]
    if not include_noncomparable:
        runs = runs[runs["comparable"].astype(bool)]
    return runs


def _run_keys(runs: pd.DataFrame) -> list[RunKey]:
    """The key of each row of ``runs``, in order (columns read as lists: no per-cell pandas access)."""
    return list(
        zip(
            runs["model"].tolist(),
            runs["revision"].tolist(),
            runs["precision"].tolist(),
            [int(k) for k in runs["num_fewshot"].tolist()],
            strict=True,
        )
    )


# The run columns a ranking row copies, and (task, aggregate, column) of each task cell in order.
_RUN_FIELDS: tuple[str, ...] = (*RUN_KEY, *METADATA_COLUMNS)
_TASK_CELLS: tuple[tuple[TaskSpec, Aggregate, str], ...] = tuple(
    (task, aggregate, task_column(task.id, aggregate)) for task in SUITE for aggregate in MODEL_AGGREGATES
)


def _ranking_row(run: dict[str, object], prompt_scores: PromptScores) -> dict[str, object]:
    task_scores = {task.id: score_task(task, prompt_scores.get(task.id, {})) for task in SUITE}
    overall: OverallScore = overall_score({task_id: result.cps for task_id, result in task_scores.items()})
    row: dict[str, object] = {column: run[column] for column in _RUN_FIELDS}
    row[MAIN_SCORE_COLUMN] = percent(overall.avg_cps)
    row["mc_avg_cps"] = percent(overall.mc_avg_cps)
    row["gen_avg_cps"] = percent(overall.gen_avg_cps)
    row["_sort"] = overall.avg_cps  # unrounded, so that ties in display do not decide the order
    for task, aggregate, column in _TASK_CELLS:
        row[column] = _task_cell(task_scores[task.id], aggregate)
    return row


def ranking_table(
    loaded: LoadedResults, num_fewshot: int | None = None, include_noncomparable: bool = False
) -> pd.DataFrame:
    """One row per (model, revision, precision, num_fewshot), best mean CPS first.

    Without ``num_fewshot`` both settings are listed, zero-shot first, each ranked on its own.

    Models without a score for every task are kept (their averages empty, no rank) so
    the UI can show them; non-comparable runs (``limit`` set or non-hub data) are left
    out unless ``include_noncomparable``, and even then get no rank.
    Columns: :data:`RANKING_COLUMNS`.
    """
    runs = _selected_runs(loaded, num_fewshot, include_noncomparable)
    by_run = loaded.prompt_scores
    rows = [
        _ranking_row(run, by_run.get(key, {}))
        for run, key in zip(runs[list(_RUN_FIELDS)].to_dict("records"), _run_keys(runs), strict=True)
    ]
    table = pd.DataFrame(rows, columns=[*RANKING_COLUMNS[1:], "_sort"])
    # Zero-shot and few-shot runs are ranked separately: a 5-shot score is no rival to a 0-shot one.
    table = table.sort_values(
        ["num_fewshot", "_sort", "model"], ascending=[True, False, True], na_position="last", kind="stable"
    )
    # Only comparable runs earn a rank: a sample or limited run is listed, never placed.
    rankable = table["_sort"].where(table["comparable"].astype(bool))
    ranks = rankable.groupby(table["num_fewshot"]).rank(method="min", ascending=False)
    table.insert(0, RANK_COLUMN, ranks.astype("Int64"))
    return table.drop(columns="_sort").reset_index(drop=True)


def prompt_table(
    loaded: LoadedResults, task_id: str, num_fewshot: int, include_noncomparable: bool = False
) -> pd.DataFrame:
    """MinP, MaxP, AvgP and CPS of each prompt of ``task_id`` over the models present (eq. 1, 3, 5, 7, 9).

    Columns: :data:`PROMPT_COLUMNS`; one row per prompt of the task, in suite order.
    """
    task = get_task(task_id)
    return pd.DataFrame(
        _prompt_rows(loaded, task, num_fewshot, include_noncomparable), columns=list(PROMPT_COLUMNS)
    )


def _prompt_rows(
    loaded: LoadedResults, task: TaskSpec, num_fewshot: int, include_noncomparable: bool
) -> list[dict[str, object]]:
    runs = _selected_runs(loaded, num_fewshot, include_noncomparable)
    empty: PromptScores = {}
    task_scores = [loaded.prompt_scores.get(key, empty).get(task.id, {}) for key in _run_keys(runs)]
    rows = []
    for prompt in task.prompts:
        summary = prompt_summary([scores.get(prompt.id) for scores in task_scores])
        rows.append(
            {
                "task": task.id,
                "num_fewshot": num_fewshot,
                "prompt": prompt.id,
                "paper_prompt": prompt.paper_id,
                "n_models": summary.n_models,
                Aggregate.MINP.value: percent(summary.minp),
                Aggregate.MAXP.value: percent(summary.maxp),
                Aggregate.AVGP.value: percent(summary.avgp),
                Aggregate.CPS.value: percent(summary.cps),
            }
        )
    return rows


def all_prompts_table(
    loaded: LoadedResults, num_fewshot: int | None = None, include_noncomparable: bool = False
) -> pd.DataFrame:
    """:func:`prompt_table` for every task: one row per (task, num_fewshot, prompt).

    Without ``num_fewshot``, every setting that has at least one run shown.
    """
    if num_fewshot is None:
        present = set(_selected_runs(loaded, None, include_noncomparable)["num_fewshot"].astype(int))
        settings: Iterable[int] = sorted(present)
    else:
        settings = (num_fewshot,)
    rows = [
        row
        for shots in settings
        for task in SUITE
        for row in _prompt_rows(loaded, task, shots, include_noncomparable)
    ]
    return pd.DataFrame(rows, columns=list(PROMPT_COLUMNS))
