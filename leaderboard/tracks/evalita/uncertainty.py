"""Evalita's per-item statistics: from lm-eval's per-sample records to :class:`TaskItems`, and
the run's intervals as its results file keeps them (:func:`evalita_summary`).

The Evalita-specific half of the uncertainty engine (``leaderboard.core.uncertainty`` is the
generic half).  Pure: imports neither torch nor lm-eval.

How each task's metric (lm-eval 0.4.13, ``lm_eval/tasks/evalita_llm``) maps to per-item
sufficient statistics — the harness's per-sample value is what ``process_results`` returns,
kept in its sample records under the metric's name:

====  ==========================  ===============================  =========================================
task  harness aggregation         per-sample value                 per-item statistics (kind)
====  ==========================  ===============================  =========================================
TE    ``mean`` of ``acc``         0/1                              ``[acc]`` (``mean``)
FAQ   ``mean`` of ``acc``         0/1                              ``[acc]`` (``mean``)
AT    ``mean`` of ``acc``         0/1                              ``[acc]`` (``mean``)
SUM   ``mean`` of ``rouge1``      ROUGE-1 F of the document        ``[rouge1]`` (``mean``)
WIC   ``f1`` (sklearn binary)     ``(gold, pred)``, labels 0/1     ``[tp_0, tp_1, s_0, s_1]`` (``f1_binary``)
HS    ``f1`` (sklearn binary)     ``(gold, pred)``, labels 0/1     ``[tp_0, tp_1, s_0, s_1]`` (``f1_binary``)
REL   ``_aggreg_rel`` (macro F1)  ``(preds, golds)`` label lists   ``[tp_0, tp_1, s_0, s_1]`` (``f1_macro``)
NER   ``_aggreg_ner``             ``(preds, golds)`` label lists   ``[tp_0…tp_3, s_0…s_3]`` (``evalita_ner``)
SA    ``_aggreg_sa``              ``(gold, pred)``, 4 classes      opos and oneg ``[tp_0, tp_1, s_0, s_1]``
                                                                   (``evalita_sa``, 8 values)
LS    ``_aggreg_ls``              ``(prec, has_answ, has_annot)``  the same three (``evalita_ls``)
====  ==========================  ===============================  =========================================

``tp_k`` counts the item's pairs with gold = prediction = k, ``s_k`` its golds equal to k plus
its predictions equal to k (``leaderboard.core.metric_kinds``).  The NER prompt score combines
its three domains (``adg``, ``fic``, ``wn``: the task's parts, resampled within themselves)
weighted by size, like the project's results file and lm-eval's NER group.

The as-specified metric set (:mod:`leaderboard.tracks.evalita.metric_sets`) has per-item
statistics too, computed from the stored details (``TaskMetric.item_stats``): ``f1_macro`` for
WIC and HS, the lm-eval kinds for TE, FAQ, AT, SA, ``evalita_ls`` (each substitute once) for LS,
``mean`` of Italian ROUGE-1 for SUM, and two kinds of its own, :data:`NER_ENTITIES` and
:data:`RELATIONS`.  :func:`metric_set_summary` gives the set's block its intervals.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from leaderboard.core.items import NO_PART, ItemId, RunItems, TaskItems
from leaderboard.core.metric_kinds import (
    F1_BINARY,
    F1_MACRO,
    GENERIC_KINDS,
    MEAN,
    Array,
    MetricKind,
    MetricKinds,
    confusion_f1_stats,
    per_label_f1,
    sequential_sum,
)
from leaderboard.core.summary import METHOD, UncertaintySummary, figure_path
from leaderboard.core.uncertainty import DEFAULT_CONFIG, BootstrapConfig, DrawCache, Interval
from leaderboard.tracks.evalita.cps_intervals import METHOD_VERSION, RunCPS, RunUncertainty, cps_run
from leaderboard.tracks.evalita.definition import SUITE, TASK_IDS, TRACK, TaskSpec
from leaderboard.tracks.evalita.metric_sets import MetricSetSpec, ReadDetails, set_run_items
from leaderboard.tracks.evalita.schema import MetricSetBlock, TaskResult

# --------------------------------------------------------------------------- Evalita's own aggregations


def _first_two_present(tp: Array, s: Array) -> tuple[Array, Array]:
    """sklearn ``f1_score(average=None)`` on labels {0, 1}: ``f1[0]`` and ``f1[1]`` (0 if only one label)."""
    f1, present = per_label_f1(tp, s)
    both = present[..., 0] & present[..., 1]
    first = np.where(present[..., 0], f1[..., 0], f1[..., 1])
    second = np.where(both, f1[..., 1], 0.0)
    return first, second


def _aggregate_sa(sums: Array, n: int) -> Array:
    # metrics._aggreg_sa: per class F1 of the opos and the oneg binary views, averaged per view,
    # then the two views averaged — with its quirk that a view with one label present counts
    # (F1 of that label + 0) / 2.
    opos_c0, opos_c1 = _first_two_present(sums[..., 0:2], sums[..., 2:4])
    oneg_c0, oneg_c1 = _first_two_present(sums[..., 4:6], sums[..., 6:8])
    return ((opos_c0 + opos_c1) / 2 + (oneg_c0 + oneg_c1) / 2) / 2


def _aggregate_ner(sums: Array, n: int) -> Array:
    # metrics._aggreg_ner: per-label F1 over the labels present, the highest present label
    # (normally 3, "O") dropped, the rest averaged; a single present label's F1 as it is.
    k = sums.shape[-1] // 2
    f1, present = per_label_f1(sums[..., :k], sums[..., k:])
    count = present.sum(axis=-1)
    highest = (k - 1) - np.argmax(present[..., ::-1], axis=-1)
    kept = present & (np.arange(k) != highest[..., None])
    averaged = sequential_sum(f1, kept) / np.maximum(count - 1, 1)
    return np.where(count > 1, averaged, sequential_sum(f1, present))


def _aggregate_ls(sums: Array, n: int) -> Array:
    # metrics._aggreg_ls: precision = Σprec / |A|, recall = Σprec / |T| (each / 1 when 0), F1.
    total, answered, annotated = sums[..., 0], sums[..., 1], sums[..., 2]
    prec = total / np.where(answered == 0, 1.0, answered)
    rec = total / np.where(annotated == 0, 1.0, annotated)
    denominator = prec + rec
    safe = np.where(denominator != 0, denominator, 1.0)
    return np.where(denominator != 0, (2 * prec * rec) / safe, 0.0)


SA = MetricKind(
    "evalita_sa",
    "Evalita SA (_aggreg_sa): opos and oneg views, each [tp_0, tp_1, s_0, s_1]",
    lambda k: 8,
    _aggregate_sa,
)
NER = MetricKind(
    "evalita_ner",
    "Evalita NER (_aggreg_ner): per-label F1 over the present labels but the highest, averaged",
    lambda k: 2 * k,
    _aggregate_ner,
)
LS = MetricKind(
    "evalita_ls",
    "Evalita LS (_aggreg_ls): [precision numerator, has answer, has annotation]",
    lambda k: 3,
    _aggregate_ls,
)


# --------------------------------------------------------------------------- the as-specified set's own kinds


def _aggregate_ner_entities(sums: Array, n: int) -> Array:
    # specified.ner_f1_macro on summed counts: per type (PER, LOC, ORG) F1 = 2·tp / (gold +
    # (predicted + invalid)), averaged over the types in the gold or among the typed
    # predictions; none of those: 0 if any invalid span was named, else 1.  The same float
    # operations in the same order (the counts are whole numbers, so their sums are exact).
    tp, gold, pred, invalid = sums[..., 0:3], sums[..., 3:6], sums[..., 6:9], sums[..., 9:10]
    averaged = (gold + pred) > 0
    denominator = gold + (pred + invalid)
    f1 = np.divide(2.0 * tp, denominator, out=np.zeros(tp.shape), where=averaged & (denominator > 0))
    count = averaged.sum(axis=-1)
    mean = sequential_sum(f1, averaged) / np.maximum(count, 1)
    return np.where(count > 0, mean, np.where(invalid[..., 0] > 0, 0.0, 1.0))


def _aggregate_relations(sums: Array, n: int) -> Array:
    # specified.PRF.f1 on pooled counts: 2·tp / (2·tp + fp + fn), 1 when nothing was to be found
    # and nothing was named.
    tp, fp, fn = sums[..., 0], sums[..., 1], sums[..., 2]
    denominator = 2 * tp + fp + fn
    return np.divide(2 * tp, denominator, out=np.ones(tp.shape), where=denominator > 0)


NER_ENTITIES = MetricKind(
    "evalita_ner_entities",
    "NER as specified (specified.ner_f1_macro): [tp, gold, predicted per PER/LOC/ORG, invalid spans]",
    lambda k: 10,
    _aggregate_ner_entities,
)
RELATIONS = MetricKind(
    "f1_relations",
    "micro relation F1 (specified.rel_f1): [tp, fp, fn]",
    lambda k: 3,
    _aggregate_relations,
)

#: Every kind an Evalita per-item file may name (lm-eval's, and the as-specified set's:
#: :func:`leaderboard.tracks.evalita.metric_sets.set_run_items`).
EVALITA_KINDS: MetricKinds = GENERIC_KINDS.with_kinds(SA, NER, LS, NER_ENTITIES, RELATIONS)

# --------------------------------------------------------------------------- per-sample values → statistics


def _pair(value: Any) -> tuple[Any, Any]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError(f"expected a (gold, prediction) pair, got {value!r:.80}")
    return value[0], value[1]


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"expected a number, got {value!r:.80}")
    return float(value)


def _value_stats(value: Any) -> list[float]:
    return [_number(value)]


def _binary_stats(value: Any) -> list[float]:
    gold, pred = _pair(value)  # lm-eval's multiple-choice "f1": (gold, pred)
    return confusion_f1_stats([(gold, pred)], 2)


def _label_lists_stats(n_labels: int) -> Callable[[Any], list[float]]:
    def stats(value: Any) -> list[float]:
        preds, golds = _pair(value)  # ner/rel process_results: (res_labels, gold_labels)
        if len(preds) != len(golds):
            raise ValueError(f"{len(preds)} predictions for {len(golds)} golds")
        return confusion_f1_stats(zip(golds, preds, strict=True), n_labels)

    return stats


def _sa_view(label: int, positive: tuple[int, ...]) -> int:
    return 1 if label in positive else 0


def _sa_stats(value: Any) -> list[float]:
    gold, pred = (int(x) for x in _pair(value))
    if not (0 <= gold < 4 and 0 <= pred < 4):
        raise ValueError(f"SA classes ({gold}, {pred}) outside 0…3")
    # _aggreg_sa's mapping: 0 positive (opos), 1 negative (oneg), 2 neutral, 3 mixed (both).
    opos = confusion_f1_stats([(_sa_view(gold, (0, 3)), _sa_view(pred, (0, 3)))], 2)
    oneg = confusion_f1_stats([(_sa_view(gold, (1, 3)), _sa_view(pred, (1, 3)))], 2)
    return opos + oneg


def _ls_stats(value: Any) -> list[float]:
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise ValueError(f"expected (prec, has_answ, has_annotation), got {value!r:.80}")
    return [_number(v) for v in value]


@dataclass(frozen=True)
class EvalitaMetric:
    """How one Evalita task's per-sample values become per-item statistics.

    ``sample_key``: the key of the value in lm-eval's sample records (the metric's name);
    ``harness_aggregation``: the aggregation the task YAMLs name (a test checks all 48);
    ``labels``: what the F1 statistics' label indices mean.
    """

    kind: MetricKind
    sample_key: str
    harness_aggregation: str
    labels: tuple[str, ...]
    stats: Callable[[Any], list[float]]
    #: The field of the harness's doc that groups items which are not independent (resampled
    #: together: ``leaderboard.core.uncertainty``), ``None`` when the items are independent.
    cluster_field: str | None = None


_NER_LABELS = ("PER", "LOC", "ORG", "O")  # utils.NER_MAPPING
_SA_LABELS = ("positivo", "negativo", "neutrale", "misto")

EVALITA_METRICS: Mapping[str, EvalitaMetric] = MappingProxyType(
    {
        # WiC: the pairs of one lemma share its senses; LS: the contexts of one target word.
        "wic": EvalitaMetric(F1_BINARY, "f1", "f1", ("0", "1"), _binary_stats, "lemma"),
        "te": EvalitaMetric(MEAN, "acc", "mean", (), _value_stats),
        "sa": EvalitaMetric(SA, "f1", "metrics._aggreg_sa", _SA_LABELS, _sa_stats),
        "hs": EvalitaMetric(F1_BINARY, "f1", "f1", ("0", "1"), _binary_stats),
        "faq": EvalitaMetric(MEAN, "acc", "mean", (), _value_stats),
        "at": EvalitaMetric(MEAN, "acc", "mean", (), _value_stats),
        "ls": EvalitaMetric(LS, "f1", "metrics._aggreg_ls", (), _ls_stats, "lexelt"),
        "ner": EvalitaMetric(NER, "f1", "metrics._aggreg_ner", _NER_LABELS, _label_lists_stats(4)),
        "re": EvalitaMetric(F1_MACRO, "f1", "metrics._aggreg_rel", ("0", "1"), _label_lists_stats(2)),
        "sum": EvalitaMetric(MEAN, "rouge1", "mean", (), _value_stats),
    }
)


def evalita_task_items(
    task: TaskSpec, samples: Mapping[str, Sequence[Mapping[str, Any]]]
) -> TaskItems | None:
    """The task's per-item statistics from lm-eval's sample records, by harness task name.

    ``None`` when a harness task of one of its prompts has no records (no per-item data: no
    interval).  Raises ``ValueError`` on a record without ``doc_id`` or the metric's value, a
    repeated doc id, or prompts scored on different items.
    """
    metric = EVALITA_METRICS[task.id]
    per_prompt: dict[str, dict[ItemId, list[float]]] = {}
    clusters: dict[ItemId, str] | None = {} if metric.cluster_field else None
    parts: list[str] = []
    for prompt in task.prompts:
        items: dict[ItemId, list[float]] = {}
        for harness in prompt.harness_tasks:
            records = samples.get(harness.name)
            if not records:
                return None
            part = harness.part or NO_PART
            if part not in parts:
                parts.append(part)
            for record in records:
                if "doc_id" not in record or metric.sample_key not in record:
                    raise ValueError(f"{harness.name}: a sample has no doc_id or {metric.sample_key!r}")
                key = ItemId(part, int(record["doc_id"]))
                if key in items:
                    raise ValueError(f"{harness.name}: doc_id {key.doc_id} appears twice")
                try:
                    items[key] = metric.stats(record[metric.sample_key])
                except ValueError as exc:
                    raise ValueError(f"{harness.name} doc {key.doc_id}: {exc}") from None
                if clusters is not None and metric.cluster_field is not None:
                    cluster = _cluster_of(record, metric.cluster_field)
                    # A record without its doc (an older run's) leaves the task unclustered.
                    if cluster is None:
                        clusters = None
                    else:
                        clusters[key] = cluster
        per_prompt[prompt.id] = items
    return TaskItems.build(
        task.id, metric.kind.name, per_prompt, labels=metric.labels, parts=parts, clusters=clusters
    )


def _cluster_of(record: Mapping[str, Any], field: str) -> str | None:
    """The record's cluster: its doc's ``field`` (``None`` when the record keeps no doc)."""
    doc = record.get("doc")
    value = doc.get(field) if isinstance(doc, Mapping) else None
    return None if value is None else str(value)


def evalita_run_items(
    samples: Mapping[str, Sequence[Mapping[str, Any]]], tasks: Sequence[TaskSpec] = SUITE
) -> RunItems:
    """Every task of ``tasks`` whose prompts all have sample records (the others have no items)."""
    found = {}
    for task in tasks:
        items = evalita_task_items(task, samples)
        if items is not None:
            found[task.id] = items
    return RunItems(track=TRACK, tasks=found)


# --------------------------------------------------------------------------- what the results file keeps

#: The figure of the mean CPS over the ten tasks (what the ranking and its tiers use).
MEAN_CPS_FIGURE = "mean_cps"


# Cached: a store read names every prompt of every run (1.4 million calls at 20,000 runs).
@functools.lru_cache(maxsize=4096)
def prompt_figure(task_id: str, prompt_id: str) -> str:
    """``tasks/<task>/prompts/<prompt>``: a prompt score's name in the ``uncertainty`` block."""
    return figure_path("tasks", task_id, "prompts", prompt_id)


def cps_figure(task_id: str) -> str:
    """``tasks/<task>/cps``: a task's CPS (derived at read time) in the ``uncertainty`` block."""
    return figure_path("tasks", task_id, "cps")


#: The second draw set of the mean CPS (its tie-aware centring: ``cps_intervals``).
MEAN_CPS_TIE_FIGURE = "mean_cps/tie_aware"


def cps_tie_figure(task_id: str) -> str:
    """``tasks/<task>/cps/tie_aware``: the second draw set of a task's CPS in the ``draws``."""
    return figure_path("tasks", task_id, "cps", "tie_aware")


def summary_of(kept: RunUncertainty, config: BootstrapConfig) -> UncertaintySummary:
    """The ``uncertainty`` block of a run from its kept intervals (and the mean CPS's draws)."""
    intervals: dict[str, Interval] = {}
    for task_id, prompts in kept.prompt_intervals.items():
        for prompt_id, interval in prompts.items():
            intervals[prompt_figure(task_id, prompt_id)] = interval
        intervals[cps_figure(task_id)] = kept.cps_intervals[task_id]
    draws = {}
    if (
        kept.mean_cps_interval is not None
        and kept.mean_cps_draws is not None
        and kept.mean_cps_tie_draws is not None
        and kept.mean_key
    ):
        intervals[MEAN_CPS_FIGURE] = kept.mean_cps_interval
        draws[MEAN_CPS_FIGURE] = (kept.mean_key, kept.mean_cps_draws)
        draws[MEAN_CPS_TIE_FIGURE] = (kept.mean_key, kept.mean_cps_tie_draws)
    # Each task's CPS draws too (optional, since issue 32): a mean over any subset of tasks is
    # then resampled exactly as the mean CPS is (a custom average, its interval and tier).
    for task_id, (key, reflected, tie_aware) in kept.cps_draws.items():
        draws[cps_figure(task_id)] = (key, reflected)
        draws[cps_tie_figure(task_id)] = (key, tie_aware)
    return UncertaintySummary.build(config, intervals, draws, method=f"{METHOD} ({METHOD_VERSION})")


def published_mismatches(
    boot: RunCPS, published: Mapping[str, Mapping[str, float | None]], tolerance: float = 1e-9
) -> list[str]:
    """Where the per-item data do not reproduce the published prompt scores (empty: they all do).

    The bootstrap's point scores equal lm-eval's aggregations bit for bit
    (``tests/uncertainty/test_evalita_exactness.py``); the tolerance only absorbs the last-bit
    rounding of the NER domains' weighted average in :mod:`backend.tracks.evalita.convert`.
    """
    problems = []
    for task_id, task in boot.tasks.items():
        for prompt_id, point in zip(task.prompts, task.prompt_scores, strict=True):
            score = published.get(task_id, {}).get(prompt_id)
            if score is None or abs(float(point) - score) > tolerance:
                problems.append(f"{task_id}/{prompt_id}: items give {float(point)!r}, published {score!r}")
    return problems


def evalita_summary(
    run: RunItems,
    published: Mapping[str, Mapping[str, float | None]] | None = None,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
) -> UncertaintySummary:
    """Every interval of a run (prompt scores, task CPS, the mean CPS over the ten tasks).

    With ``published`` (task → prompt → score), raises ``ValueError`` listing the prompts whose
    per-item data do not reproduce the published score: an interval around another number
    would be a made-up one.
    """
    boot = cps_run(run, EVALITA_KINDS, config, cache)
    if published is not None and (problems := published_mismatches(boot, published)):
        shown = "; ".join(problems[:5]) + (f"; … {len(problems) - 5} more" if len(problems) > 5 else "")
        raise ValueError(f"the per-item data do not reproduce the published scores: {shown}")
    return summary_of(RunUncertainty.of(boot, TASK_IDS), config)


def metric_set_summary(
    spec: MetricSetSpec,
    tasks: Mapping[str, TaskResult],
    block: MetricSetBlock,
    read: ReadDetails,
    like: RunItems,
    config: BootstrapConfig = DEFAULT_CONFIG,
    cache: DrawCache | None = None,
) -> tuple[UncertaintySummary | None, dict[str, str]]:
    """The intervals of a metric set's scores (what its block keeps as ``uncertainty``).

    The set's scores are ``block``'s tasks and, for the tasks it takes from its base set, the
    harness's ``tasks``; their per-item statistics come from the run's details
    (:func:`~leaderboard.tracks.evalita.metric_sets.set_run_items`) on the items, parts and
    clusters of the run's per-item file ``like``, so they are resampled exactly as the lm-eval
    scores are (the same draws).  Then the same intervals as :func:`evalita_summary`: prompt
    scores, task CPS and the mean CPS with its reflected and tie-aware draws.

    Returns ``(None, why)`` per task when no task could be built, else the summary and the
    tasks left without an interval (with why).  Raises ``ValueError`` when the statistics do
    not reproduce the block's scores (an interval around another number would be made up).
    """
    published = {
        task_id: block.tasks[task_id] if task_id in spec.metrics else result
        for task_id, result in tasks.items()
        if task_id not in spec.metrics or task_id in block.tasks
    }
    items, skipped = set_run_items(spec, {t: list(r.prompts) for t, r in published.items()}, read, like)
    if not items.tasks:
        return None, skipped
    scores = {t: {p: s.score for p, s in r.prompts.items()} for t, r in published.items()}
    return evalita_summary(items, scores, config, cache), skipped
