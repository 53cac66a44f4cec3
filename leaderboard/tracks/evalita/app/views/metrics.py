"""The metric switch's views: what a page says about the set it shows, and where the sets rank
models differently on a task (both boards of one snapshot, :meth:`Board.with_metrics`)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from eval_queue.vocabulary import RunRef
from leaderboard.tracks.evalita.app.tables import task_column
from leaderboard.tracks.evalita.app.views.board import Board
from leaderboard.tracks.evalita.app.views.labels import RankingFilters
from leaderboard.tracks.evalita.app.views.ranking import _select_rows
from leaderboard.tracks.evalita.definition import TASKS
from leaderboard.tracks.evalita.metric_sets import MetricSet, differing_tasks, metric_label
from leaderboard.tracks.evalita.vocabulary import Aggregate, Setting
from leaderboard.views.common import md_text

#: The switch's choices: (label, link value), lm-eval first (the default).
METRIC_CHOICES: tuple[tuple[str, str], ...] = tuple((m.label, m.value) for m in MetricSet)


def _changed_tasks() -> str:
    return ", ".join(
        f"{task.abbrev} ({metric_label(task, MetricSet.AS_SPECIFIED)})" for task in differing_tasks()
    )


def metrics_banner(board: Board, setting: Setting | str) -> str:
    """What the page says of the metric set it shows (nothing for lm-eval, the paper's tables)."""
    if board.metrics is MetricSet.LM_EVAL:
        return ""
    text = (
        f"**Metrics as specified** by the Evalita-LLM paper: {md_text(_changed_tasks())}; the other six "
        "tasks as lm-eval. Not comparable with the paper's tables or the official board (see About)."
    )
    shots = Setting(setting).num_fewshot
    keys = set(board.loaded.missing_in(board.metrics))
    missing = sum(1 for key in keys if shots is None or key[3] == shots)
    if missing:
        text += (
            f" {missing} run(s) have no as-specified scores yet: their changed tasks stay empty (and "
            "the run unranked) until `python -m backend rescore` fills them from the run's details."
        )
    # Intervals and tiers are the set's own; a block written before they were computed has none
    # (counted only where the run has per-item data: its lm-eval scores have intervals).
    bare = sum(
        1
        for record in board.loaded.records
        if record.key not in keys
        and record.uncertainty is None
        and record.set_uncertainty.get(MetricSet.LM_EVAL) is not None
        and (shots is None or record.key[3] == shots)
    )
    if bare:
        text += (
            f" {bare} run(s) have as-specified scores without intervals (shown as —, no tier) until "
            "`python -m backend rescore` computes them from the run's per-item file."
        )
    return text


def run_metrics_note(board: Board, run: RunRef, num_fewshot: int) -> str:
    """The model page's word on the metric set: which one, and whether this run has its scores."""
    if board.metrics is MetricSet.LM_EVAL:
        return ""
    text = f"**Metrics as specified**: {md_text(_changed_tasks())}; the other tasks as lm-eval."
    if (run.model, run.revision, run.precision, num_fewshot) in board.loaded.missing_in(board.metrics):
        text += (
            " This run has no as-specified scores yet: those tasks stay empty until "
            "`python -m backend rescore` fills them from its details."
        )
    return text


@dataclass(frozen=True)
class RankChange:
    """A model whose rank on a task differs between the two metric sets."""

    run: RunRef
    lm_eval: int | None
    as_specified: int | None


def _task_ranks(board: Board, task_id: str, num_fewshot: int, show_noncomparable: bool) -> dict[RunRef, int]:
    rows, _, _, _ = _select_rows(board, num_fewshot, RankingFilters(show_noncomparable=show_noncomparable))
    cps = pd.to_numeric(rows[task_column(task_id, Aggregate.CPS)], errors="coerce")
    ranks = cps.rank(method="min", ascending=False)
    return {
        RunRef(str(model), str(revision), str(precision)): int(rank)
        for model, revision, precision, rank in zip(
            rows["model"], rows["revision"], rows["precision"], ranks, strict=True
        )
        if not pd.isna(rank)
    }


def rank_changes(
    board: Board, task_id: str, num_fewshot: int, show_noncomparable: bool = False
) -> list[RankChange]:
    """Every model shown whose CPS rank on ``task_id`` differs between lm-eval and as-specified,
    best lm-eval rank first (once per snapshot)."""
    return board.memo(
        ("rank_changes", task_id, num_fewshot, show_noncomparable),
        lambda: _rank_changes(board, task_id, num_fewshot, show_noncomparable),
    )


def _rank_changes(board: Board, task_id: str, num_fewshot: int, show_noncomparable: bool) -> list[RankChange]:
    before = _task_ranks(board.with_metrics(MetricSet.LM_EVAL), task_id, num_fewshot, show_noncomparable)
    after = _task_ranks(board.with_metrics(MetricSet.AS_SPECIFIED), task_id, num_fewshot, show_noncomparable)
    changes = [
        RankChange(run, before.get(run), after.get(run))
        for run in sorted(set(before) | set(after), key=lambda r: (before.get(r) or 10**9, r.model))
        if before.get(run) != after.get(run)
    ]
    return changes


def rank_changes_markdown(
    board: Board, task_id: str, num_fewshot: int, show_noncomparable: bool = False, shown: int = 10
) -> str:
    """Where the two sets rank the task's models differently (the task page's note), escaped."""
    task = TASKS[task_id]
    if task not in differing_tasks():
        return f"{md_text(task.abbrev)} is scored alike in both metric sets: the ranks are the same."
    changes = rank_changes(board, task_id, num_fewshot, show_noncomparable)
    if not changes:
        return f"On {md_text(task.abbrev)} the two metric sets rank the models shown alike."

    def rank(value: int | None) -> str:
        return "–" if value is None else str(value)

    items = [f"{md_text(c.run.model)} {rank(c.lm_eval)} → {rank(c.as_specified)}" for c in changes[:shown]]
    more = f", and {len(changes) - shown} more" if len(changes) > shown else ""
    return (
        f"**Ranks change with the metrics:** on {md_text(task.abbrev)}, {len(changes)} model(s) rank "
        f"differently as specified ({md_text(metric_label(task, MetricSet.AS_SPECIFIED))}) than with "
        f"lm-eval ({md_text(task.metric_label)}), rank by CPS lm-eval → as specified: "
        + "; ".join(items)
        + more
        + "."
    )
