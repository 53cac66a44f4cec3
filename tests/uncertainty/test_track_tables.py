"""The other tracks' tables with their intervals: long context's means, the judges' ρ and MAE."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from leaderboard.core.summary import UncertaintySummary
from leaderboard.core.uncertainty import DEFAULT_CONFIG, Interval
from leaderboard.export import ExportOptions
from leaderboard.tracks.judge.app.export import export_results
from leaderboard.tracks.judge.app.intervals import (
    FiguresCache,
    VsBest,
    interval_column,
    interval_table,
    vs_best_column,
)
from leaderboard.tracks.judge.app.tab import VS_BEST, display_table
from leaderboard.tracks.judge.app.tables import OVERALL, TableFigure, judges_table
from leaderboard.tracks.long_context.app.tables import export_table as lc_export_table
from leaderboard.tracks.long_context.app.tables import interval_columns
from leaderboard.tracks.long_context.app.views import table5_html
from leaderboard.tracks.long_context.contents import rows as lc_contents_rows
from leaderboard.tracks.long_context.definition import TABLE5_COLUMNS
from leaderboard.tracks.long_context.schema import LongContextResults
from leaderboard.tracks.long_context.uncertainty import metric_figure
from tests.judge.test_results_tables import _meta_file
from tests.long_context.test_schema_tables import PAPER_10K, _document


def _lc_run(model: str, with_intervals: bool) -> LongContextResults:
    run = LongContextResults.model_validate(_document(model, PAPER_10K[model]))
    if not with_intervals:
        return run
    intervals = {}
    for question_set, metric in TABLE5_COLUMNS:
        value = getattr(run.settings["10k"].sets[question_set], metric.value)
        intervals[metric_figure("10k", question_set.value, metric.value)] = Interval(
            value - 0.02, value + 0.03, 0.95
        )
    return run.model_copy(update={"uncertainty": UncertaintySummary.build(DEFAULT_CONFIG, intervals)})


def test_long_context_shows_each_mean_with_its_interval_and_a_dash_without_per_item_data():
    runs = {"a.json": _lc_run("ANITA-8B", True), "b.json": _lc_run("Llama3.1-8B", False)}
    html = table5_html(runs)
    cells = re.findall(r'<small class="ci">([^<]*)</small>', html)
    assert len(cells) == 2 * len(TABLE5_COLUMNS)
    with_data, without = cells[: len(TABLE5_COLUMNS)], cells[len(TABLE5_COLUMNS) :]
    assert all(re.fullmatch(r"\d+\.\d\d–\d+\.\d\d", c) for c in with_data) and set(without) == {"—"}
    # The summary METEOR of ANITA (23.12) with its interval 21.12–26.12 under it.
    assert '23.12<br><small class="ci">21.12–26.12</small>' in html


def test_long_context_export_carries_the_intervals():
    frame = lc_export_table([_lc_run("ANITA-8B", True), _lc_run("Llama3.1-8B", False)])
    low, high = interval_columns("summary_meteor")
    assert (frame.loc[0, low], frame.loc[0, high]) == (21.12, 26.12)
    assert frame.loc[0, interval_columns("local_acc")[0]] == pytest.approx(frame.loc[0, "local_acc"] - 2)
    assert pd.isna(frame.loc[1, low]) and pd.isna(frame.loc[1, high])  # no per-item data: no interval


def test_long_context_contents_rows_carry_the_intervals_or_nulls():
    model = next(iter(PAPER_10K))
    (with_row,) = lc_contents_rows(_lc_run(model, with_intervals=True))
    (without_row,) = lc_contents_rows(_lc_run(model, with_intervals=False))
    value = with_row["local_acc"]
    assert (with_row["local_acc_low"], with_row["local_acc_high"]) == pytest.approx(
        (value - 0.02, value + 0.03)
    )
    assert without_row["local_acc"] == value and without_row.get("local_acc_low") is None
    assert "entity_acc_low" not in with_row  # Entity has no multiple-choice items: no figure, no interval


def _judges():
    good = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
    return [
        _meta_file("org/good", good),
        _meta_file("org/close", {"a": 1, "b": 2, "c": 4, "d": 3, "e": 5}),
        _meta_file("org/poor", {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}),
    ]


def test_judges_get_rho_and_mae_intervals_and_the_best_and_its_ties_are_marked():
    runs = _judges()
    intervals = interval_table(runs).set_index("results_path")
    by_model = {run.results.model.id: intervals.loc[run.path] for run in runs}
    best, close, poor = by_model["org/good"], by_model["org/close"], by_model["org/poor"]
    assert best[vs_best_column(OVERALL)] == VsBest.BEST
    assert close[vs_best_column(OVERALL)] == VsBest.TIED  # ρ 0.9 on 25 items: not told apart from 1.0
    assert poor[vs_best_column(OVERALL)] == VsBest.BELOW  # ρ −1 is
    low, high = (close[interval_column(OVERALL, TableFigure.RHO, end)] for end in ("low", "high"))
    assert -1 <= low <= 0.9 <= high <= 1
    assert close[interval_column(OVERALL, TableFigure.MAE, "low")] >= 0


def test_the_judges_table_shows_the_intervals_and_vs_best_beside_the_figures():
    runs = _judges()
    shown = display_table(judges_table(runs), interval_table(runs, cache=FiguresCache()))
    columns = list(shown.columns)
    assert columns[4] == VS_BEST
    assert columns[columns.index("overall ρ") + 1] == "overall ρ 95% CI"
    assert columns[columns.index("overall MAE") + 1] == "overall MAE 95% CI"
    row = shown.set_index("judge").loc["org/close"]
    assert re.fullmatch(r"-?\d\.\d{3}–-?\d\.\d{3}", row["overall ρ 95% CI"])
    assert set(shown[VS_BEST]) == {"best", "not distinguishable", "below"}


def test_judge_figures_are_computed_once_per_file():
    runs, cache = _judges(), FiguresCache()
    interval_table(runs, cache=cache)
    first = {key: figures for key, (_, figures) in cache._entries.items()}
    interval_table(runs, cache=cache)
    assert all(cache._entries[key][1] is figures for key, figures in first.items())


def test_the_judges_export_carries_intervals_and_vs_best():
    table = export_results({run.path: run for run in _judges()}, ExportOptions()).table
    assert {vs_best_column(OVERALL), interval_column(OVERALL, TableFigure.RHO, "low")} <= set(table.columns)
    assert set(table[vs_best_column(OVERALL)]) == {"best", "not distinguishable", "below"}
