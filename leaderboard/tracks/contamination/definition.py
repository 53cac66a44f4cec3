"""The contamination track: its one definition (sets, the two tests' designs, wording, About text).

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

ABOUT_MARKDOWN = f"""### Contamination: has a model seen the test sets?

Evalita's test sets have been public for years, in a fixed order. For each public test set of the
suite (the ten Evalita-LLM tasks' test files as the harness reads them, NER per domain, and
INDAQA2's questions where present) this track reports **{EVIDENCE}** — or its absence. It is a
statistical signal about one order of one file, never an accusation, and never changes a score.

**Sharded order test** (Oren et al. 2023, *Proving test set contamination in black box language
models*, ICLR 2024). If a model never saw the set in its published (canonical) order, all orders of
its items are equally likely under the model. The set is cut into contiguous shards; for each shard
the log-likelihood of the canonical order is compared with the mean over random permutations of the
same items; a one-sided t-test over shards gives a p-value, and Holm's method adjusts the p-values
of one run's sets. A set is flagged only when its adjusted p-value is below {ALPHA:.0%}.
*What it can show:* that the model prefers the published order — which a model that never saw the
file has no reason to do. *What it cannot show:* a model trained on the items shuffled, paraphrased,
translated or reformatted passes the test, so passing is **not** proof of a clean model. A file whose
order carries meaning (items sorted by topic or label) can also favour its own order; the
calibration benchmark checks the false-flag rate on permuted pseudo-sets.

**CoDeC** (Zawalski et al., ICLR 2026, *Detecting data contamination in LLMs via in-context
learning*): the share of items whose mean per-token log-likelihood *drops* when other items of the
same set are placed before them (unseen data usually gains from such context, memorised data
loses). Shown with a {CONFIDENCE:.0%} Wilson interval over items and placed against the scores of the
board's other models on the same set (the band of their middle {BAND_COVERAGE:.0%}, once
{MIN_REFERENCE_MODELS} or more models have one) — a position in the board, not a fixed threshold. Its
separation of seen from unseen sets is reported by its authors and not independently replicated.

In the **ranking**, a run's task cell carries a ⚑ (a link to the model's evidence) only when the order
test of the model's latest contamination run flags that task's set at the {ALPHA:.0%} family-wise level;
nothing else in the ranking changes.

Per-item membership scores (Min-K%, Min-K%++) are not used: their false-positive rates are unstable.
Costs (tokens, minutes) are shown per run and set: the order test scores each set about
{1 + DEFAULT_PERMUTATIONS} times over (its canonical order and {DEFAULT_PERMUTATIONS} others per shard;
small shards fewer), CoDeC about six times (each item alone and after {DEFAULT_CONTEXT_ITEMS} others)."""


def about_markdown() -> str:
    """The About page's section for this track."""
    return ABOUT_MARKDOWN
