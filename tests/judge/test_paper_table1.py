"""Table 1 of the judges paper (Donati et al.) against the track's statistics.

Table 1 prints, per judge, MAE and Spearman's ρ with its p-value, with no n.  The p-values
fix it: each printed (ρ, p) pair is what Spearman's test gives at n = 250 — the paper's
250 evaluations (50 summaries × 5 criteria) pooled — and none is what it gives per
criterion (n = 50).  So the track's ``overall`` figure, all criteria pooled, is Table 1's;
these tests pin that on every row for the arithmetic, and for four rows through
:func:`~leaderboard.tracks.judge.metrics.meta_evaluation` on *invented* scores made to have the
printed ρ (the pooling and the ρ → p arithmetic, not a row reproduced from the paper's data,
which the project does not hold).
"""

from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats

from leaderboard.tracks.judge.metrics import Correlation, JudgedScore, meta_evaluation
from leaderboard.tracks.judge.rubric import CRITERIA

#: Table 1 as printed: judge, MAE, ρ, p-value (the paper's own spelling of the names).
TABLE_1: tuple[tuple[str, float, float, float], ...] = (
    ("deepseek 1.5B", 1.47, 0.008, 0.894),
    ("deepseek 7B", 1.71, 0.031, 0.627),
    ("deepseek 8B", 1.21, -0.018, 0.773),
    ("deepseek 14B", 1.05, 0.031, 0.628),
    ("Gemma 3 1B", 1.84, -0.078, 0.222),
    ("Gemma 3 4B", 1.38, -0.179, 0.005),
    ("Gemma 3 12B", 1.53, 0.010, 0.878),
    ("Llama 3 1B", 1.34, -0.005, 0.936),
    ("Llama 3 3B", 1.51, 0.027, 0.666),
    ("Llama 3 8B", 1.47, -0.039, 0.535),
    ("Phi 4 3.8B", 1.44, 0.219, 0.000),
    ("Phi 4 14B", 1.31, 0.010, 0.874),
    ("Qwen 3 0.6B", 1.36, 0.137, 0.031),
    ("Qwen 3 1.7B", 1.24, 0.040, 0.528),
    ("Qwen 3 4B", 1.54, 0.048, 0.453),
    ("Qwen 3 8B", 1.49, 0.065, 0.303),
    ("Qwen 3 14B", 1.46, 0.114, 0.072),
    ("GPT 4o", 1.41, 0.064, 0.314),
    ("GPT 40 mini", 1.15, -0.032, 0.611),
    ("GPT 4.1", 1.25, 0.095, 0.136),
    ("GPT 4.1 mini", 1.42, 0.173, 0.006),
    ("GPT 4.1 nano", 1.24, 0.034, 0.594),
    ("GPT o3 mini", 1.31, 0.238, 0.000),
    ("GPT o4 mini", 1.04, 0.277, 0.000),
)
#: The paper's 250 evaluations: 50 summaries, each scored on the five criteria (§3).
POOLED_N = 250
PER_CRITERION_N = POOLED_N // len(CRITERIA)


def spearman_p(rho: float, n: int) -> float:
    """The two-sided p-value of Spearman's ρ over n pairs, as scipy computes it (t with n − 2 df)."""
    t = rho * math.sqrt((n - 2) / (1 - rho * rho))
    return float(2 * scipy_stats.t.sf(abs(t), n - 2))


def p_range(rho: float, n: int) -> tuple[float, float]:
    """The p-values of every ρ that prints as ``rho`` (3 decimals), rounded as the paper prints p."""
    ends = [spearman_p(rho + d, n) for d in (-0.0005, 0.0005)]
    return round(min(ends), 3), round(max(ends), 3)


@pytest.mark.parametrize(("judge", "mae", "rho", "p"), TABLE_1, ids=[row[0] for row in TABLE_1])
def test_every_printed_rho_and_p_pair_is_spearmans_test_at_n_250(
    judge: str, mae: float, rho: float, p: float
) -> None:
    low, high = p_range(rho, POOLED_N)
    assert low <= p <= high, f"{judge}: p = {p} is not ρ = {rho} at n = {POOLED_N} ({low}–{high})"
    low_50, high_50 = p_range(rho, PER_CRITERION_N)
    assert not low_50 <= p <= high_50, f"{judge}: the pair also fits one criterion's {PER_CRITERION_N} items"


def _human() -> list[int]:
    """Invented human scores for 50 summaries × 5 criteria, every level used about equally."""
    return [1 + (i * 7 + i // 5) % 5 for i in range(POOLED_N)]


def _window(rho: float, p: float) -> tuple[float, float]:
    """The ρ values that print as Table 1's pair at n = 250: (centre, half-width)."""
    grid = [rho - 0.0005 + k * 0.000_001 for k in range(1001)]
    fits = [r for r in grid if round(r, 3) == rho and round(spearman_p(r, POOLED_N), 3) == p]
    return (min(fits) + max(fits)) / 2, (max(fits) - min(fits)) / 2


def _judge_with_rho(human: list[int], target: float, tolerance: float) -> list[int]:
    """Invented judge scores whose Spearman ρ with ``human`` is within ``tolerance`` of ``target``
    (greedy single steps of one score from a fixed start)."""
    judge = [1 + (i * 13 + 3) % 5 for i in range(len(human))]

    def rho(scores: list[int]) -> float:
        return float(scipy_stats.spearmanr(human, scores).statistic)

    current = rho(judge)
    for _ in range(20):  # passes over the items; each keeps a step that brings ρ closer
        for i in range(len(judge)):
            if abs(current - target) < tolerance:
                return judge
            for step in (1, -1):
                if not 1 <= judge[i] + step <= 5:
                    continue
                judge[i] += step
                moved = rho(judge)
                if abs(moved - target) < abs(current - target):
                    current = moved
                    break
                judge[i] -= step
    raise AssertionError(f"no invented judge with ρ = {target} ± {tolerance} found")


#: The rows checked through ``meta_evaluation`` on invented scores (their printed pair leaves
#: room enough for invented scores to hit it).
THROUGH_META_EVALUATION = ("deepseek 7B", "Gemma 3 4B", "Qwen 3 0.6B", "GPT 4.1 mini")


@pytest.mark.parametrize(
    ("judge", "rho", "p"),
    [(row[0], row[2], row[3]) for row in TABLE_1 if row[0] in THROUGH_META_EVALUATION],
)
def test_overall_pools_the_five_criteria_and_reproduces_the_printed_p(
    judge: str, rho: float, p: float
) -> None:
    human = _human()
    centre, half_width = _window(rho, p)
    scores = _judge_with_rho(human, centre, 0.8 * half_width)
    items = [
        JudgedScore(item=f"d{i // 5 // 5}/s{i // 5}", criterion=CRITERIA[i % 5], human=h, judge=j)
        for i, (h, j) in enumerate(zip(human, scores, strict=True))
    ]

    evaluation = meta_evaluation(items)

    overall = evaluation.overall.spearman
    assert isinstance(overall, Correlation) and overall.n == evaluation.overall.n_scored == POOLED_N
    assert round(overall.rho, 3) == rho
    assert round(overall.p, 3) == p, f"{judge}: overall p {overall.p:.4f}, Table 1 prints {p}"
    per_criterion = [evaluation.criteria[c].spearman for c in CRITERIA]
    assert all(isinstance(c, Correlation) and c.n == PER_CRITERION_N for c in per_criterion)
