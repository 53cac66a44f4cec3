"""A synthetic log-likelihood function of item sequences, with a known truth (tests and the bench's check).

``log p(sequence) = Σ unary[item] + Σ pair[a, b]`` over adjacent items ``a, b``: ``pair`` is drawn
at random (a model with its own taste for some successions, none for the canonical order), and a
*memorised* scorer adds ``bonus`` to every succession that is canonical (``b = a + 1``).  Under the
first, the canonical order is one random order among others (the null); under the second it is
favoured (contamination).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from leaderboard.tracks.contamination.definition import CodecDesign, OrderDesign
from leaderboard.tracks.contamination.metrics import (
    CodecScore,
    OrderTest,
    codec_contexts,
    codec_score,
    order_plan,
    order_test,
)


class SyntheticScorer:
    def __init__(self, n_items: int, seed: int, bonus: float = 0.0, scale: float = 1.0) -> None:
        rng = np.random.default_rng(seed)
        self.unary = rng.normal(-50.0, 10.0, n_items)
        self.pair = rng.normal(0.0, scale, (n_items, n_items))
        self.bonus = bonus

    def __call__(self, order: Sequence[int]) -> float:
        total = float(sum(self.unary[i] for i in order))
        for a, b in itertools.pairwise(order):
            total += float(self.pair[a, b]) + (self.bonus if b == a + 1 else 0.0)
        return total

    def in_context(self, item: int, context: Sequence[int]) -> float:
        """An item after its context: helped by an unseen set's context, hurt when memorised (CoDeC's premise)."""
        effect = float(np.mean([self.pair[c, item] for c in context]))
        return float(self.unary[item]) + effect + (-self.bonus if self.bonus else 1.0)


def synthetic_order_test(scorer: SyntheticScorer, n_items: int, design: OrderDesign, key: str) -> OrderTest:
    shards = order_plan(n_items, design, key)
    return order_test(
        [scorer(s.canonical) for s in shards], [[scorer(p) for p in s.permutations] for s in shards]
    )


def synthetic_codec(scorer: SyntheticScorer, n_items: int, design: CodecDesign, key: str) -> CodecScore:
    contexts = codec_contexts(n_items, design, key)
    alone = [float(scorer.unary[i]) for i in range(n_items)]
    return codec_score(alone, [scorer.in_context(i, c) for i, c in enumerate(contexts)])
