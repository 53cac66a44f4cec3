"""The calibration grid, small: intervals cover the truth and paired tests hold their rate.

Every cell of {distinct, near-tie, tied prompts} × {no, moderate, strong cluster effect} ×
{accuracy, F1-macro, NER F1, ROUGE-like} is simulated with a known truth and fed through the
project's own functions (``tests/support/synthetic/calibration.py``).  Each cell is small here
(its Monte Carlo error is a few points), so the nominal rates are checked on the grid's pooled
figures, whose Monte Carlo error is a few tenths of a point, and every cell is checked for a
gross failure; ``bench/bench_calibration.py`` runs the full grid, cell by cell.
"""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.core.uncertainty import BootstrapConfig
from tests.support.synthetic.calibration import CellResult, simulate_grid

REPLICATES, TASKS = 40, 3


@pytest.fixture(scope="module")
def grid() -> list[CellResult]:
    return simulate_grid(
        replicates=REPLICATES, n_items=300, n_tasks=TASKS, config=BootstrapConfig(n_resamples=400), seed=11
    )


def pooled(cells: list[CellResult], figure: str) -> tuple[float, float]:
    """The grid's mean rate of ``figure`` and its Monte Carlo standard error."""
    rate = float(np.mean([getattr(c, figure) for c in cells]))
    trials = len(cells) * REPLICATES * (1 if figure.endswith("mean") or figure == "mean_cps" else TASKS)
    return rate, CellResult.mc_error(rate, trials)


@pytest.mark.parametrize("figure", ["prompt", "task_cps", "mean_cps"])
def test_95_percent_intervals_cover_the_truth_95_percent_of_the_time_over_the_grid(grid, figure):
    rate, error = pooled(grid, figure)
    assert 0.93 - 2 * error <= rate <= 0.97 + 2 * error, f"{figure}: {rate:.3f} ± {error:.3f}"


@pytest.mark.parametrize("figure", ["type1_task", "type1_mean"])
def test_paired_tests_reject_equal_runs_at_most_at_the_nominal_rate(grid, figure):
    rate, error = pooled(grid, figure)
    assert rate <= 0.06 + 2 * error, f"{figure}: {rate:.3f} ± {error:.3f}"


def test_no_cell_fails_grossly(grid):
    # A cell of 40 replicates has a Monte Carlo error of about 3.5 points (2 on the task
    # figures): an interval method that ignored ties or clusters fails here by 15 to 60 points.
    for cell in grid:
        assert min(cell.prompt, cell.task_cps) >= 0.85, cell
        assert cell.mean_cps >= 0.75, cell
        assert max(cell.type1_task, cell.type1_mean) <= 0.2, cell
