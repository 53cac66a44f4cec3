"""Meta-evaluation statistics of judges (paper §4 "Meta-Evaluation Metrics", §5).  Pure.

* **Spearman's ρ** and its two-sided p-value between judge and human scores, from
  :func:`scipy.stats.spearmanr` (ties get average ranks, as scipy does);
* **MAE**, the mean absolute difference judge − human;
* **positive bias**, mean judge score − mean human score over the same items (> 0: the
  judge is more generous than people, as the paper found for most models);
* the **agreement matrix**: Spearman's ρ between every pair of judges on the items both
  scored (symmetric; 1 on the diagonal);
* **score distributions**, human vs judge, per criterion (the paper's Figures 4–6).

A figure is computed over *scored* items only: an unparsed answer has no score and is
never turned into one; the unparsed rate is reported beside every figure.  Table 1's p-values
are Spearman's test at n = 250, every answer of a judge, so ρ is also given with every answer
counted (:attr:`Agreement.spearman_all`): an unparsed answer as the score farthest from the
human's (:func:`farthest_score`), the worst it could have been — a lower bound at Table 1's n.  With fewer
than :data:`MIN_ITEMS` scored items a figure is :class:`NotEnoughData`, and so is ρ when
either column is constant (ρ is undefined there: scipy would return NaN).  NaN never
leaves this module.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from types import MappingProxyType

from leaderboard.tracks.judge.definition import SCORES, Criterion
from leaderboard.tracks.judge.rubric import CRITERIA

#: The fewest scored items any figure is computed from.
MIN_ITEMS = 3


@dataclass(frozen=True)
class NotEnoughData:
    """A figure that cannot be computed, and why ("2 scored items", "constant judge scores")."""

    reason: str

    def __str__(self) -> str:
        return f"not enough data ({self.reason})"


@dataclass(frozen=True)
class Correlation:
    """Spearman's ρ over ``n`` paired scores, with its two-sided p-value."""

    rho: float
    p: float
    n: int


Figure = float | NotEnoughData


def _too_few(n: int) -> NotEnoughData | None:
    if n < MIN_ITEMS:
        return NotEnoughData(f"{n} scored item{'s' if n != 1 else ''}, at least {MIN_ITEMS} needed")
    return None


def spearman(
    x: Sequence[float], y: Sequence[float], *, names: tuple[str, str] = ("x", "y")
) -> Correlation | NotEnoughData:
    """Spearman's ρ of two paired sequences (``names`` label them in a *constant* reason)."""
    if len(x) != len(y):
        raise ValueError(f"paired sequences differ in length: {len(x)} and {len(y)}")
    too_few = _too_few(len(x))
    if too_few:
        return too_few
    for name, column in zip(names, (x, y), strict=True):
        if len(set(column)) == 1:
            return NotEnoughData(f"constant {name} scores")
    # Imported here: scipy.stats takes a second to import, and the UI builds the judge tab
    # (which imports this module) at start-up; only a render with judge results needs it.
    from scipy import stats as scipy_stats

    result = scipy_stats.spearmanr(x, y)
    rho, p = float(result.statistic), float(result.pvalue)
    if not (math.isfinite(rho) and math.isfinite(p)):  # defensive: scipy's NaN never escapes
        return NotEnoughData("ρ undefined")
    return Correlation(rho=rho, p=p, n=len(x))


def mae(human: Sequence[float], judge: Sequence[float]) -> Figure:
    """Mean absolute error of the judge against the human scores."""
    return _too_few(len(human)) or fmean(abs(j - h) for h, j in zip(human, judge, strict=True))


def bias(human: Sequence[float], judge: Sequence[float]) -> Figure:
    """Mean judge score − mean human score (positive: the judge is more generous)."""
    if len(human) != len(judge):
        raise ValueError(f"paired sequences differ in length: {len(human)} and {len(judge)}")
    return _too_few(len(human)) or fmean(judge) - fmean(human)


@dataclass(frozen=True)
class Agreement:
    """How one judge's scores agree with the human ones on a set of items.

    ``n_items`` answers asked for, ``n_scored`` of them parsed; figures over the scored ones.
    """

    n_items: int
    n_scored: int
    spearman: Correlation | NotEnoughData
    mae: Figure
    bias: Figure
    mean_human: Figure
    mean_judge: Figure
    #: ρ over every answer, an unparsed one counted as :func:`farthest_score` (Table 1's n).
    spearman_all: Correlation | NotEnoughData = NotEnoughData("not computed")

    @property
    def unparsed_rate(self) -> Figure:
        if self.n_items == 0:
            return NotEnoughData("no items")
        return (self.n_items - self.n_scored) / self.n_items


def farthest_score(human: int) -> int:
    """The score on the 1–5 scale farthest from ``human`` (1 for a 3: both ends are 2 away, and
    the paper found judges generous, so the low end is the less flattering guess)."""
    return SCORES[-1] if human - SCORES[0] < SCORES[-1] - human else SCORES[0]


def agreement(pairs: Iterable[tuple[int, int | None]]) -> Agreement:
    """``(human, judge or None when unparsed)`` pairs → :class:`Agreement`."""
    pairs = list(pairs)
    scored = [(h, j) for h, j in pairs if j is not None]
    human = [float(h) for h, _ in scored]
    judge = [float(j) for _, j in scored]
    too_few = _too_few(len(scored))
    every = [(float(h), float(farthest_score(h) if j is None else j)) for h, j in pairs]
    return Agreement(
        spearman_all=spearman(
            [h for h, _ in every], [j for _, j in every], names=("human", "judge (unparsed counted)")
        ),
        n_items=len(pairs),
        n_scored=len(scored),
        spearman=spearman(human, judge, names=("human", "judge")),
        mae=mae(human, judge),
        bias=bias(human, judge),
        mean_human=too_few or fmean(human),
        mean_judge=too_few or fmean(judge),
    )


@dataclass(frozen=True)
class JudgedScore:
    """One (item, criterion) of the annotated set: the human score and the judge's (None: unparsed)."""

    item: str
    criterion: Criterion
    human: int
    judge: int | None


@dataclass(frozen=True)
class MetaEvaluation:
    """Per criterion (those present, in rubric order) and overall (all criteria pooled, as Table 1)."""

    criteria: Mapping[Criterion, Agreement]
    overall: Agreement


def meta_evaluation(scores: Iterable[JudgedScore]) -> MetaEvaluation:
    """Agreement with the human scores per criterion and over all (item, criterion) pairs."""
    scores = list(scores)
    by_criterion = {
        criterion: agreement((s.human, s.judge) for s in scores if s.criterion is criterion)
        for criterion in CRITERIA
        if any(s.criterion is criterion for s in scores)
    }
    return MetaEvaluation(
        criteria=MappingProxyType(by_criterion), overall=agreement((s.human, s.judge) for s in scores)
    )


# --------------------------------------------------------------------------- judges vs judges


@dataclass(frozen=True)
class AgreementMatrix:
    """Spearman's ρ between every pair of judges on the items both scored.

    ``cells[i][j]`` is the agreement of ``judges[i]`` and ``judges[j]``: symmetric, and
    ρ = 1 on the diagonal for a judge with enough (and varying) scores.
    """

    judges: tuple[str, ...]
    cells: tuple[tuple[Correlation | NotEnoughData, ...], ...]

    def cell(self, a: str, b: str) -> Correlation | NotEnoughData:
        return self.cells[self.judges.index(a)][self.judges.index(b)]


def agreement_matrix(judges: Mapping[str, Mapping[Hashable, int | None]]) -> AgreementMatrix:
    """``{judge: {item key: score or None}}`` → the matrix (keys shared by both judges, scored by both)."""
    names = tuple(judges)
    pairs: dict[tuple[int, int], Correlation | NotEnoughData] = {}
    for i, a in enumerate(names):
        for j in range(i, len(names)):
            b = names[j]
            common = [(x, judges[b].get(k)) for k, x in judges[a].items()]
            both = [(float(x), float(y)) for x, y in common if x is not None and y is not None]
            value = spearman([x for x, _ in both], [y for _, y in both], names=(a, b))
            if i == j and isinstance(value, Correlation):
                value = Correlation(rho=1.0, p=0.0, n=value.n)  # exact, not 0.9999999999999998
            pairs[i, j] = pairs[j, i] = value
    cells = tuple(tuple(pairs[i, j] for j in range(len(names))) for i in range(len(names)))
    return AgreementMatrix(judges=names, cells=cells)


# --------------------------------------------------------------------------- distributions


@dataclass(frozen=True)
class Distribution:
    """How many times each score 1–5 was given, and how many answers were unparsed."""

    counts: Mapping[int, int]
    unparsed: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values()) + self.unparsed


def distribution(scores: Iterable[int | None]) -> Distribution:
    """Counts of each score on the scale (every level present, zeros included); None → unparsed."""
    scores = list(scores)
    counted = Counter(s for s in scores if s is not None)
    outside = set(counted) - set(SCORES)
    if outside:
        raise ValueError(f"scores outside the scale: {sorted(outside)}")
    return Distribution(
        counts=MappingProxyType({score: counted.get(score, 0) for score in SCORES}),
        unparsed=sum(1 for s in scores if s is None),
    )


@dataclass(frozen=True)
class CriterionDistributions:
    """Human and judge score distributions for one criterion (a bar pair of Figures 4–6)."""

    criterion: Criterion
    human: Distribution
    judge: Distribution


def distributions(scores: Iterable[JudgedScore]) -> tuple[CriterionDistributions, ...]:
    """Per criterion present, in rubric order: human vs judge counts over the same items."""
    scores = list(scores)
    return tuple(
        CriterionDistributions(
            criterion=criterion,
            human=distribution(s.human for s in scores if s.criterion is criterion),
            judge=distribution(s.judge for s in scores if s.criterion is criterion),
        )
        for criterion in CRITERIA
        if any(s.criterion is criterion for s in scores)
    )
