"""Contamination results built in memory (tests of the schema, the tables, the export and the tab)."""

from __future__ import annotations

from leaderboard.core.schema import ModelInfo
from leaderboard.tracks.contamination.schema import (
    CodecResult,
    ContaminationResults,
    ContaminationRunInfo,
    OrderResult,
    SetResult,
)


def set_result(codec: float, p: float = 0.4, p_holm: float | None = None, n: int = 100) -> SetResult:
    drops = round(codec * n)
    return SetResult(
        n_items=n,
        order=OrderResult(
            shards=10,
            shard_items_min=10,
            shard_items_max=10,
            permutations=25,
            p_value=p,
            p_holm=p if p_holm is None else p_holm,
            t=0.5,
            mean_diff=0.1,
            tokens=5000,
        ),
        codec=CodecResult(
            score=drops / n,
            low=max(0.0, drops / n - 0.1),
            high=min(1.0, drops / n + 0.1),
            n=n,
            drops=drops,
            context_items=4,
            tokens=2000,
        ),
    )


def results(
    model: str, sets: dict[str, SetResult], *, data: str = "hub", finished_at: str = "2026-11-27T10:00:00Z"
) -> ContaminationResults:
    return ContaminationResults(
        model=ModelInfo(id=model, revision="a" * 40, precision="float32"),
        run=ContaminationRunInfo(
            num_fewshot=0,
            data=data,
            finished_at=finished_at,
            duration_s=120.0,
            sets=list(sets),
            order_permutations=25,
            codec_context_items=4,
        ),
        sets=sets,
    )
