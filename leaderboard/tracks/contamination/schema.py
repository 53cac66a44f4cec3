"""The contamination results file: the shared envelope with this track's ``sets`` body.

::

    {"schema": "evalita-llm-results/2", "track": "contamination",
     "model": {…}, "run": {…, "order_permutations": 25, "codec_context_items": 4, "window_tokens": 8192, …},
     "sets": {"te": {"n_items": 400,
                     "order": {"shards": 50, "shard_items_min": 8, "shard_items_max": 8, "permutations": 25,
                               "p_value": 0.41, "p_holm": 1.0, "t": 0.23, "mean_diff": 0.8, "tokens": 512000},
                     "codec": {"score": 0.31, "low": 0.27, "high": 0.36, "n": 400, "drops": 124,
                               "context_items": 4, "tokens": 210000}}, …},
     "skipped": {"<set>": "why it was not tested (an optional set absent from the data)"}}

``order`` is null for a set too small to cut into two shards.  Details (per set):
``order_<set>.jsonl`` (a line per shard: its items, the canonical and every permutation's
log-likelihood) and ``codec_<set>.jsonl`` (a line per item: the context items, both
log-likelihoods); never the items' text.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict, Field, model_validator

from leaderboard.core.schema import ResultsEnvelope, RunInfo, StrictModel
from leaderboard.tracks.contamination.definition import ALPHA, TRACK


class OrderResult(StrictModel):
    """The sharded order test on one set (p-values on 0–1; ``p_holm`` over the run's tested sets)."""

    shards: int = Field(ge=2)
    shard_items_min: int = Field(ge=1)
    shard_items_max: int = Field(ge=1)
    permutations: int = Field(ge=1)
    p_value: float = Field(ge=0.0, le=1.0)
    p_holm: float = Field(ge=0.0, le=1.0)
    t: float | None = None
    mean_diff: float
    #: Tokens the model scored for this test on this set (every shard in every order).
    tokens: int | None = Field(default=None, ge=0)

    @property
    def flagged(self) -> bool:
        """Evidence at the family-wise :data:`ALPHA` level (the one rule the tab, panel and export use)."""
        return self.p_holm < ALPHA


class CodecResult(StrictModel):
    """CoDeC on one set: the share of items whose log-likelihood drops with context, its interval."""

    score: float = Field(ge=0.0, le=1.0)
    low: float = Field(ge=0.0, le=1.0)
    high: float = Field(ge=0.0, le=1.0)
    n: int = Field(ge=1)
    drops: int = Field(ge=0)
    context_items: int = Field(ge=1)
    tokens: int | None = Field(default=None, ge=0)


class SetResult(StrictModel):
    n_items: int = Field(ge=0)
    order: OrderResult | None = None
    codec: CodecResult | None = None

    @property
    def tokens(self) -> int | None:
        counted = [t.tokens for t in (self.order, self.codec) if t is not None and t.tokens is not None]
        return sum(counted) if counted else None


class ContaminationRunInfo(RunInfo):
    """The shared ``run`` block plus the tests' design as run (so two runs can be told apart)."""

    sets: list[str] = Field(default_factory=list)
    order_permutations: int | None = None
    order_max_shards: int | None = None
    order_min_shard_items: int | None = None
    order_seed: int | None = None
    codec_context_items: int | None = None
    codec_seed: int | None = None
    #: The model's window in tokens: a sequence longer than this is scored in rolling windows.
    window_tokens: int | None = None
    #: Characters of the longest sequence scored (an order-test shard or a CoDeC context + item).
    longest_sequence_chars: int | None = None


class ContaminationResults(ResultsEnvelope):
    """A contamination results file (strict body)."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    TRACK: ClassVar[str] = TRACK

    track: str = TRACK
    run: ContaminationRunInfo
    sets: dict[str, SetResult]
    skipped: dict[str, str] = Field(default_factory=dict)

    @property
    def comparable(self) -> bool:
        """A full run (official data, every item) of every required set of the suite."""
        from leaderboard.tracks.contamination.suite import suite_sets

        required = {s.id for s in suite_sets() if not s.optional}
        return self.run.official_full_run and required <= set(self.sets)

    @model_validator(mode="after")
    def _sets_as_run_says(self) -> ContaminationResults:
        if self.run.sets and set(self.sets) != set(self.run.sets):
            raise ValueError(f"sets {sorted(self.sets)} differ from run.sets {sorted(self.run.sets)}")
        return self


class OrderDetail(StrictModel):
    """One line of ``order_<set>.jsonl``: a shard and its log-likelihoods."""

    shard: int
    start: int
    end: int
    canonical: float
    permuted: list[float]
    permutations: list[list[int]]


class CodecDetail(StrictModel):
    """One line of ``codec_<set>.jsonl``: an item, the items put before it, both log-likelihoods."""

    item: int
    context: list[int]
    alone: float
    in_context: float
