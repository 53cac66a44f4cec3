"""The leaderboard's tables, computed from loaded results (the UI and the export render them).

Every column name is derived here, once, from the suite: ``<task>_<aggregate>`` for
each task and :class:`Aggregate`, plus the overall averages.  Scores are shown as the
paper does: 0–100 with two decimals (:func:`leaderboard.core.numbers.percent`); a value
that cannot be computed is empty (NaN in the frame, ``null`` in JSON), never 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import pandas as pd

from leaderboard.core.numbers import percent
from leaderboard.core.summary import UncertaintySummary
from leaderboard.core.tiers import TierEntry, assign_tiers
from leaderboard.tracks.evalita.app.compact import kept_draws, release_spilled
from leaderboard.tracks.evalita.app.records import RUN_KEY, LoadedResults, PromptScores, RunKey
from leaderboard.tracks.evalita.definition import SUITE, TaskSpec, get_task
from leaderboard.tracks.evalita.metrics import (
    OverallScore,
    Score,
    TaskScore,
    overall_score,
    prompt_summary,
    score_task,
)
from leaderboard.tracks.evalita.uncertainty import MEAN_CPS_FIGURE, MEAN_CPS_TIE_FIGURE, cps_figure
from leaderboard.tracks.evalita.vocabulary import MODEL_AGGREGATES, PROMPT_AGGREGATES, Aggregate


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


def low_column(column: str) -> str:
    """``avg_cps_low``, ``te_cps_low``: the lower end of a figure's 95 % interval (0–100)."""
    return f"{column}_low"


def high_column(column: str) -> str:
    return f"{column}_high"


#: A run's tier within its setting: 1 + the runs significantly better (empty: no per-item data).
TIER_COLUMN = "tier"
#: The intervals of the ranking (after every older column, so that existing readers are unaffected):
#: the mean CPS's, then each task's CPS's; empty when the run kept no per-item data.
INTERVAL_COLUMNS: tuple[str, ...] = tuple(
    f(column)
    for column in (MAIN_SCORE_COLUMN, *(task_column(task.id, Aggregate.CPS) for task in SUITE))
    for f in (low_column, high_column)
)
RANKING_COLUMNS: tuple[str, ...] = (
    RANK_COLUMN,
    *RUN_KEY,
    *METADATA_COLUMNS,
    *OVERALL_COLUMNS,
    *TASK_COLUMNS,
    TIER_COLUMN,
    *INTERVAL_COLUMNS,
)

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
        *INTERVAL_COLUMNS,
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


# (figure in the uncertainty block, column) of every interval of a ranking row.
_INTERVAL_CELLS: tuple[tuple[str, str], ...] = (
    (MEAN_CPS_FIGURE, MAIN_SCORE_COLUMN),
    *((cps_figure(task.id), task_column(task.id, Aggregate.CPS)) for task in SUITE),
)


def _ranking_row(
    run: dict[str, object], prompt_scores: PromptScores, uncertainty: UncertaintySummary | None = None
) -> dict[str, object]:
    task_scores = {task.id: score_task(task, prompt_scores.get(task.id, {})) for task in SUITE}
    overall: OverallScore = overall_score({task_id: result.cps for task_id, result in task_scores.items()})
    row: dict[str, object] = {column: run[column] for column in _RUN_FIELDS}
    row[MAIN_SCORE_COLUMN] = percent(overall.avg_cps)
    row["mc_avg_cps"] = percent(overall.mc_avg_cps)
    row["gen_avg_cps"] = percent(overall.gen_avg_cps)
    row["_sort"] = overall.avg_cps  # unrounded, so that ties in display do not decide the order
    for task, aggregate, column in _TASK_CELLS:
        row[column] = _task_cell(task_scores[task.id], aggregate)
    intervals = uncertainty.intervals if uncertainty is not None else {}
    for figure, column in _INTERVAL_CELLS:
        low, high = intervals.get(figure, (None, None))
        row[low_column(column)], row[high_column(column)] = percent(low), percent(high)
    return row


def setting_tiers(
    keys: list[RunKey], scores: list[float | None], uncertainty: Mapping[RunKey, UncertaintySummary | None]
) -> list[int | None]:
    """The tier of each run of one setting (:func:`leaderboard.core.tiers.assign_tiers` on the
    mean CPS's kept draws); ``None`` for a run without per-item data or without a mean CPS.

    Only runs whose draws are paired can be told apart: those of the most common draws key (the
    official test sets' items).  A run of other items (a changed dataset) gets no tier.
    """
    draws = {}
    for key, score in zip(keys, scores, strict=True):
        summary = uncertainty.get(key)
        kept, tie = kept_draws(summary, MEAN_CPS_FIGURE), kept_draws(summary, MEAN_CPS_TIE_FIGURE)
        # A block without the tie-aware draws predates the calibrated method: not paired.
        if kept is not None and tie is not None and score is not None:
            draws[key] = (kept, tie)
    if not draws:
        return [None] * len(keys)
    common, _ = Counter(kept[0] for kept, _ in draws.values()).most_common(1)[0]
    entries = [
        # float32, as kept: assign_tiers then stacks one float32 matrix (half the memory).
        TierEntry(str(i), score, draws[key][0][1], common, draws[key][1][1])
        if key in draws and draws[key][0][0] == common
        else TierEntry(str(i), None)
        for i, (key, score) in enumerate(zip(keys, scores, strict=True))
    ]
    tiers = [result.tier for result in assign_tiers(entries)]
    # The draws were read from their mapped file (the cold start's): its pages need not stay resident.
    del entries, draws
    release_spilled(uncertainty.get(key) for key in keys)
    return tiers


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
    by_run, uncertainty = loaded.prompt_scores, loaded.uncertainty
    keys = _run_keys(runs)
    rows = [
        _ranking_row(run, by_run.get(key, {}), uncertainty.get(key))
        for run, key in zip(runs[list(_RUN_FIELDS)].to_dict("records"), keys, strict=True)
    ]
    table = pd.DataFrame(rows, columns=[*(c for c in RANKING_COLUMNS[1:] if c != TIER_COLUMN), "_sort"])
    table["_key"] = keys
    # Zero-shot and few-shot runs are ranked separately: a 5-shot score is no rival to a 0-shot one.
    table = table.sort_values(
        ["num_fewshot", "_sort", "model"], ascending=[True, False, True], na_position="last", kind="stable"
    )
    # Only comparable runs earn a rank: a sample or limited run is listed, never placed.
    comparable = table["comparable"].astype(bool)
    rankable = table["_sort"].where(comparable)
    ranks = rankable.groupby(table["num_fewshot"]).rank(method="min", ascending=False)
    table.insert(0, RANK_COLUMN, ranks.astype("Int64"))
    # Tiers the same way: among the setting's comparable runs, in rank order.
    tiers = pd.Series(pd.NA, index=table.index, dtype="Int64")
    for _, group in table[comparable].groupby("num_fewshot"):
        scores = [None if pd.isna(v) else float(v) for v in group["_sort"]]
        tiers.loc[group.index] = pd.array(
            setting_tiers(list(group["_key"]), scores, uncertainty), dtype="Int64"
        )
    table[TIER_COLUMN] = tiers
    return table[list(RANKING_COLUMNS)].reset_index(drop=True)


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
