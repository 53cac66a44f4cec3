"""How a metric is aggregated from the sum of its items' sufficient statistics.

A :class:`MetricKind` names a metric, says how many statistics an item carries (``width``, a
function of the number of labels) and aggregates **summed** statistics to the score:
``aggregate(sums, n)`` with ``sums`` of shape ``(..., d)`` (any leading axes: resamples,
prompts) and ``n`` the number of items summed (each resample keeps it).  Aggregations are
written with the same floating-point operations, in the same order, as the harness's, so the
score of the observed items (summed exactly, in document order) equals the harness's to the
last bit; the tests compare them with lm-eval's own functions.

The generic kinds (any track) are :data:`MEAN`, :data:`F1_BINARY`, :data:`F1_MACRO` and
:data:`F1_WEIGHTED`; a track adds its own with :meth:`MetricKinds.with_kinds`
(each track's are in its ``uncertainty`` module).

F1 statistics, for labels ``0 … K−1``: an item carries per label ``k`` its true positives
``tp_k`` (gold = prediction = k) and ``s_k`` = (gold = k) + (prediction = k), laid out
``[tp_0 … tp_{K−1}, s_0 … s_{K−1}]`` (``F1_WEIGHTED`` adds the gold counts ``g_k``).  Then
F1_k = 2·tp_k / s_k — what scikit-learn computes, ``2·tp / (true_sum + pred_sum)`` — and a
label is *present* (in y_true ∪ y_pred, the labels scikit-learn averages over) iff s_k > 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from eval_queue.text import unknown_name

Array = NDArray[np.float64]


@dataclass(frozen=True)
class MetricKind:
    """A metric as a function of summed per-item statistics.

    ``width(n_labels)`` is the number of statistics per item; ``aggregate(sums, n)`` maps
    ``(..., d)`` sums over ``n`` items to ``(...)`` scores.
    """

    name: str
    description: str
    width: Callable[[int], int]
    aggregate: Callable[[Array, int], Array]


class UnknownMetricKindError(KeyError):
    """A per-item file names a metric kind nobody registered."""


@dataclass(frozen=True)
class MetricKinds:
    """An immutable registry of metric kinds by name; a name registered twice is an error."""

    kinds: Mapping[str, MetricKind]

    @classmethod
    def of(cls, *kinds: MetricKind) -> MetricKinds:
        return cls(MappingProxyType({})).with_kinds(*kinds)

    def with_kinds(self, *kinds: MetricKind) -> MetricKinds:
        merged = dict(self.kinds)
        for kind in kinds:
            if kind.name in merged:
                raise ValueError(f"metric kind {kind.name!r} is registered twice")
            merged[kind.name] = kind
        return MetricKinds(MappingProxyType(merged))

    def get(self, name: str) -> MetricKind:
        try:
            return self.kinds[name]
        except KeyError:
            raise UnknownMetricKindError(unknown_name("metric kind", name, sorted(self.kinds))) from None

    def __contains__(self, name: object) -> bool:
        return name in self.kinds


# --------------------------------------------------------------------------- helpers


def per_label_f1(tp: Array, s: Array) -> tuple[Array, NDArray[np.bool_]]:
    """Per-label F1 = 2·tp/s and presence (s > 0); F1 is 0 where s = 0 (absent label)."""
    present = s > 0
    f1 = np.divide(2.0 * tp, s, out=np.zeros(np.broadcast_shapes(tp.shape, s.shape)), where=present)
    return f1, present


def sequential_sum(values: Array, mask: NDArray[np.bool_]) -> Array:
    """Σ over the last axis of ``values`` where ``mask``, added left to right.

    Python's ``sum`` (and numpy's for fewer than 8 terms) adds in this order; adding 0.0 for
    a masked term changes nothing, so the result is bit-identical.
    """
    total = np.zeros(values.shape[:-1])
    for k in range(values.shape[-1]):
        total = total + np.where(mask[..., k], values[..., k], 0.0)
    return total


def confusion_f1_stats(
    pairs: Iterable[tuple[int, int]], n_labels: int, *, gold_counts: bool = False
) -> list[float]:
    """An item's F1 statistics from its ``(gold, prediction)`` label pairs (labels ``0 … K−1``)."""
    tp = [0.0] * n_labels
    s = [0.0] * n_labels
    g = [0.0] * n_labels
    for gold, pred in pairs:
        gold, pred = int(gold), int(pred)
        if not (0 <= gold < n_labels and 0 <= pred < n_labels):
            raise ValueError(f"label pair ({gold}, {pred}) outside 0…{n_labels - 1}")
        s[gold] += 1
        s[pred] += 1
        g[gold] += 1
        if gold == pred:
            tp[gold] += 1
    return tp + s + (g if gold_counts else [])


# --------------------------------------------------------------------------- generic kinds


def _mean(sums: Array, n: int) -> Array:
    # lm-eval's ``mean``: sum(arr) / len(arr).
    return sums[..., 0] / n


def _f1_binary(sums: Array, n: int) -> Array:
    # sklearn f1_score(average="binary", pos_label=1): F1 of label 1; 0.0 when it is absent
    # from both golds and predictions (zero_division="warn" gives 0).
    f1, _ = per_label_f1(sums[..., 1], sums[..., 3])
    return f1


def _f1_macro(sums: Array, n: int) -> Array:
    # sklearn f1_score(average="macro"): mean over the labels present in y_true ∪ y_pred.
    k = sums.shape[-1] // 2
    f1, present = per_label_f1(sums[..., :k], sums[..., k:])
    return sequential_sum(f1, present) / present.sum(axis=-1)


def _f1_weighted(sums: Array, n: int) -> Array:
    # sklearn f1_score(average="weighted"): present labels' F1 weighted by their gold counts.
    k = sums.shape[-1] // 3
    f1, present = per_label_f1(sums[..., :k], sums[..., k : 2 * k])
    gold = sums[..., 2 * k :]
    weight = np.where(present, gold, 0.0)
    total = weight.sum(axis=-1)
    return np.divide(sequential_sum(f1 * weight, present), total, out=np.zeros_like(total), where=total > 0)


MEAN = MetricKind(
    "mean", "mean of a per-item value (accuracy, ROUGE, EM, METEOR): [value]", lambda k: 1, _mean
)
F1_BINARY = MetricKind(
    "f1_binary",
    "F1 of label 1 over (gold, prediction) pairs, labels {0, 1}: [tp_0, tp_1, s_0, s_1]",
    lambda k: 4,
    _f1_binary,
)
F1_MACRO = MetricKind(
    "f1_macro",
    "macro F1 over the labels present in golds ∪ predictions: [tp_0…tp_{K-1}, s_0…s_{K-1}]",
    lambda k: 2 * k,
    _f1_macro,
)
F1_WEIGHTED = MetricKind(
    "f1_weighted",
    "support-weighted F1 over the present labels: [tp_k…, s_k…, gold_k…]",
    lambda k: 3 * k,
    _f1_weighted,
)

#: The kinds every track may use.
GENERIC_KINDS = MetricKinds.of(MEAN, F1_BINARY, F1_MACRO, F1_WEIGHTED)


def point_sums(stats: Array) -> Array:
    """Exact sums over items (axis −2) in item order: what the harness's left-to-right sums give.

    ``np.cumsum`` adds sequentially, like Python's ``sum`` in the harness's aggregations
    (``np.sum`` adds pairwise, which differs in the last bits for non-integer values).
    """
    if stats.shape[-2] == 0:
        return np.zeros(stats.shape[:-2] + stats.shape[-1:])
    return np.cumsum(stats, axis=-2)[..., -1, :]


def combine_parts(scores: Sequence[Array], sizes: Sequence[int]) -> Array:
    """Parts' scores weighted by their item counts, as lm-eval's groups (``weight_by_size``) do.

    ``sum(score·size) / sum(sizes)`` with Python's left-to-right sums, like
    ``lm_eval.api.metrics.aggregate_subtask_metrics`` and the project's NER prompt score.
    """
    if len(scores) == 1:
        return scores[0]
    total = np.zeros(np.shape(scores[0]))
    for score, size in zip(scores, sizes, strict=True):
        total = total + score * size
    return total / sum(sizes)
