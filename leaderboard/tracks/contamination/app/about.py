"""The contamination track's About text (the spec's ``about``): what each test shows and cannot show."""

from __future__ import annotations

from leaderboard.tracks.contamination.definition import (
    ALPHA,
    BAND_COVERAGE,
    CONFIDENCE,
    DEFAULT_CONTEXT_ITEMS,
    DEFAULT_PERMUTATIONS,
    EVIDENCE,
    MIN_REFERENCE_MODELS,
)

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
