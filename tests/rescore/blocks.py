"""Made-up as-specified blocks for stores whose runs have no details (the UI tests' paper store).

The numbers are a fixed transform of each run's lm-eval scores, chosen so that the metric
switch visibly changes scores and ranks (WIC and HS reversed); they are test data, not
rescored from anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from leaderboard.tracks.evalita.metric_sets import METRIC_SETS, MetricSet, differing_tasks
from leaderboard.tracks.evalita.schema import MetricSetBlock, PromptScore, ResultsFile, TaskResult

AS_SPECIFIED = METRIC_SETS[MetricSet.AS_SPECIFIED]


def made_up_score(task_id: str, score: float | None) -> float | None:
    if score is None:
        return None
    match task_id:
        case "wic" | "hs":
            return round(1.0 - 0.8 * score, 4)  # reverses the order of the models
        case "ner":
            return round(0.5 * score, 4)
        case _:
            return round(min(1.0, 1.1 * score), 4)


def made_up_block(results: ResultsFile) -> MetricSetBlock:
    tasks = {
        task.id: TaskResult(
            metric=AS_SPECIFIED.metrics[task.id].name,
            prompts={
                p: PromptScore(score=made_up_score(task.id, s.score), n=s.n)
                for p, s in results.tasks[task.id].prompts.items()
            },
        )
        for task in differing_tasks()
        if task.id in results.tasks
    }
    return MetricSetBlock(
        name=AS_SPECIFIED.id.value,
        version=AS_SPECIFIED.version,
        computed_by="tests",
        computed_at="2025-01-01T00:00:00Z",
        tasks=tasks,
    )


def add_made_up_blocks(paths: Iterable[Path]) -> None:
    """Give each results file at ``paths`` an as-specified block (:func:`made_up_block`)."""
    for path in paths:
        results = ResultsFile.from_json(path.read_bytes(), str(path))
        path.write_bytes(results.model_copy(update={"metric_sets": [made_up_block(results)]}).to_json())
