"""The results file round-trips; the tables place each model against the others' band; export and tab agree."""

from __future__ import annotations

import json

import pytest

from eval_queue.errors import MalformedFileError
from leaderboard.export import ExportOptions
from leaderboard.tracks.contamination.app.export import export_results
from leaderboard.tracks.contamination.app.results import parse_results_file
from leaderboard.tracks.contamination.app.tables import model_evidence, p_text, set_table, task_evidence
from leaderboard.tracks.contamination.definition import EVIDENCE, NO_EVIDENCE
from leaderboard.tracks.contamination.schema import ContaminationResults
from leaderboard.tracks.contamination.suite import suite_sets
from tests.contamination.records import results, set_result

ALL_REQUIRED = [s.id for s in suite_sets() if not s.optional]


def test_a_results_file_round_trips_through_the_parser() -> None:
    original = results("org/a", {"te": set_result(0.3, p=0.002, p_holm=0.004), "wic": set_result(0.5)})
    parsed = parse_results_file(original.to_json(), "org/a/results_x.json")
    assert parsed == original
    assert parsed.sets["te"].order is not None and parsed.sets["te"].order.flagged
    assert parsed.sets["te"].tokens == 7000


def test_a_malformed_results_file_is_refused_with_its_path() -> None:
    raw = json.loads(results("org/a", {"te": set_result(0.3)}).to_json())
    raw["sets"]["te"]["order"]["p_value"] = 1.5
    with pytest.raises(MalformedFileError, match=r"results_bad\.json"):
        parse_results_file(json.dumps(raw).encode(), "org/a/results_bad.json")
    raw = json.loads(results("org/a", {"te": set_result(0.3)}).to_json())
    raw["track"] = "judge"
    with pytest.raises(MalformedFileError, match="not a 'contamination' one"):
        ContaminationResults.from_json(json.dumps(raw).encode(), "x.json")


def test_only_a_full_run_of_every_required_set_on_the_official_data_is_comparable() -> None:
    full = {s: set_result(0.3) for s in ALL_REQUIRED}
    assert results("org/a", full).comparable
    assert not results("org/a", full, data="sample").comparable
    assert not results("org/a", {"te": set_result(0.3)}).comparable


def test_the_band_is_drawn_from_the_other_models_never_the_model_itself() -> None:
    records = {
        f"m{k}.json": results(f"org/m{k}", {"te": set_result(score)})
        for k, score in enumerate([0.20, 0.22, 0.24, 0.26, 0.80])
    }
    frame = set_table(records).set_index("model")
    assert frame.loc["org/m4", "band_position"] == "above the board's band"
    assert frame.loc["org/m4", "band_high"] == pytest.approx(26.0, abs=0.5)  # the four others
    assert frame.loc["org/m0", "band_high"] > 50  # the outlier is in the others' band of m0
    assert frame.loc["org/m1", "band_models"] == 4


def test_a_set_is_flagged_only_below_one_percent_after_holm_and_worded_as_evidence() -> None:
    records = {
        "a.json": results(
            "org/a",
            {"te": set_result(0.3, p=0.001, p_holm=0.002), "wic": set_result(0.3, p=0.004, p_holm=0.012)},
        )
    }
    frame = set_table(records).set_index("set")
    assert frame.loc["TE", "evidence"] == EVIDENCE
    assert frame.loc["WIC", "evidence"] == NO_EVIDENCE
    assert frame.loc["TE", "order_p"] == "0.001"
    assert p_text(1e-9) == "< 1e-6" and p_text(None) == "—"


def test_export_hides_noncomparable_runs_unless_asked_and_the_panel_shows_the_models_latest_run() -> None:
    records = {
        "old.json": results(
            "org/a", {"te": set_result(0.3)}, data="sample", finished_at="2026-11-26T10:00:00Z"
        ),
        "new.json": results("org/a", {"te": set_result(0.4), "wic": set_result(0.2)}, data="sample"),
    }
    hidden = export_results(records, ExportOptions())
    assert hidden.table.empty and "left out" in hidden.notes[0]
    shown = export_results(records, ExportOptions(include_noncomparable=True))
    assert len(shown.table) == 3 and "codec" in shown.percent_columns
    panel = model_evidence(records, "org/a", "a" * 40)
    assert list(panel["set"]) == ["WIC", "TE"]  # the newer run only, sets in the suite's order
    assert list(panel["CoDeC %"]) == pytest.approx([20.0, 40.0])
    assert model_evidence(records, "org/other", None).empty


def test_a_tasks_panel_shows_each_models_latest_result_on_its_sets_only() -> None:
    records = {
        "a-old.json": results("org/a", {"te": set_result(0.1)}, finished_at="2026-11-26T10:00:00Z"),
        "a-new.json": results("org/a", {"te": set_result(0.4), "wic": set_result(0.2)}),
        "b.json": results(
            "org/b", {"ner-adg": set_result(0.3), "ner-wn": set_result(0.5), "te": set_result(0.6)}
        ),
    }
    te = task_evidence(records, "te")
    assert sorted(zip(te["model"], te["CoDeC %"], strict=True)) == [("org/a", 40.0), ("org/b", 60.0)]
    ner = task_evidence(records, "ner")
    assert list(ner["set"]) == ["NER (adg)", "NER (wn)"]
    assert task_evidence(records, "sum").empty
