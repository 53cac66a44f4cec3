"""The two metric sets of the Evalita track and how a prompt is scored under each from its details.

``lm-eval`` is what lm-evaluation-harness 0.4.13 computes: the paper's tables and the official
board report it, and the results file's ``tasks`` hold it exactly as the harness computed it.
``as-specified`` scores four tasks as the Evalita-LLM paper specifies them
(:mod:`leaderboard.tracks.evalita.specified` says why each differs) and takes the other six from
``lm-eval``, whose metric is already the paper's:

====  ==========================  ==============================================================
task  lm-eval (harness)           as-specified
====  ==========================  ==============================================================
WIC   binary F1 of "same"         F1-macro (§3.1: WiC-ITA sub-task 1 is scored with F1-macro)
HS    binary F1 of "hate"         F1-macro (Table 1, §3.4)
NER   upstream slot labels        entity-level F1 per type, macro over PER, LOC, ORG (§3.8)
SUM   ROUGE-1, ``[a-z0-9]`` tokens  ROUGE-1 on Italian tokens (accents kept)
TE, FAQ, AT  accuracy             the same (Table 1: accuracy)
SA    SENTIPOLC polarity F1       the same (§3.3: the mean of both polarities' F1)
LS    oot F1 over 10 answers      the same (§3.7 names Best and oot without a formula)
RE    F1-macro of slot labels     the same (§3.9: "Precision, Recall, and F1", no averaging named)
====  ==========================  ==============================================================

A set has a **version**; a block of its scores records the version that computed it
(:class:`~leaderboard.tracks.evalita.schema.MetricSetBlock`).  A change to a set's metrics bumps
its version: ``python -m backend rescore`` then adds a block and keeps the older ones.  The
``lm-eval`` set at version 1 *is* the harness's numbers: it is never written, only checked
(recomputed from the details and compared, bit for bit).

Pure: records in, scores out; the caller reads the details (``read``) and writes the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from eval_queue.errors import EvalitaError, NotFoundError
from leaderboard.tracks.evalita import specified
from leaderboard.tracks.evalita.definition import DEFAULT_METRIC_SET as DEFAULT_METRIC_SET  # re-exported
from leaderboard.tracks.evalita.definition import SUITE, MetricSet, PromptSpec, TaskSpec
from leaderboard.tracks.evalita.schema import (
    DetailRecord,
    MetricSetBlock,
    PromptScore,
    ResultsFile,
    TaskResult,
)

if TYPE_CHECKING:  # pyarrow is imported only where per-item data are built
    from leaderboard.core.items import RunItems
    from leaderboard.core.summary import UncertaintySummary


class MissingInput(EvalitaError):
    """A run's details lack what a metric needs (the task is named and skipped, never guessed)."""


#: A harness task's records → its 0–1 score.  Raises :class:`MissingInput`.
Scorer = Callable[[Sequence[DetailRecord]], float]


#: A harness task's records → each record's sufficient statistics (one list per record, in
#: order), which the metric kind named beside it aggregates to what the scorer computes.
ItemStats = Callable[[Sequence[DetailRecord]], list[list[float]]]


@dataclass(frozen=True)
class TaskMetric:
    """How a set scores one task: its name in the file (``TaskResult.metric``), label and scorer.

    ``kind`` and ``item_stats`` (the per-item sufficient statistics and the
    :class:`~leaderboard.core.metric_kinds.MetricKind` that aggregates them, registered in
    ``leaderboard.tracks.evalita.uncertainty.EVALITA_KINDS``) are what the set's intervals are
    bootstrapped from; ``None`` where the set takes the task's intervals from elsewhere.
    """

    name: str
    label: str
    score: Scorer
    kind: str | None = None
    item_stats: ItemStats | None = None


@dataclass(frozen=True)
class MetricSetSpec:
    """A metric set: its version, the tasks it scores itself and the set it takes the others from."""

    id: MetricSet
    version: int
    description: str
    metrics: Mapping[str, TaskMetric]
    #: The set whose numbers the tasks not in ``metrics`` take (None: it scores every task).
    base: MetricSet | None = None
    #: Its numbers at this version are the harness's own (``tasks``): checked, never written.
    harness_native: bool = False

    def metric_of(self, task_id: str) -> TaskMetric:
        if task_id in self.metrics:
            return self.metrics[task_id]
        if self.base is None:
            raise KeyError(f"metric set {self.id} does not score task {task_id!r}")
        return METRIC_SETS[self.base].metric_of(task_id)


# --------------------------------------------------------------------------- reading details


def _mc(records: Sequence[DetailRecord]) -> tuple[list[int], list[int]]:
    """(gold indices, picked indices) of multiple-choice records."""
    golds, preds = [], []
    for record in records:
        if not record.loglikelihoods or record.choices is None:
            raise MissingInput(f"doc {record.doc_id} has no choices or log-likelihoods")
        if isinstance(record.gold, int):
            golds.append(record.gold)
        else:
            try:
                golds.append(specified.mc_gold(record.target, record.choices))
            except ValueError as exc:
                raise MissingInput(f"doc {record.doc_id}: {exc}") from None
        preds.append(specified.mc_prediction(record.loglikelihoods))
    return golds, preds


def _pairs(record: DetailRecord, what: str) -> list[tuple[str, str | int]] | None:
    """The structured gold of a generative record (``gold``: pairs), None when the record has none."""
    if record.gold is None:
        return None
    if isinstance(record.gold, int) or any(len(pair) != 2 for pair in record.gold):
        raise MissingInput(f"doc {record.doc_id}: gold is not a list of {what} pairs")
    return [(str(pair[0]), pair[1]) for pair in record.gold]


def _pair_golds(
    records: Sequence[DetailRecord], what: str, parse_target: Callable[[str], list[tuple[str, str]]]
) -> list[list[tuple[str, str]]]:
    """Each document's gold pairs: the structured ``gold`` of the details line, else its target
    parsed as upstream writes it (details written before ``gold`` was kept)."""
    golds = []
    for record in records:
        pairs = _pairs(record, what)
        if pairs is not None:
            golds.append([(text, str(label)) for text, label in pairs])
            continue
        try:
            golds.append(parse_target(record.target))
        except ValueError as exc:
            raise MissingInput(f"doc {record.doc_id}: {exc}") from None
    return golds


def _ner_golds(records: Sequence[DetailRecord]) -> list[list[specified.Entity]]:
    return _pair_golds(records, "entity", specified.parse_ner_target)


def _rel_golds(records: Sequence[DetailRecord]) -> list[list[specified.Relation]]:
    return _pair_golds(records, "relation", specified.parse_rel_target)


def _ls_golds(records: Sequence[DetailRecord]) -> list[list[specified.Substitute]]:
    golds = []
    for record in records:
        pairs = _pairs(record, "substitute")
        if pairs is None:
            # The target joins the substitutes without their annotator counts, which the score weighs.
            raise MissingInput(
                "the details keep no annotator counts (gold); written by the worker since issue 20"
            )
        golds.append([(word, int(count)) for word, count in pairs])
    return golds


def _answers(records: Sequence[DetailRecord]) -> list[str]:
    return [record.answer for record in records]


# --------------------------------------------------------------------------- the scorers


def _binary_f1(records: Sequence[DetailRecord]) -> float:
    return specified.lm_eval_f1(*_mc(records))


def _macro_f1(records: Sequence[DetailRecord]) -> float:
    return specified.f1_macro(*_mc(records))


def _accuracy(records: Sequence[DetailRecord]) -> float:
    return specified.accuracy(*_mc(records))


def _sentipolc(records: Sequence[DetailRecord]) -> float:
    return specified.sentipolc_f1(*_mc(records))


def _ner_upstream(records: Sequence[DetailRecord]) -> float:
    return specified.lm_eval_ner_f1(_ner_golds(records), _answers(records))


def _ner_entities(records: Sequence[DetailRecord]) -> float:
    return specified.ner_f1_macro(_ner_golds(records), _answers(records))


def _rel_upstream(records: Sequence[DetailRecord]) -> float:
    return specified.lm_eval_rel_f1(_rel_golds(records), _answers(records))


def _ls_upstream(records: Sequence[DetailRecord]) -> float:
    return specified.lm_eval_ls_f1(_ls_golds(records), _answers(records))


def _ls_distinct(records: Sequence[DetailRecord]) -> float:
    return specified.ls_f1_distinct(_ls_golds(records), _answers(records))


def _rel_pairs(records: Sequence[DetailRecord]) -> float:
    return specified.rel_f1(_rel_golds(records), _answers(records))


def _rouge(batch: Callable[[Sequence[str], Sequence[str]], list[float]]) -> Scorer:
    def score(records: Sequence[DetailRecord]) -> float:
        return specified.mean(batch([r.target for r in records], _answers(records)))

    return score


# --------------------------------------------------------------------------- per-item statistics
# Each is the scorer above taken apart: what it sums over the records, one vector per record,
# so that a bootstrap resample of the records is a resample of the sums (kinds in
# leaderboard.tracks.evalita.uncertainty; tests/metrics/test_set_items.py checks that the
# observed sums aggregate to the scorer's number).


def _pair_stats(gold: int, pred: int) -> list[float]:
    """``[tp_0, tp_1, s_0, s_1]`` of one (gold, prediction) pair on labels {0, 1}."""
    if not (0 <= gold < 2 and 0 <= pred < 2):
        raise MissingInput(f"labels ({gold}, {pred}) are not binary")
    tp = [float(gold == pred == k) for k in (0, 1)]
    return tp + [float(gold == k) + float(pred == k) for k in (0, 1)]


def _macro_f1_items(records: Sequence[DetailRecord]) -> list[list[float]]:
    return [_pair_stats(g, p) for g, p in zip(*_mc(records), strict=True)]


def _accuracy_items(records: Sequence[DetailRecord]) -> list[list[float]]:
    return [[1.0 if g == p else 0.0] for g, p in zip(*_mc(records), strict=True)]


def _sentipolc_items(records: Sequence[DetailRecord]) -> list[list[float]]:
    # The opos and the oneg views' pair statistics (the kind evalita_sa, as lm-eval's items).
    polarities = specified.SA_POLARITIES
    items = []
    for g, p in zip(*_mc(records), strict=True):
        if not (0 <= g < len(polarities) and 0 <= p < len(polarities)):
            raise MissingInput(f"SA labels ({g}, {p}) outside 0…3")
        items.append(
            _pair_stats(polarities[g][0], polarities[p][0]) + _pair_stats(polarities[g][1], polarities[p][1])
        )
    return items


def _ner_entity_items(records: Sequence[DetailRecord]) -> list[list[float]]:
    # Per type (PER, LOC, ORG) tp, gold and predicted entities, then the spans of no valid type.
    items = []
    for gold, answer in zip(_ner_golds(records), _answers(records), strict=True):
        predicted = specified.parse_ner_answer(answer)
        counts = specified.ner_counts(gold, predicted)
        items.append(
            [float(counts[k][i]) for i in range(3) for k in specified.NER_TYPES]
            + [float(specified.ner_invalid(predicted))]
        )
    return items


def _relation_items(records: Sequence[DetailRecord]) -> list[list[float]]:
    items = []
    for gold, answer in zip(_rel_golds(records), _answers(records), strict=True):
        counts = specified.rel_counts(gold, specified.parse_rel_answer(answer))
        items.append([float(counts.tp), float(counts.fp), float(counts.fn)])
    return items


def _ls_distinct_items(records: Sequence[DetailRecord]) -> list[list[float]]:
    return [
        [float(v) for v in specified.ls_item_distinct(gold, answer)]
        for gold, answer in zip(_ls_golds(records), _answers(records), strict=True)
    ]


def _rouge_items(batch: Callable[[Sequence[str], Sequence[str]], list[float]]) -> ItemStats:
    def items(records: Sequence[DetailRecord]) -> list[list[float]]:
        return [[v] for v in batch([r.target for r in records], _answers(records))]

    return items


# The lm-eval set's intervals come from the harness's own per-item file; the four tasks the
# as-specified set takes from it carry their statistics here too, so that set's intervals can
# be computed from the details alone.
_LM_EVAL_METRICS: Mapping[str, TaskMetric] = MappingProxyType(
    {
        "wic": TaskMetric("f1", "F1 (binary)", _binary_f1),
        "te": TaskMetric("acc", "Accuracy", _accuracy, "mean", _accuracy_items),
        "sa": TaskMetric("f1", "F1-macro (SENTIPOLC)", _sentipolc, "evalita_sa", _sentipolc_items),
        "hs": TaskMetric("f1", "F1 (binary)", _binary_f1),
        "faq": TaskMetric("acc", "Accuracy", _accuracy, "mean", _accuracy_items),
        "at": TaskMetric("acc", "Accuracy", _accuracy, "mean", _accuracy_items),
        "ls": TaskMetric("f1", "F1 (oot)", _ls_upstream),
        "ner": TaskMetric("f1", "F1 (upstream slots)", _ner_upstream),
        "re": TaskMetric("f1", "F1-macro (slots)", _rel_upstream),
        "sum": TaskMetric("rouge1", "ROUGE-1", _rouge(specified.rouge1_lm_eval_batch)),
    }
)
_AS_SPECIFIED_METRICS: Mapping[str, TaskMetric] = MappingProxyType(
    {
        "wic": TaskMetric("f1_macro", "F1-macro", _macro_f1, "f1_macro", _macro_f1_items),
        "hs": TaskMetric("f1_macro", "F1-macro", _macro_f1, "f1_macro", _macro_f1_items),
        "ls": TaskMetric(
            "f1_oot_distinct",
            "F1 (oot, each substitute once)",
            _ls_distinct,
            "evalita_ls",
            _ls_distinct_items,
        ),
        "ner": TaskMetric(
            "f1_entity_macro", "F1-macro (entities)", _ner_entities, "evalita_ner_entities", _ner_entity_items
        ),
        "re": TaskMetric(
            "f1_relations", "F1 (relations, micro)", _rel_pairs, "f1_relations", _relation_items
        ),
        "sum": TaskMetric(
            "rouge1_italian",
            "ROUGE-1 (Italian tokens)",
            _rouge(specified.rouge1_italian_batch),
            "mean",
            _rouge_items(specified.rouge1_italian_batch),
        ),
    }
)

METRIC_SETS: Mapping[MetricSet, MetricSetSpec] = MappingProxyType(
    {
        MetricSet.LM_EVAL: MetricSetSpec(
            MetricSet.LM_EVAL,
            version=1,
            description="what lm-evaluation-harness 0.4.13 computes: the paper's tables and the official board",
            metrics=_LM_EVAL_METRICS,
            harness_native=True,
        ),
        # Version 2 (issue 29): LS credits a substitute once per context, NER counts every span
        # that is not a gold (span, type) pair as a false positive, RE is relation-level F1.
        # Version 1 (issue 20) scored LS and RE as upstream and let untyped NER spans through;
        # its stored blocks stay as they were, `rescore --all` adds version 2 beside them.
        MetricSet.AS_SPECIFIED: MetricSetSpec(
            MetricSet.AS_SPECIFIED,
            version=2,
            description="the metrics the Evalita-LLM paper specifies: F1-macro for WIC and HS, "
            "oot F1 with each LS substitute once, entity-level NER, relation-level RE, "
            "ROUGE-1 on Italian tokens",
            metrics=_AS_SPECIFIED_METRICS,
            base=MetricSet.LM_EVAL,
        ),
    }
)


def metric_set(name: str) -> MetricSetSpec:
    """The set named ``name``; an unknown name lists the valid ones."""
    try:
        return METRIC_SETS[MetricSet(name)]
    except ValueError:
        raise EvalitaError(
            f"unknown metric set {name!r}: choose among {', '.join(m.value for m in MetricSet)}"
        ) from None


# --------------------------------------------------------------------------- scoring a run


def weighted_by_size(parts: Sequence[tuple[str, float, int]]) -> PromptScore:
    """A prompt scored on several parts (NER domains): their scores weighted by their number of
    documents, as upstream's group (``weight_by_size``); the worker's conversion uses it too."""
    total = sum(n for _, _, n in parts)
    combined = sum(score * n for _, score, n in parts) / total
    return PromptScore(
        score=min(max(combined, 0.0), 1.0),
        stderr=None,
        n=total,
        parts={name: score for name, score, _ in parts},
        parts_n={name: n for name, _, n in parts},
    )


def _checked(score: float) -> float:
    # Upstream's LS credits a substitute named twice twice, which can pass 1: such a score is
    # no score (the worker refuses it too), never stored.
    if not 0.0 <= score <= 1.0:
        raise MissingInput(f"the metric gives {score!r}, outside [0, 1]")
    return score


def prompt_score(prompt: PromptSpec, metric: TaskMetric, records: Sequence[DetailRecord]) -> PromptScore:
    """One prompt's score under ``metric`` from its details records (NER: per ``part``, weighted)."""
    if not records:
        raise MissingInput("the details file is empty")
    if all(harness.part is None for harness in prompt.harness_tasks):
        return PromptScore(score=_checked(metric.score(records)), n=len(records))
    parts = []
    for harness in prompt.harness_tasks:
        part = [record for record in records if getattr(record, "part", None) == harness.part]
        if not part:
            raise MissingInput(f"no records of part {harness.part!r}")
        parts.append((harness.part or harness.name, _checked(metric.score(part)), len(part)))
    if sum(n for _, _, n in parts) != len(records):
        raise MissingInput("records without a known part")
    return weighted_by_size(parts)


#: The records of one (task, prompt) of a run; raises NotFoundError (no such file),
#: MalformedFileError or StorageError.
ReadDetails = Callable[[str, str], Sequence[DetailRecord]]


@dataclass(frozen=True)
class MetricSetScores:
    """What a set computed for a run: the tasks it scored and those it skipped, with why."""

    tasks: dict[str, TaskResult]
    skipped: dict[str, str]


def score_run(
    spec: MetricSetSpec,
    task_prompts: Mapping[str, Iterable[str]],
    read: ReadDetails,
    only: Iterable[str] | None = None,
) -> MetricSetScores:
    """Score every (task, prompt) of ``task_prompts`` that ``spec`` scores itself (or ``only``).

    A task whose details are missing or lack what the metric needs is skipped whole, with the
    reason: a half-scored task would change MaxP and AvgP.
    """
    tasks: dict[str, TaskResult] = {}
    skipped: dict[str, str] = {}
    wanted = set(spec.metrics if only is None else only)
    for task in SUITE:
        if task.id not in task_prompts or task.id not in wanted:
            continue
        metric = spec.metrics[task.id]
        prompts: dict[str, PromptScore] = {}
        try:
            for prompt_id in task_prompts[task.id]:
                prompt = task.prompt(prompt_id)
                try:
                    records = read(task.id, prompt_id)
                except NotFoundError:
                    raise MissingInput(f"no details file for prompt {prompt_id}") from None
                try:
                    prompts[prompt_id] = prompt_score(prompt, metric, records)
                except MissingInput as exc:
                    raise MissingInput(f"{prompt_id}: {exc}") from None
        except MissingInput as exc:
            skipped[task.id] = str(exc)
            continue
        tasks[task.id] = TaskResult(metric=metric.name, prompts=prompts)
    return MetricSetScores(tasks, skipped)


def set_run_items(
    spec: MetricSetSpec,
    task_prompts: Mapping[str, Iterable[str]],
    read: ReadDetails,
    like: RunItems,
) -> tuple[RunItems, dict[str, str]]:
    """The set's per-item statistics of a run, from its details, on the items of ``like``.

    ``like`` is the run's per-item file (lm-eval's statistics, written by the worker): a task
    is built only where it has one, on exactly its items, parts and clusters — so the set's
    draws are those of the lm-eval scores (the same items, the same resamples: paired) and a
    task resampled by cluster (WiC's lemmas, LS's target words) stays so, although the details
    keep no cluster.  Every task of ``task_prompts`` is built with :meth:`MetricSetSpec.metric_of`
    (the set's own metric, or its base set's).  A task that cannot be built is returned in the
    second value with why (no interval for it, never another metric's).
    """
    from leaderboard.core.items import NO_PART, ItemId, RunItems, TaskItems  # pyarrow: only when used

    built: dict[str, TaskItems] = {}
    skipped: dict[str, str] = {}
    for task in SUITE:
        reference = like.tasks.get(task.id)
        if task.id not in task_prompts or reference is None:
            continue
        metric = spec.metric_of(task.id)
        try:
            if metric.item_stats is None or metric.kind is None:
                raise MissingInput(f"{metric.name} has no per-item statistics")
            per_prompt: dict[str, dict[ItemId, list[float]]] = {}
            for prompt_id in task_prompts[task.id]:
                try:
                    records = read(task.id, prompt_id)
                except NotFoundError:
                    raise MissingInput(f"no details file for prompt {prompt_id}") from None
                items: dict[ItemId, list[float]] = {}
                for harness in task.prompt(prompt_id).harness_tasks:
                    part = [r for r in records if getattr(r, "part", None) == harness.part]
                    for record, stats in zip(part, metric.item_stats(part), strict=True):
                        key = ItemId(harness.part or NO_PART, record.doc_id)
                        if key in items:
                            raise MissingInput(f"{prompt_id}: doc {record.doc_id} appears twice")
                        items[key] = stats
                if len(items) != len(records):
                    raise MissingInput(f"{prompt_id}: records without a known part")
                per_prompt[prompt_id] = items
            prompts = [p for p in reference.prompts if p in per_prompt] + [
                p for p in per_prompt if p not in reference.prompts
            ]
            ids = reference.item_ids()
            if any(set(per_prompt[p]) != set(ids) for p in prompts):
                raise MissingInput("the details' items are not those of the run's per-item file")
            clusters = (
                None
                if reference.clusters is None
                else {
                    item: reference.cluster_names[c]
                    for item, c in zip(ids, reference.clusters.tolist(), strict=True)
                }
            )
            built[task.id] = TaskItems.build(
                task.id,
                metric.kind,
                {p: per_prompt[p] for p in prompts},
                parts=reference.parts,
                clusters=clusters,
            )
        except (MissingInput, ValueError) as exc:
            skipped[task.id] = str(exc)
    return RunItems(track=like.track, tasks=built), skipped


def run_prompts(results: ResultsFile) -> dict[str, list[str]]:
    """The suite's (task, prompts) a results file holds, in suite order."""
    return {
        task.id: [p for p in task.prompt_ids if p in results.tasks[task.id].prompts]
        for task in SUITE
        if task.id in results.tasks
    }


def block_of(
    spec: MetricSetSpec, scores: MetricSetScores, computed_by: str, computed_at: str
) -> MetricSetBlock:
    return MetricSetBlock(
        name=spec.id.value,
        version=spec.version,
        computed_by=computed_by,
        computed_at=computed_at,
        tasks=scores.tasks,
        skipped=scores.skipped,
    )


# --------------------------------------------------------------------------- reading a set's scores


def set_tasks(results: ResultsFile, name: MetricSet | str) -> dict[str, TaskResult]:
    """A run's tasks under metric set ``name``, in the file's order.

    ``lm-eval`` (at its harness-native version) is ``results.tasks`` itself.  Another set takes
    the tasks it scores itself from its block of its *current* version, the others from its
    base set.  Such a task is absent when the file has no current block or the block skipped
    it: never the other set's number in its place.
    """
    spec = METRIC_SETS[MetricSet(name)]
    if spec.harness_native:
        return dict(results.tasks)
    block = results.metric_set_block(spec.id.value, spec.version)
    merged = {t: r for t, r in (block.tasks if block is not None else {}).items() if t in spec.metrics}
    if spec.base is not None:
        merged.update({t: r for t, r in set_tasks(results, spec.base).items() if t not in spec.metrics})
    return {t: merged[t] for t in results.tasks if t in merged}


def set_uncertainty(results: ResultsFile, name: MetricSet | str) -> UncertaintySummary | None:
    """The intervals of a run's scores under set ``name``: the file's ``uncertainty`` block for a
    harness-native set, the current block's own for another (None: it has none)."""
    spec = METRIC_SETS[MetricSet(name)]
    if spec.harness_native:
        return results.uncertainty
    block = results.metric_set_block(spec.id.value, spec.version)
    return block.uncertainty if block is not None else None


def has_current_block(results: ResultsFile, name: MetricSet | str) -> bool:
    """Whether the file holds the set's scores at its current version (a harness-native set always does)."""
    return has_current_version(((block.name, block.version) for block in results.metric_sets), name)


def has_current_version(blocks: Iterable[tuple[str, int]], name: MetricSet | str) -> bool:
    """:func:`has_current_block` from the (name, version) of a file's blocks (the contents table's reader)."""
    spec = METRIC_SETS[MetricSet(name)]
    return spec.harness_native or (spec.id.value, spec.version) in set(blocks)


def expected_metric(task: TaskSpec, name: MetricSet | str) -> str:
    """The metric name a task's results carry under set ``name`` (``f1``, ``f1_macro``, ``rouge1_italian``…)."""
    return METRIC_SETS[MetricSet(name)].metric_of(task.id).name


def metric_label(task: TaskSpec, name: MetricSet | str) -> str:
    """How a task's metric is called under set ``name`` (the suite's own label under ``lm-eval``)."""
    if MetricSet(name) is MetricSet.LM_EVAL:
        return task.metric_label
    return METRIC_SETS[MetricSet(name)].metric_of(task.id).label


def differing_tasks(name: MetricSet | str = MetricSet.AS_SPECIFIED) -> tuple[TaskSpec, ...]:
    """The tasks a set scores differently from ``lm-eval``, in paper order."""
    spec = METRIC_SETS[MetricSet(name)]
    return tuple(task for task in SUITE if task.id in spec.metrics and spec.base is not None)
