"""Judges: bootstrap intervals of Spearman ρ and MAE against people, and the judges that are not
distinguishable from the best one.

The judge track's half of the uncertainty engine: it uses the generic draws of
``leaderboard.core.uncertainty`` and the paired test and Holm correction of
``leaderboard.core.tiers``.  A judge's results file carries its per-item scores, so the app
computes these from it (once per file, :func:`judge_figures`).  Pure.

* **Units**: the annotated items of one criterion (``JudgedScore.item``, a summary
  ``<doc_id>/<summary_id>``); "overall" (all criteria pooled, as Table 1) pools (item,
  criterion) pairs.  **Documents are the clusters**: the summaries of one document share its
  text, and each summary appears under all five criteria, so a resample draws documents with
  replacement and keeps every (summary, criterion) of each (the one-stage cluster bootstrap).
  Draws are fixed by (seed, criterion, item ids), so every judge of the same annotated set
  gets the same resamples and comparisons between judges are paired.
* **Per resample**, as the published figures: over the resampled items the judge *scored*
  (an unparsed answer never becomes a score), ρ = Pearson correlation of the average ranks
  (``scipy.stats.rankdata(axis=1, nan_policy="omit")``: what ``spearmanr`` computes, ties and
  repeated draws included) and MAE = mean |judge − human|.
* **Points** are the published figures (``leaderboard.tracks.judge.metrics.agreement``).
* **Not distinguishable from the best**: the judge with the highest ρ is the best; each other
  judge's paired difference ρ_best − ρ_judge is tested (bootstrap standard error, as tiers)
  and the p-values Holm-adjusted over the judges compared.
* A resample where ρ is undefined (constant scores) has no value; with more than 1 % of
  resamples undefined the interval is ``None`` rather than one from the others.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from leaderboard.core.tiers import DEFAULT_ALPHA, holm, paired_p_value
from leaderboard.core.uncertainty import (
    DEFAULT_CONFIG,
    BootstrapConfig,
    Interval,
    make_draws,
    percentile_interval,
)
from leaderboard.tracks.judge.metrics import Correlation, JudgedScore, agreement

Array = NDArray[np.float64]
OVERALL = "overall"
#: The largest share of resamples with an undefined ρ that still gives an interval.
MAX_UNDEFINED = 0.01


@dataclass(frozen=True)
class JudgeFigures:
    """One judge on one criterion (or ``"overall"``): ρ and MAE with their intervals.

    ``rho``/``mae`` are the published points (``None``: not enough data); the intervals are
    ``None`` when the figure is or too many resamples leave it undefined.  ``rho_draws``
    ``(B,)`` (NaN where undefined) and ``draws_key`` serve paired comparisons.
    """

    judge: str
    criterion: str
    n_items: int
    n_scored: int
    rho: float | None
    rho_interval: Interval | None
    mae: float | None
    mae_interval: Interval | None
    rho_draws: Array
    draws_key: str


def _unit(score: JudgedScore, criterion: str) -> str:
    return score.item if criterion != OVERALL else f"{score.item}|{score.criterion.value}"


def _interval(draws: Array, level: float) -> Interval | None:
    finite = np.isfinite(draws)
    if finite.mean() < 1.0 - MAX_UNDEFINED:
        return None
    return percentile_interval(draws[finite], level)


def resampled_spearman(human: Array, judge: Array) -> Array:
    """Spearman ρ per row of ``(B, n)`` paired scores; NaN judge scores (unparsed) left out."""
    from scipy.stats import rankdata  # imported here: see uncertainty.percentile_intervals

    human = np.where(np.isnan(judge), np.nan, human)
    rank_h = rankdata(human, axis=1, nan_policy="omit")
    rank_j = rankdata(judge, axis=1, nan_policy="omit")
    with warnings.catch_warnings():  # a resample with no scored item: its ρ is NaN (undefined)
        warnings.simplefilter("ignore", RuntimeWarning)
        dh = rank_h - np.nanmean(rank_h, axis=1, keepdims=True)
        dj = rank_j - np.nanmean(rank_j, axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nansum(dh * dj, axis=1) / np.sqrt(np.nansum(dh * dh, axis=1) * np.nansum(dj * dj, axis=1))


def judge_figures(
    judge: str,
    scores: Sequence[JudgedScore],
    criterion: str = OVERALL,
    config: BootstrapConfig = DEFAULT_CONFIG,
) -> JudgeFigures:
    """ρ and MAE of ``judge`` on ``criterion`` (a ``Criterion`` value, or ``"overall"``)."""
    chosen = sorted(
        (s for s in scores if criterion == OVERALL or s.criterion.value == criterion),
        key=lambda s: _unit(s, criterion),
    )
    units = [_unit(s, criterion) for s in chosen]
    if len(set(units)) != len(units):
        raise ValueError(f"{judge}: an item appears twice for {criterion}")
    published = agreement((s.human, s.judge) for s in chosen)
    fingerprint = hashlib.blake2b(
        json.dumps(["judge", "documents", criterion, units]).encode(), digest_size=16
    ).hexdigest()
    documents = np.array([s.item.split("/", 1)[0] for s in chosen])
    draws = make_draws(config, fingerprint, [len(units)] if units else [], [documents] if units else None)
    # One missing unit at position n: where a cluster resample is padded (Draws.indices).
    human = np.array([*(float(s.human) for s in chosen), np.nan])
    given = np.array([*(np.nan if s.judge is None else float(s.judge) for s in chosen), np.nan])
    if units:
        h, j = human[draws.indices], given[draws.indices]
        rho_draws = resampled_spearman(h, j)
        scored = ~np.isnan(j)
        with np.errstate(divide="ignore", invalid="ignore"):
            mae_draws = np.nansum(np.abs(j - h), axis=1) / scored.sum(axis=1)
    else:
        rho_draws = mae_draws = np.full(config.n_resamples, np.nan)
    rho = published.spearman.rho if isinstance(published.spearman, Correlation) else None
    mae = published.mae if isinstance(published.mae, float) else None
    return JudgeFigures(
        judge=judge,
        criterion=criterion,
        n_items=published.n_items,
        n_scored=published.n_scored,
        rho=rho,
        rho_interval=None if rho is None else _interval(rho_draws, config.level),
        mae=mae,
        mae_interval=None if mae is None else _interval(mae_draws, config.level),
        rho_draws=rho_draws,
        draws_key=draws.key,
    )


@dataclass(frozen=True)
class JudgeVsBest:
    """A judge against the best judge on one criterion: ``p_vs_best`` Holm-adjusted (``None``
    for the best itself or a judge without ρ); ``indistinguishable`` when it is above ``alpha``."""

    figures: JudgeFigures
    best: bool
    indistinguishable: bool
    p_vs_best: float | None


def standings(
    judges: Mapping[str, Sequence[JudgedScore]],
    criterion: str = OVERALL,
    config: BootstrapConfig = DEFAULT_CONFIG,
    alpha: float = DEFAULT_ALPHA,
) -> tuple[JudgeVsBest, ...]:
    """Every judge's figures and whether its ρ is distinguishable from the best judge's.

    Judges compared with the best must have judged the same items (same draws); one that did
    not is never called indistinguishable (``p_vs_best`` ``None``).
    """
    figures = [judge_figures(name, scores, criterion, config) for name, scores in judges.items()]
    return standings_of(figures, alpha)


def standings_of(figures: Sequence[JudgeFigures], alpha: float = DEFAULT_ALPHA) -> tuple[JudgeVsBest, ...]:
    """:func:`standings` from figures already computed (the app keeps each judge's per file)."""
    rated = [f for f in figures if f.rho is not None]
    if not rated:
        return tuple(JudgeVsBest(f, False, False, None) for f in figures)
    best = max(rated, key=lambda f: f.rho)  # type: ignore[arg-type, return-value]
    others = [f for f in rated if f is not best and f.draws_key == best.draws_key]
    p = []
    for f in others:
        finite = np.isfinite(best.rho_draws) & np.isfinite(f.rho_draws)
        # Reflected draws (2ρ̂ − ρ*): their mean is the bias-corrected ρ the test centres on.
        a = 2.0 * best.rho - best.rho_draws[finite]  # type: ignore[operator]
        b = 2.0 * f.rho - f.rho_draws[finite]  # type: ignore[operator]
        p.append(paired_p_value(a, b) if finite.sum() > 1 else 0.0)
    adjusted = dict(zip((f.judge for f in others), holm(np.array(p)), strict=True))
    out = []
    for f in figures:
        if f is best:
            out.append(JudgeVsBest(f, True, True, None))
        elif f.judge in adjusted:
            out.append(JudgeVsBest(f, False, bool(adjusted[f.judge] > alpha), float(adjusted[f.judge])))
        else:
            out.append(JudgeVsBest(f, False, False, None))
    return tuple(out)
