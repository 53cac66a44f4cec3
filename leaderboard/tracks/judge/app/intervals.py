"""The judges' figures with their uncertainty: the 95 % intervals of ρ and MAE (a bootstrap over the
annotated items) and whether each judge's ρ is distinguishable from the best judge's on the same
set (:mod:`leaderboard.tracks.judge.uncertainty`).  No gradio: the tab and the export show them.

A judge's results file carries its per-item scores, so these are computed in the app, once per
parsed file (:class:`FiguresCache`, held by the Judges tab: a refresh parses only changed files,
so an unchanged judge keeps its figures); the comparison with the best is recomputed per render
(a Holm correction over a few judges).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import pandas as pd

from leaderboard.tracks.judge.app.records import JudgeRun
from leaderboard.tracks.judge.app.tables import (
    SCOPES,
    TableFigure,
    _rounded,
    _select,
    _typed,
    stat_column,
)
from leaderboard.tracks.judge.definition import Criterion, JudgeMode
from leaderboard.tracks.judge.schema import MetaBody
from leaderboard.tracks.judge.uncertainty import JudgeFigures, JudgeVsBest, judge_figures, standings_of


class VsBest(StrEnum):
    """A judge's ρ against the best judge's on the same annotated set and scope."""

    BEST = "best"
    TIED = "not distinguishable"  # Holm-adjusted paired test: p > 0.05
    BELOW = "below"


def interval_column(scope: Criterion | str, figure: TableFigure, end: str) -> str:
    """``overall_rho_low``, ``coherence_mae_high``: one end of a figure's 95 % interval."""
    return f"{stat_column(scope, figure)}_{end}"


def vs_best_column(scope: Criterion | str) -> str:
    """``overall_vs_best``: :class:`VsBest` of a judge's ρ on ``scope``."""
    return f"{scope}_vs_best"


INTERVAL_FIGURES = (TableFigure.RHO, TableFigure.MAE)
INTERVAL_COLUMNS: tuple[str, ...] = tuple(
    column
    for scope in SCOPES
    for column in (
        *(interval_column(scope, f, end) for f in INTERVAL_FIGURES for end in ("low", "high")),
        vs_best_column(scope),
    )
)


@dataclass
class FiguresCache:
    """Each judge run's :class:`JudgeFigures` per scope, computed once per parsed file (a refresh
    parses only changed files, so an unchanged run keeps its figures).  Passed in by the caller."""

    _entries: dict[tuple[str, str], tuple[JudgeRun, JudgeFigures]] = field(default_factory=dict)

    def figures(self, run: JudgeRun, scope: str) -> JudgeFigures:
        held = self._entries.get((run.path, scope))
        if held is not None and held[0] is run:
            return held[1]
        body = run.results.judge
        assert isinstance(body, MetaBody)
        computed = judge_figures(run.path, body.judged_scores(), scope)
        self._entries[(run.path, scope)] = (run, computed)
        return computed


def _vs_best(standing: JudgeVsBest) -> str | Any:
    if standing.figures.rho is None:
        return pd.NA  # no ρ: nothing to compare
    if standing.best:
        return VsBest.BEST.value
    return VsBest.TIED.value if standing.indistinguishable else VsBest.BELOW.value


def interval_table(
    runs: Iterable[JudgeRun], *, include_noncomparable: bool = False, cache: FiguresCache | None = None
) -> pd.DataFrame:
    """Per judge run on an annotated set (``results_path``): per scope, ρ and MAE with their 95 %
    intervals' ends (``pd.NA``: not enough data) and :class:`VsBest` — compared with the best ρ
    among the judges of the same annotated set (the same items, so the resamples are paired)."""
    cache = cache or FiguresCache()
    chosen = _select(runs, JudgeMode.META, include_noncomparable)
    rows: dict[str, dict[str, Any]] = {run.path: {"results_path": run.path} for run in chosen}
    by_set: dict[str, list[JudgeRun]] = {}
    for run in chosen:
        by_set.setdefault(run.annotated_set, []).append(run)  # the key the table groups by
    for scope in SCOPES:
        for same_set in by_set.values():
            for standing in standings_of([cache.figures(run, str(scope)) for run in same_set]):
                f, row = standing.figures, rows[standing.figures.judge]
                for figure, interval in (
                    (TableFigure.RHO, f.rho_interval),
                    (TableFigure.MAE, f.mae_interval),
                ):
                    row[interval_column(scope, figure, "low")] = _rounded(
                        interval and interval.low, figure.decimals
                    )
                    row[interval_column(scope, figure, "high")] = _rounded(
                        interval and interval.high, figure.decimals
                    )
                row[vs_best_column(scope)] = _vs_best(standing)
    frame = pd.DataFrame(list(rows.values()), columns=["results_path", *INTERVAL_COLUMNS])
    numeric = [c for c in INTERVAL_COLUMNS if not c.endswith("_vs_best")]
    return _typed(frame, numeric)
