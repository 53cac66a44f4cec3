"""Long context (INDAQA2): per-question statistics and intervals on each set's means.

The track's half of the uncertainty engine (``leaderboard.core.uncertainty`` is the generic
one); :func:`long_context_summary` is the ``uncertainty`` block its results files keep.  Pure.

Every figure of the track's table is a ``mean`` over a harness task's questions (the task
YAMLs aggregate ``em``, ``meteor``, ``meteor_it``, ``acc`` and ``unparsed`` with ``mean``), so a
harness task ``indaqa2_<set>_<oe|mc>_<setting>`` is one :class:`TaskItems` whose *prompt* axis
holds its metrics — all computed on the same questions, so resampled together — with one
statistic per question, ``[value]``.  The intervals are those of each metric's resampled mean.

**Books are the clusters**: INDAQA2 asks 38–117 questions about each book (paper, Table 1), and
a model that misreads a book misses many of them, so the questions are not independent.  A
resample draws books with replacement and keeps every question of each
(``TaskItems.clusters``; draws fixed by seed, task, question ids and books); a run whose
records keep no ``book_id`` falls back to questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from leaderboard.core.items import NO_PART, ItemId, RunItems, TaskItems
from leaderboard.core.metric_kinds import GENERIC_KINDS, MEAN
from leaderboard.core.summary import UncertaintySummary, figure_path
from leaderboard.core.uncertainty import (
    DEFAULT_CONFIG,
    BootstrapConfig,
    DrawCache,
    Interval,
    bootstrap_runs,
)
from leaderboard.tracks.long_context.definition import TRACK, ContextHarnessTask, harness_tasks, metrics_for

#: Every kind a long-context per-item file may name.
LONG_CONTEXT_KINDS = GENERIC_KINDS


def long_context_task_items(
    task: ContextHarnessTask, records: Sequence[Mapping[str, Any]]
) -> TaskItems | None:
    """One harness task's questions from lm-eval's sample records (``doc_id`` and each metric).

    ``None`` without records.  Raises ``ValueError`` on a record lacking a metric or a
    repeated ``doc_id``.
    """
    if not records:
        return None
    metrics = [m.value for m in metrics_for(task.kind)]
    per_metric: dict[str, dict[ItemId, list[float]]] = {m: {} for m in metrics}
    books: dict[ItemId, str] | None = {}
    for record in records:
        key = ItemId(NO_PART, int(record["doc_id"]))
        doc = record.get("doc")
        book = doc.get("book_id") if isinstance(doc, Mapping) else None
        if books is not None:
            if book is None:
                books = None  # an older run's records: questions resampled one by one
            else:
                books[key] = str(book)
        if key in per_metric[metrics[0]]:
            raise ValueError(f"{task.name}: doc_id {key.doc_id} appears twice")
        for metric in metrics:
            value = record.get(metric)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{task.name} doc {key.doc_id}: no {metric} value")
            per_metric[metric][key] = [float(value)]
    return TaskItems.build(task.name, MEAN.name, per_metric, clusters=books)


def long_context_run_items(samples: Mapping[str, Sequence[Mapping[str, Any]]]) -> RunItems:
    """Every harness task of the track that has sample records, by harness task name."""
    found = {}
    for task in harness_tasks():
        items = long_context_task_items(task, samples.get(task.name, ()))
        if items is not None:
            found[task.name] = items
    return RunItems(track=TRACK, tasks=found)


#: setting → question set → metric → interval.
LongContextIntervals = Mapping[str, Mapping[str, Mapping[str, Interval]]]


def long_context_intervals(
    runs: Sequence[RunItems | None], config: BootstrapConfig = DEFAULT_CONFIG, cache: DrawCache | None = None
) -> list[LongContextIntervals | None]:
    """Per run, the interval of every (setting, question set, metric) it has items for.

    ``None`` for a run without per-item data; the OE and MC metrics of a set sit side by side
    (``em``, ``meteor``, ``meteor_it``; ``acc``, ``unparsed``), as in the results file.
    """
    by_name = {t.name: t for t in harness_tasks()}
    present = [run for run in runs if run is not None and run.tasks]
    boots = iter(bootstrap_runs(present, LONG_CONTEXT_KINDS, config, cache))
    out: list[LongContextIntervals | None] = []
    for run in runs:
        if run is None or not run.tasks:
            out.append(None)
            continue
        table: dict[str, dict[str, dict[str, Interval]]] = {}
        for name, tb in next(boots).tasks.items():
            task = by_name[name]
            cell = table.setdefault(task.setting.value, {}).setdefault(task.question_set.value, {})
            for metric in tb.prompts:
                cell[metric] = tb.prompt_interval(metric, config.level)
        out.append(
            MappingProxyType(
                {
                    s: MappingProxyType({q: MappingProxyType(m) for q, m in sets.items()})
                    for s, sets in table.items()
                }
            )
        )
    return out


def metric_figure(setting: str, question_set: str, metric: str) -> str:
    """``settings/<setting>/sets/<set>/<metric>``: the figure's path in the results body."""
    return figure_path("settings", setting, "sets", question_set, metric)


def long_context_summary(
    run: RunItems,
    published: Mapping[str, Mapping[str, Mapping[str, float | None]]] | None = None,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
    tolerance: float = 1e-9,
) -> UncertaintySummary:
    """The ``uncertainty`` block of a run: every (setting, question set, metric) mean's interval.

    With ``published`` (setting → set → metric → mean), raises ``ValueError`` when the items'
    mean is not the published one (an interval around another number would be made up).
    """
    [boot] = bootstrap_runs([run], LONG_CONTEXT_KINDS, config, cache)
    by_name = {t.name: t for t in harness_tasks()}
    intervals: dict[str, Interval] = {}
    problems = []
    for name, tb in boot.tasks.items():
        task = by_name[name]
        setting, question_set = task.setting.value, task.question_set.value
        for metric, point in zip(tb.prompts, tb.prompt_scores, strict=True):
            if published is not None:
                value = published.get(setting, {}).get(question_set, {}).get(metric)
                if value is None or abs(float(point) - value) > tolerance:
                    problems.append(
                        f"{setting}/{question_set}/{metric}: items {float(point)!r}, published {value!r}"
                    )
            intervals[metric_figure(setting, question_set, metric)] = tb.prompt_interval(metric, config.level)
    if problems:
        raise ValueError("the per-item data do not reproduce the published means: " + "; ".join(problems[:5]))
    return UncertaintySummary.build(config, intervals)
