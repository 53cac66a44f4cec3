"""The contamination track: its one definition (sets, the two tests' designs, wording).

Its About text is :mod:`leaderboard.tracks.contamination.app.about`.

Question asked of a model, per public test set of the suite: *is there evidence that it has seen
this set in its published order?*  Two tests answer it, neither an accusation:

* the **sharded order test** (Oren et al. 2023, "Proving test set contamination in black box
  language models", ICLR 2024): if the model never saw the set in its canonical order, every
  order of its items is equally likely under the model (exchangeability), so the log-likelihood
  of the canonical order is no larger, on average, than that of a shuffled one.  The set is cut
  into contiguous shards; per shard the statistic is ``log p(canonical) − mean_j log p(perm_j)``
  over ``r`` random permutations of the shard; a one-sided t-test over shards gives the p-value;
  Holm's step-down adjusts the p-values of one run's sets (family-wise error);
* **CoDeC** (Zawalski et al., ICLR 2026, "Detecting data contamination in LLMs via in-context
  learning"): the share of items whose mean per-token log-likelihood *drops* when other items of
  the same set are put before them.  Unseen data usually gains from such context; memorised data
  loses.  Reported with a Wilson interval over items and placed against the board's other models
  on the same set (a reference band), never against a fixed threshold.

Per-item membership scores (Min-K%, Min-K%++) are deliberately absent: their false-positive
behaviour is weak and unstable, so they are not used for any verdict.

Pure data: no I/O, no torch, no lm-eval.
"""

from __future__ import annotations

from dataclasses import dataclass

TRACK = "contamination"

#: The family-wise level at which the order test's Holm-adjusted p-value counts as evidence.
ALPHA = 0.01
#: Confidence of the CoDeC interval over items.
CONFIDENCE = 0.95
#: Other models' scores needed on a set before a reference band is drawn.
MIN_REFERENCE_MODELS = 3
#: The band's coverage of the other models' scores (its quantiles: 5 % and 95 %).
BAND_COVERAGE = 0.90

#: How items are joined into one text (an order-test sequence, a CoDeC context).
SEPARATOR = "\n\n"

#: The wording of the track's one claim: evidence of having seen the order, never an accusation.
EVIDENCE = "evidence that the model has seen this test set in its published order"
NO_EVIDENCE = "no evidence at the 1 % family-wise level"


@dataclass(frozen=True)
class TestSet:
    """One public test set: where the harness reads it and how the track names it.

    ``split`` is the split the harness evaluates (``*``: every split, INDAQA2's questions);
    ``optional`` sets are tested where their data is present and skipped (recorded) otherwise.
    """

    __test__ = False  # not a pytest class, whatever its name

    id: str
    label: str
    task: str
    dataset_path: str
    dataset_config: str | None
    split: str
    optional: bool = False


@dataclass(frozen=True)
class OrderDesign:
    """The sharded order test's design, chosen per set from its size and recorded in the results.

    ``shards``: contiguous blocks of the canonical order (at least ``min_shard_items`` items
    each, at most ``max_shards`` of them); ``permutations``: random orders per shard; ``seed``:
    the permutations' seed (a run is reproducible).

    Why 10 permutations (was 25): under the null a shard's canonical order and its ``r`` random
    orders are exchangeable, so its statistic ``d = ll(canonical) − mean_r ll(perm)`` has mean 0
    whatever ``r`` — the false-positive guarantee does not depend on ``r`` — and variance
    ``σ²(1 + 1/r)``: going from 25 to 10 widens the t-test's standard error by 2.8 % (the power
    of about 6 % more shards) and cuts the order test's cost from 26 to 11 scored orders per shard.
    """

    permutations: int = 10
    max_shards: int = 50
    min_shard_items: int = 3
    seed: int = 1234

    def shards_for(self, n_items: int) -> int:
        """How many shards a set of ``n_items`` is cut into (0: too small to test)."""
        if n_items < 2 * self.min_shard_items:
            return 0
        return max(2, min(self.max_shards, n_items // self.min_shard_items))


@dataclass(frozen=True)
class CodecDesign:
    """CoDeC's design: ``context_items`` other items of the set (drawn with ``seed``) before each item."""

    context_items: int = 4
    seed: int = 4321


DEFAULT_ORDER = OrderDesign()
DEFAULT_CODEC = CodecDesign()
DEFAULT_PERMUTATIONS = DEFAULT_ORDER.permutations
DEFAULT_CONTEXT_ITEMS = DEFAULT_CODEC.context_items
