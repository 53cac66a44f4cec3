"""The Evalita track's part of the contents table (:mod:`leaderboard.core.contents`).

One row per results file (its few-shot setting): the mean CPS (the ranking score; null for a
run that lacks a task), per task CPS, MaxP, AvgP and the best prompt (paper §5, computed by
:mod:`leaderboard.tracks.evalita.metrics` from the file's prompt scores), and every prompt's
score with its stderr and item count (``prompt_scores``: what the app's boards are built
from at cold start).  Scores on the 0–1 scale; null where the paper says N/A.

The prompt scores kept are those the app ranks: a task of the suite scored with its metric,
a prompt of that task (the rule of :mod:`leaderboard.tracks.evalita.app.records`); anything
else in a file is left out, as there.

The 95 % intervals of the run's ``uncertainty`` block (``avg_cps_low``/``avg_cps_high``,
``<task>_cps_low``/``<task>_cps_high``; null for a run without per-item data) and its mean CPS
under the ``as-specified`` metric set (``as_specified_avg_cps``, ``<task>_as_specified_cps`` for
the tasks that set scores differently; null when the file holds no current block) sit beside the
lm-eval scores.  Tiers are not stored: a run's tier depends on every other run of its setting,
so ``leaderboard export`` and the ranking compute them when they read.  ``record_json`` keeps the
file's ``metric_sets`` and ``uncertainty`` blocks as they are, for the app's cold start
(:mod:`leaderboard.tracks.evalita.app.contents`), but for the block's kept draws: those are in
``draws`` (each figure's float32 values as their little-endian bytes, :data:`DRAWS_SET`), read
without a JSON parse or a base64 decode (at 20,000 runs they were most of the cold start).  A row
written before ``draws`` existed has it null and its draws in ``record_json``.
"""

from __future__ import annotations

import json
from binascii import a2b_base64
from typing import Any

import pyarrow as pa

from eval_queue.vocabulary import fewshot_label
from leaderboard.core.contents import Row, TrackContents, column
from leaderboard.core.schema import ResultsEnvelope
from leaderboard.tracks.evalita.definition import SUITE, TASKS
from leaderboard.tracks.evalita.metric_sets import MetricSet, differing_tasks, has_current_block, set_tasks
from leaderboard.tracks.evalita.metrics import overall_score, score_task
from leaderboard.tracks.evalita.schema import ResultsFile
from leaderboard.tracks.evalita.uncertainty import MEAN_CPS_FIGURE, cps_figure

#: One prompt's score in ``prompt_scores``.
PROMPT_SCORE = pa.struct(
    [
        pa.field("task", pa.string()),
        pa.field("prompt", pa.string()),
        pa.field("score", pa.float64()),
        pa.field("stderr", pa.float64()),
        pa.field("n", pa.int64()),
    ]
)
#: One kept draw set in ``draws``: the figure, its resamples' key, its float32 values as bytes
#: (little-endian: the bytes the block's base64 text encodes).
DRAWS_SET = pa.struct(
    [
        pa.field("figure", pa.string()),
        pa.field("key", pa.string()),
        pa.field("float32", pa.binary()),
    ]
)
#: One prompt score as the app's records keep it: task, prompt, score, stderr, n.
PromptRow = tuple[str, str, float | None, float | None, int | None]


def _columns() -> tuple[pa.Field, ...]:
    fields = [
        column("avg_cps", pa.float64(), "evalita: mean CPS over the ten tasks (the ranking score; 0–1)"),
        column("avg_cps_low", pa.float64(), "evalita: lower end of the mean CPS's 95 % interval"),
        column("avg_cps_high", pa.float64(), "evalita: upper end of the mean CPS's 95 % interval"),
        column(
            "as_specified_avg_cps",
            pa.float64(),
            "evalita: mean CPS under the as-specified metric set (the paper's own metrics; not the paper's tables)",
        ),
    ]
    for task in SUITE:
        name = f"evalita: {task.abbrev}"
        fields += [
            column(f"{task.id}_cps", pa.float64(), f"{name} CPS = (1 − (MaxP − AvgP)) · MaxP"),
            column(f"{task.id}_maxp", pa.float64(), f"{name} best prompt's score (MaxP)"),
            column(f"{task.id}_avgp", pa.float64(), f"{name} mean prompt score (AvgP)"),
            column(f"{task.id}_best_prompt", pa.string(), f"{name} the prompt that reached MaxP"),
            column(f"{task.id}_cps_low", pa.float64(), f"{name} lower end of CPS's 95 % interval"),
            column(f"{task.id}_cps_high", pa.float64(), f"{name} upper end of CPS's 95 % interval"),
        ]
    for task in differing_tasks(MetricSet.AS_SPECIFIED):
        fields.append(
            column(
                f"{task.id}_as_specified_cps", pa.float64(), f"evalita: {task.abbrev} CPS, as-specified set"
            )
        )
    fields += [
        column(
            "prompt_scores",
            pa.list_(PROMPT_SCORE),
            "evalita: every prompt's score (0–1), stderr and items: task, prompt, score, stderr, n",
        ),
        column(
            "record_json",
            pa.string(),
            "evalita: the file's metric_sets and uncertainty blocks, as JSON, but for the draws (what the app's cold start reads)",
        ),
        column(
            "draws",
            pa.list_(DRAWS_SET),
            "evalita: the uncertainty block's kept draws: figure, key, float32 values as little-endian bytes",
        ),
    ]
    return tuple(fields)


def known_prompt_scores(results: ResultsFile) -> list[PromptRow]:
    """The file's prompt scores the app ranks: suite tasks with their metric, their prompts."""
    rows: list[PromptRow] = []
    for task_id, task_result in results.tasks.items():
        task = TASKS.get(task_id)
        if task is None or task_result.metric != task.metric:
            continue
        for prompt_id, prompt in task_result.prompts.items():
            if prompt_id in task.prompt_ids:
                rows.append((task_id, prompt_id, prompt.score, prompt.stderr, prompt.n))
    return rows


def interval_columns(results: ResultsFile) -> dict[str, Any]:
    """The 95 % intervals of the run's mean CPS and of each task's CPS (none without per-item data)."""
    if results.uncertainty is None:
        return {}
    intervals = results.uncertainty.intervals
    columns: dict[str, Any] = {}
    for name, figure in (("avg_cps", MEAN_CPS_FIGURE), *((f"{t.id}_cps", cps_figure(t.id)) for t in SUITE)):
        if figure in intervals:
            columns[f"{name}_low"], columns[f"{name}_high"] = intervals[figure]
    return columns


def as_specified_columns(results: ResultsFile) -> dict[str, Any]:
    """The run's mean CPS (and the changed tasks' CPS) under the as-specified set; none without its block."""
    if not has_current_block(results, MetricSet.AS_SPECIFIED):
        return {}
    tasks = set_tasks(results, MetricSet.AS_SPECIFIED)
    changed = {task.id for task in differing_tasks(MetricSet.AS_SPECIFIED)}
    columns: dict[str, Any] = {}
    task_cps = {}
    for task in SUITE:
        result = tasks.get(task.id)
        scores = {p: s.score for p, s in result.prompts.items()} if result is not None else {}
        task_cps[task.id] = score_task(task, scores).cps
        if task.id in changed:
            columns[f"{task.id}_as_specified_cps"] = task_cps[task.id]
    columns["as_specified_avg_cps"] = overall_score(task_cps).avg_cps
    return columns


def record_json(results: ResultsFile) -> str:
    """The blocks the app's record needs beyond the prompt scores and the draws, as compact JSON."""
    blocks = results.model_dump(
        mode="json",
        include={"metric_sets", "uncertainty"},
        exclude={"uncertainty": {"draws"}},
        exclude_none=True,
    )
    return json.dumps(blocks, separators=(",", ":"), ensure_ascii=False)


def draws_column(results: ResultsFile) -> list[dict[str, Any]] | None:
    """The ``uncertainty`` block's kept draws as ``draws`` holds them (None: the file has no block)."""
    if results.uncertainty is None:
        return None
    return [
        {"figure": figure, "key": kept.key, "float32": a2b_base64(kept.float32)}
        for figure, kept in results.uncertainty.draws.items()
    ]


def rows(results: ResultsEnvelope) -> list[Row]:
    """The one row of an Evalita results file."""
    assert isinstance(results, ResultsFile)
    prompts = known_prompt_scores(results)
    by_task: dict[str, dict[str, float | None]] = {}
    for task_id, prompt_id, score, _stderr, _n in prompts:
        by_task.setdefault(task_id, {})[prompt_id] = score
    row: Row = {"setting": fewshot_label(results.run.num_fewshot)}
    task_cps = {}
    for task in SUITE:
        scored = score_task(task, by_task.get(task.id, {}))
        task_cps[task.id] = scored.cps
        row |= {
            f"{task.id}_cps": scored.cps,
            f"{task.id}_maxp": scored.maxp,
            f"{task.id}_avgp": scored.avgp,
            f"{task.id}_best_prompt": scored.best_prompt,
        }
    row["avg_cps"] = overall_score(task_cps).avg_cps
    row["prompt_scores"] = [
        {"task": t, "prompt": p, "score": s, "stderr": e, "n": n} for t, p, s, e, n in prompts
    ]
    row["record_json"] = record_json(results)
    row["draws"] = draws_column(results)
    return [row | interval_columns(results) | as_specified_columns(results)]


CONTENTS = TrackContents(columns=_columns(), rows=rows)
