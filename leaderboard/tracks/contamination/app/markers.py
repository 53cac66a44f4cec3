"""The contamination track's marks on the ranking (its spec's ``ranking_markers``).

A run's cell of a task is marked only when the latest contamination run of the same model and
revision flags one of the task's test sets: the order test rejects at the family-wise 1 % level
(Holm over that run's sets, :attr:`OrderResult.flagged`).  The mark links to the model's page,
where the evidence panel shows the p-values, CoDeC and the cost.  The wording is the track's one
claim (:data:`EVIDENCE`), never an accusation; the ranking escapes it.
"""

from __future__ import annotations

from collections.abc import Mapping

from leaderboard.store import StoreResults
from leaderboard.tracks.contamination.app.tables import p_text, set_label
from leaderboard.tracks.contamination.definition import ALPHA, EVIDENCE, TRACK
from leaderboard.tracks.contamination.schema import ContaminationResults
from leaderboard.tracks.contamination.suite import suite_sets
from leaderboard.ui.markers import MarkerKey, RankingMarker

SYMBOL = "⚑"


def latest_runs(records: Mapping[str, ContaminationResults]) -> dict[tuple[str, str], ContaminationResults]:
    """``(model, revision)`` → its newest contamination run (by finish time, then path)."""
    latest: dict[tuple[str, str], tuple[str, str, ContaminationResults]] = {}
    for path, record in records.items():
        key = (record.model.id, record.model.revision)
        stamp = (record.run.finished_at or "", path)
        seen = latest.get(key)
        if seen is None or stamp > seen[:2]:
            latest[key] = (*stamp, record)
    return {key: value[2] for key, value in latest.items()}


def marker_text(record: ContaminationResults, flagged: Mapping[str, float]) -> str:
    """What the mark says: the claim, the sets and their Holm-adjusted p-values, the data."""
    sets = ", ".join(f"{set_label(s)} p (Holm) = {p_text(p)}" for s, p in flagged.items())
    data = record.run.data + (f", first {record.run.limit} items a set" if record.run.limit else "")
    return (
        f"Contamination: {EVIDENCE} — order test below {ALPHA:.0%} family-wise ({sets}; data {data}). "
        "A signal about one published order, not an accusation: see the evidence on the model's page."
    )


def ranking_markers(store: StoreResults) -> dict[MarkerKey, RankingMarker]:
    """A mark per (model, revision, task) whose latest contamination run flags one of the task's sets."""
    task_of = {s.id: s.task for s in suite_sets()}
    markers: dict[MarkerKey, RankingMarker] = {}
    for (model, revision), record in latest_runs(store.of(TRACK)).items():
        by_task: dict[str, dict[str, float]] = {}
        for set_id, result in record.sets.items():
            if result.order is not None and result.order.flagged and set_id in task_of:
                by_task.setdefault(task_of[set_id], {})[set_id] = result.order.p_holm
        for task, flagged in by_task.items():
            markers[(model, revision, task)] = RankingMarker(SYMBOL, marker_text(record, flagged))
    return markers
