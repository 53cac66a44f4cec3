"""The ranking marker hook: the contamination track marks a (model, revision, task) only when the order
test of the model's latest run rejects at the family-wise 1 % level, and the ranking draws it escaped.
"""

from __future__ import annotations

from types import MappingProxyType

import pandas as pd

from eval_queue.tracks import track_registry
from eval_queue.vocabulary import RunRef
from leaderboard.store import StoreResults
from leaderboard.tracks.contamination.app.markers import SYMBOL, ranking_markers
from leaderboard.tracks.contamination.definition import EVIDENCE, TRACK
from leaderboard.tracks.evalita.app.views.marked import mark_task_cells
from leaderboard.ui.markers import RankingMarker, collect_markers
from leaderboard.views.common import KEY_COLUMN
from tests.contamination.records import results, set_result

REVISION = "a" * 40


def _store(**records: object) -> StoreResults:
    return StoreResults(
        records=MappingProxyType({TRACK: MappingProxyType(dict(records))}),
        track_problems=MappingProxyType({}),
        envelope_problems=(),
        unsupported=MappingProxyType({}),
    )


def _flagged_store() -> StoreResults:
    return _store(
        **{
            "a.json": results(
                "org/flagged",
                {
                    "te": set_result(0.3, p=0.0004, p_holm=0.0008),
                    "wic": set_result(0.3, p=0.004, p_holm=0.02),  # raw p < 1 %, Holm not: no mark
                    "ner-adg": set_result(0.3, p=0.001, p_holm=0.003),
                },
            ),
            "b.json": results("org/clean", {"te": set_result(0.3, p=0.6)}),
        }
    )


def test_only_sets_rejected_at_the_family_wise_level_mark_their_task() -> None:
    markers = ranking_markers(_flagged_store())
    assert set(markers) == {("org/flagged", REVISION, "te"), ("org/flagged", REVISION, "ner")}
    te = markers[("org/flagged", REVISION, "te")]
    assert te.symbol == SYMBOL and te.page == "model"
    assert EVIDENCE in te.text and "not an accusation" in te.text and "0.0008" in te.text
    assert "NER (adg)" in markers[("org/flagged", REVISION, "ner")].text


def test_the_latest_run_of_a_model_and_revision_decides() -> None:
    def run(p: float, day: int) -> object:
        return results("org/m", {"te": set_result(0.3, p=p)}, finished_at=f"2026-11-{day:02d}T00:00:00Z")

    assert ranking_markers(_store(**{"x.json": run(0.0001, 1), "y.json": run(0.5, 20)})) == {}
    assert set(ranking_markers(_store(**{"x.json": run(0.5, 1), "y.json": run(0.0001, 20)}))) == {
        ("org/m", REVISION, "te")
    }


def test_the_registry_collects_the_tracks_markers_without_the_ranking_naming_them() -> None:
    collected = collect_markers(track_registry().specs(), _flagged_store())
    assert set(collected) == {("org/flagged", REVISION, "te"), ("org/flagged", REVISION, "ner")}
    assert all(len(found) == 1 for found in collected.values())


def _rows(*refs: RunRef) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Model": [r.model for r in refs],
            "TE CPS": [61.234, 40.0][: len(refs)],
            "WIC CPS": [50.0, None][: len(refs)],
            KEY_COLUMN: [r.key for r in refs],
        }
    )


def test_the_ranking_marks_the_flagged_cell_only_and_escapes_what_it_says() -> None:
    flagged, clean = RunRef("org/flagged", REVISION, "bfloat16"), RunRef("org/clean", REVISION, "bfloat16")
    hostile = RankingMarker('<b>"x"</b>', 'say <script>alert(1)</script> & "quote"')
    markers = {("org/flagged", REVISION, "te"): (hostile,)}
    rows = _rows(flagged, clean)
    marked, html_columns = mark_task_cells(rows, markers)
    assert html_columns == ("TE CPS",)
    cell = marked.loc[0, "TE CPS"]
    assert cell.startswith('61.23 <a class="ranking-marker"')
    assert "<script>" not in cell and "&lt;script&gt;" in cell and "&lt;b&gt;" in cell
    assert 'href="?tab=model&amp;model=' in cell
    assert marked.loc[1, "TE CPS"] == "40.00"  # same column, no marker: the value as text
    assert marked["WIC CPS"].tolist()[:1] == [50.0]  # other columns untouched
    assert rows.loc[0, "TE CPS"] == 61.234  # the view's table (and its CSV) keep the number


def test_a_table_without_markers_comes_back_unchanged() -> None:
    rows = _rows(RunRef("org/clean", REVISION, "bfloat16"))
    marked, html_columns = mark_task_cells(rows, {})
    assert marked is rows and html_columns == ()
