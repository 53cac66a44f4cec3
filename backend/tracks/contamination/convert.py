"""Harness output → the contamination results body and details (pure: no I/O, no torch).

The harness logs one sample per document with its log-likelihood (``ll``, the tasks' hook) and
the document (``doc``: shard and order, or item and condition).  Per set, the order test takes
each shard's canonical and permuted log-likelihoods, CoDeC each item's two; Holm adjusts the
order test's p-values over the run's tested sets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from backend.tracks import IncompleteRunError
from backend.tracks.contamination.data import CODEC, ORDER, ContaminationData, SetPlan, codec_rows, order_rows
from leaderboard.tracks.contamination.metrics import codec_score, holm, order_test
from leaderboard.tracks.contamination.schema import (
    CodecDetail,
    CodecResult,
    OrderDetail,
    OrderResult,
    SetResult,
)


def _lls(samples: Sequence[Mapping[str, Any]], task: str) -> list[tuple[Mapping[str, Any], float]]:
    pairs = []
    for sample in samples:
        if "ll" not in sample or "doc" not in sample:
            raise IncompleteRunError(f"task {task}: a logged sample lacks its document or log-likelihood")
        pairs.append((sample["doc"], float(sample["ll"])))
    return pairs


def order_lls(plan: SetPlan, samples: Sequence[Mapping[str, Any]]) -> tuple[list[float], list[list[float]]]:
    """Per shard: the canonical order's log-likelihood and each permutation's (in plan order)."""
    task = plan.task_name(ORDER)
    canonical: dict[int, float] = {}
    permuted: dict[tuple[int, int], float] = {}
    for doc, ll in _lls(samples, task):
        shard, order = int(doc["shard"]), int(doc["order"])
        if order < 0:
            canonical[shard] = ll
        else:
            permuted[(shard, order)] = ll
    shards = range(len(plan.shards))
    wanted = {(k, j) for k in shards for j in range(len(plan.shards[k].permutations))}
    if set(canonical) != set(shards) or set(permuted) != wanted:
        raise IncompleteRunError(
            f"task {task}: the harness scored {len(canonical) + len(permuted)} of "
            f"{len(plan.shards) + len(wanted)} orders"
        )
    return [canonical[k] for k in shards], [
        [permuted[(k, j)] for j in range(len(plan.shards[k].permutations))] for k in shards
    ]


def codec_lls(plan: SetPlan, samples: Sequence[Mapping[str, Any]]) -> tuple[list[float], list[float]]:
    """Per item: its log-likelihood alone and after its context items."""
    task = plan.task_name(CODEC)
    alone: dict[int, float] = {}
    context: dict[int, float] = {}
    for doc, ll in _lls(samples, task):
        (alone if doc["condition"] == "alone" else context)[int(doc["item"])] = ll
    items = range(len(plan.contexts))
    if set(alone) != set(items) or set(context) != set(items):
        raise IncompleteRunError(
            f"task {task}: the harness scored {len(alone) + len(context)} of {2 * len(items)} documents"
        )
    return [alone[i] for i in items], [context[i] for i in items]


def order_tokens(plan: SetPlan, count: Callable[[str], int]) -> int:
    """Tokens the order test scores on this set: each sequence and its start-of-text token."""
    return sum(count(row["text"]) + 1 for row in order_rows(plan))


def codec_tokens(plan: SetPlan, count: Callable[[str], int]) -> int:
    """Tokens CoDeC scores on this set: each item alone (plus start-of-text), each context and item."""
    return sum(
        count(row["continuation"]) + 1 if not row["context"] else count(row["context"] + row["continuation"])
        for row in codec_rows(plan)
    )


def contamination_body(
    data: ContaminationData,
    samples: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    count: Callable[[str], int] | None = None,
) -> tuple[dict[str, SetResult], dict[str, bytes]]:
    """The ``sets`` body and the details files (``order_<set>.jsonl``, ``codec_<set>.jsonl``)."""
    raw: dict[str, dict[str, Any]] = {}
    details: dict[str, bytes] = {}
    tested: dict[str, float] = {}
    for plan in data.plans:
        entry: dict[str, Any] = {"n_items": len(plan.items.items), "order": None, "codec": None}
        if plan.shards:
            canonical, permuted = order_lls(plan, samples.get(plan.task_name(ORDER), []))
            test = order_test(canonical, permuted)
            sizes = [s.end - s.start for s in plan.shards]
            entry["order"] = {
                "shards": test.shards,
                "shard_items_min": min(sizes),
                "shard_items_max": max(sizes),
                "permutations": test.permutations,
                "p_value": test.p_value,
                "t": test.t,
                "mean_diff": test.mean_diff,
                "tokens": order_tokens(plan, count) if count else None,
            }
            tested[plan.set_id] = test.p_value
            details[f"order_{plan.set_id}.jsonl"] = "".join(
                OrderDetail(
                    shard=k,
                    start=s.start,
                    end=s.end,
                    canonical=canonical[k],
                    permuted=permuted[k],
                    permutations=[list(p) for p in s.permutations],
                ).model_dump_json()
                + "\n"
                for k, s in enumerate(plan.shards)
            ).encode()
        alone, in_context = codec_lls(plan, samples.get(plan.task_name(CODEC), []))
        score = codec_score(alone, in_context)
        entry["codec"] = CodecResult(
            score=score.score,
            low=score.low,
            high=score.high,
            n=score.n,
            drops=score.drops,
            context_items=len(plan.contexts[0]),
            tokens=codec_tokens(plan, count) if count else None,
        )
        details[f"codec_{plan.set_id}.jsonl"] = "".join(
            CodecDetail(
                item=i, context=list(plan.contexts[i]), alone=alone[i], in_context=in_context[i]
            ).model_dump_json()
            + "\n"
            for i in range(len(alone))
        ).encode()
        raw[plan.set_id] = entry
    adjusted = holm(tested)
    body = {}
    for set_id, entry in raw.items():
        if entry["order"] is not None:
            entry["order"] = OrderResult(**entry["order"], p_holm=adjusted[set_id])
        body[set_id] = SetResult(**entry)
    return body, details
