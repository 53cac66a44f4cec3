"""The contamination track's statistics, pure (no I/O): the order test, Holm, CoDeC, the reference band.

Estimands:

* **order test** (Oren et al. 2023, sharded): per shard ``k`` of the canonical order,
  ``d_k = log p(canonical_k) − mean_j log p(perm_kj)``.  Under the null — the model is
  indifferent to the set's published order, i.e. the canonical order is exchangeable with its
  permutations — ``E[d_k] = 0``; the p-value is the one-sided t-test of ``mean(d) > 0`` over
  the shards (scipy).  Small under contamination, close to uniform otherwise (the tests check
  its histogram).
* **Holm**: the step-down family-wise adjustment of one run's p-values (one per set).
* **CoDeC** (Zawalski et al. 2026): the share of items whose mean per-token log-likelihood
  drops when ``k`` other items of the set come before them; a Wilson interval over items.
* **reference band**: the 5 %–95 % quantiles of the other models' CoDeC scores on the same set.

The random plans (shards' permutations, CoDeC contexts) are drawn here from a seed and the set's
id, so that the worker and the tests build the same plan.
"""

from __future__ import annotations

import itertools
import math
import statistics
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from leaderboard.tracks.contamination.definition import (
    BAND_COVERAGE,
    CONFIDENCE,
    MIN_REFERENCE_MODELS,
    CodecDesign,
    OrderDesign,
)

# --------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class Shard:
    """Items ``start``…``end - 1`` of the canonical order and the random orders they are also scored in
    (each a tuple of item indices, the canonical one being ``range(start, end)``)."""

    start: int
    end: int
    permutations: tuple[tuple[int, ...], ...]

    @property
    def canonical(self) -> tuple[int, ...]:
        return tuple(range(self.start, self.end))


def _rng(seed: int, key: str) -> np.random.Generator:
    # crc32, not hash(): Python salts str hashes per process, and a plan must be reproducible.
    return np.random.default_rng([seed, zlib.crc32(key.encode())])


def shard_bounds(n_items: int, shards: int) -> list[tuple[int, int]]:
    """``shards`` contiguous blocks of ``range(n_items)``, sizes differing by at most one."""
    if shards <= 0 or shards > n_items:
        raise ValueError(f"cannot cut {n_items} items into {shards} shards")
    edges = [round(i * n_items / shards) for i in range(shards + 1)]
    return list(itertools.pairwise(edges))


def shard_orders(size: int, permutations: int, rng: np.random.Generator) -> tuple[tuple[int, ...], ...]:
    """The non-canonical orders of a shard of ``size`` items (offsets 0…size-1) scored against it.

    Every one of them when there are at most ``permutations`` (a shard of 3 has 5: the mean over
    all is exact and cheaper than sampling), else ``permutations`` drawn at random, none of them
    the canonical order (it is the statistic's other side).
    """
    canonical = tuple(range(size))
    if math.factorial(size) - 1 <= permutations:
        return tuple(p for p in itertools.permutations(canonical) if p != canonical)
    drawn: list[tuple[int, ...]] = []
    while len(drawn) < permutations:
        order = tuple(int(i) for i in rng.permutation(size))
        if order != canonical:
            drawn.append(order)
    return tuple(drawn)


def order_plan(n_items: int, design: OrderDesign, key: str) -> tuple[Shard, ...]:
    """The shards of a set of ``n_items`` and the orders each is scored in besides its canonical one.

    Empty when the set is too small to test (:meth:`OrderDesign.shards_for`).  ``key`` (the
    set's id) makes each set's permutations its own while the run stays reproducible.
    """
    count = design.shards_for(n_items)
    if count == 0:
        return ()
    rng = _rng(design.seed, f"order:{key}")
    shards = []
    for start, end in shard_bounds(n_items, count):
        orders = shard_orders(end - start, design.permutations, rng)
        shards.append(Shard(start, end, tuple(tuple(i + start for i in order) for order in orders)))
    return tuple(shards)


def codec_contexts(n_items: int, design: CodecDesign, key: str) -> tuple[tuple[int, ...], ...]:
    """For each item, the indices of the other items put before it (``design.context_items`` of them,
    fewer in a smaller set; drawn without replacement, never the item itself)."""
    if n_items < 2:
        return ()
    rng = _rng(design.seed, f"codec:{key}")
    k = min(design.context_items, n_items - 1)
    contexts = []
    for item in range(n_items):
        others = np.delete(np.arange(n_items), item)
        contexts.append(tuple(int(i) for i in rng.choice(others, size=k, replace=False)))
    return tuple(contexts)


# --------------------------------------------------------------------------- the order test


@dataclass(frozen=True)
class OrderTest:
    """The sharded order test of one set: the p-value and what it was computed from."""

    p_value: float
    t: float | None
    mean_diff: float
    shards: int
    permutations: int


def order_test(canonical: Sequence[float], permuted: Sequence[Sequence[float]]) -> OrderTest:
    """One-sided t-test over shards that the canonical order is more likely than its permutations.

    ``canonical[k]``: log-likelihood of shard ``k`` in the canonical order; ``permuted[k]``: of
    each of its permutations.  Needs at least two shards.  When every shard's difference is the
    same (no spread: a t statistic does not exist), the p-value is 1 unless that difference is
    positive, then 0 — only reachable with degenerate shards, never with real log-likelihoods.
    """
    if len(canonical) != len(permuted) or len(canonical) < 2:
        raise ValueError(f"need two or more shards with permutations (got {len(canonical)}, {len(permuted)})")
    if any(len(p) == 0 for p in permuted):
        raise ValueError("every shard needs at least one permutation")
    diffs = np.array([c - float(np.mean(p)) for c, p in zip(canonical, permuted, strict=True)])
    mean = float(diffs.mean())
    if float(diffs.std()) == 0.0:
        return OrderTest(0.0 if mean > 0 else 1.0, None, mean, len(diffs), min(len(p) for p in permuted))
    # scipy on first use only: the app imports this module (the band) and must build without it
    # pulling in what scipy probes for (torch is absent on a CPU Space).
    from scipy import stats

    result = stats.ttest_1samp(diffs, 0.0, alternative="greater")
    return OrderTest(
        float(result.pvalue), float(result.statistic), mean, len(diffs), min(len(p) for p in permuted)
    )


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values (family-wise error over the given tests), capped at 1."""
    ordered = sorted(p_values.items(), key=lambda kv: kv[1])
    m = len(ordered)
    adjusted: dict[str, float] = {}
    running = 0.0
    for rank, (name, p) in enumerate(ordered):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[name] = running
    return adjusted


# --------------------------------------------------------------------------- CoDeC


def wilson(successes: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of a binomial share (well-behaved at 0, 1 and small ``n``)."""
    if n <= 0:
        raise ValueError("an interval needs at least one item")
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # At 0 and n the bounds are exactly 0 and 1 (the formula leaves a rounding residue there).
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class CodecScore:
    """CoDeC of one set: the share of items whose log-likelihood drops with context, its interval."""

    score: float
    low: float
    high: float
    n: int
    drops: int


def codec_score(alone: Sequence[float], in_context: Sequence[float]) -> CodecScore:
    """The share of items with ``in_context[i] < alone[i]`` and its Wilson interval.

    Both are the item's mean per-token log-likelihood (or its total over the same tokens: the
    worker scores the very same continuation tokens in both conditions, so the comparison is
    the same).  A tie is not a drop.
    """
    if len(alone) != len(in_context) or not alone:
        raise ValueError(f"need one score per item in both conditions (got {len(alone)}, {len(in_context)})")
    drops = sum(1 for a, c in zip(alone, in_context, strict=True) if c < a)
    low, high = wilson(drops, len(alone))
    return CodecScore(drops / len(alone), low, high, len(alone), drops)


class BandPosition(StrEnum):
    """Where a model's CoDeC interval lies against the band of the other models on the same set."""

    ABOVE = "above"
    WITHIN = "within"
    BELOW = "below"
    NO_REFERENCE = "no reference"


@dataclass(frozen=True)
class Band:
    low: float
    high: float
    models: int


def reference_band(
    others: Sequence[float], coverage: float = BAND_COVERAGE, min_models: int = MIN_REFERENCE_MODELS
) -> Band | None:
    """The middle ``coverage`` of the other models' scores on a set (None: fewer than ``min_models``)."""
    if len(others) < min_models:
        return None
    tail = (1 - coverage) / 2
    low, high = np.quantile(np.asarray(others, dtype=float), [tail, 1 - tail])
    return Band(float(low), float(high), len(others))


def band_position(low: float, high: float, band: Band | None) -> BandPosition:
    """``above`` when the whole interval is above the band, ``below`` when under it, else ``within``."""
    if band is None:
        return BandPosition.NO_REFERENCE
    if low > band.high:
        return BandPosition.ABOVE
    if high < band.low:
        return BandPosition.BELOW
    return BandPosition.WITHIN
