"""The page steps' computations made cheaper at 10,000 runs give what the plain ones gave: the
prompt-sensitivity frame built from one matrix equals the row-by-row reference."""

from __future__ import annotations

import pandas as pd
import pytest

from eval_queue.storage import LocalStorage
from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.evalita.app.records import load_results
from leaderboard.tracks.evalita.app.views.labels import _spread
from leaderboard.tracks.evalita.app.views.ranking import _select_rows
from leaderboard.tracks.evalita.definition import SUITE
from tests.ui.store import write_results


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> views.Board:
    root = tmp_path_factory.mktemp("compute")
    write_results(root / "results", root / "details")
    return views.Board(load_results(LocalStorage(root / "results")))


def _sensitivity_reference(board: views.Board, num_fewshot: int, show_all: bool) -> pd.DataFrame:
    """What the sensitivity frame was: a record per shown run and task with a spread, run by run."""
    rows, _, _, _ = _select_rows(board, num_fewshot, views.RankingFilters(show_noncomparable=show_all))
    records = [
        {"Task": task.abbrev, "Model": row["model"], "Spread": spread}
        for _, row in rows.iterrows()
        for task in SUITE
        if (spread := _spread(row, task.id)) is not None
    ]
    return pd.DataFrame.from_records(records, columns=["Task", "Model", "Spread"])


@pytest.mark.parametrize(("num_fewshot", "show_all"), [(0, False), (0, True), (5, False), (5, True)])
def test_the_sensitivity_frame_equals_the_row_by_row_reference(
    board: views.Board, num_fewshot: int, show_all: bool
) -> None:
    got = views.sensitivity_data(board, num_fewshot, show_all)
    expected = _sensitivity_reference(board, num_fewshot, show_all)
    assert len(expected) > 20 and expected["Spread"].isna().sum() == 0
    pd.testing.assert_frame_equal(got, expected)
