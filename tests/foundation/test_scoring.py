"""The §5 metrics on hand-made scores: definitions, missing values, rounding."""

from __future__ import annotations

import pytest

from leaderboard.core.numbers import percent
from leaderboard.tracks.evalita.definition import SUITE, TaskKind, get_task
from leaderboard.tracks.evalita.metrics import (
    combined_performance,
    overall_score,
    prompt_summary,
    saturation,
    score_task,
    task_score,
)


def test_task_score_follows_equations_2_4_6_8() -> None:
    result = task_score({"p1": 0.5, "p2": 0.7, "p3": 0.6}, ("p1", "p2", "p3"))
    assert result.maxp == pytest.approx(0.7)
    assert result.avgp == pytest.approx(0.6)
    assert result.sat == pytest.approx(0.9)
    assert result.cps == pytest.approx(0.63)
    assert result.best_prompt == "p2"


def test_a_model_scoring_alike_on_every_prompt_keeps_its_score_as_cps() -> None:
    result = task_score({"p1": 0.4, "p2": 0.4}, ("p1", "p2"))
    assert result.sat == pytest.approx(1.0)
    assert result.cps == pytest.approx(0.4)


def test_best_prompt_tie_goes_to_the_first_prompt_in_suite_order() -> None:
    assert task_score({"p1": 0.3, "p2": 0.8, "p3": 0.8}, ("p1", "p2", "p3")).best_prompt == "p2"


@pytest.mark.parametrize("scores", [{"p1": 0.5}, {"p1": 0.5, "p2": None}, {}])
def test_a_missing_prompt_score_leaves_every_derived_value_empty(scores: dict[str, float | None]) -> None:
    result = task_score(scores, ("p1", "p2"))
    assert (result.maxp, result.avgp, result.sat, result.cps, result.best_prompt) == (None,) * 5


def test_a_zero_score_is_a_score_not_a_missing_one() -> None:
    result = task_score({"p1": 0.0, "p2": 0.0}, ("p1", "p2"))
    assert (result.maxp, result.cps, result.best_prompt) == (0.0, 0.0, "p1")


def test_score_task_uses_the_suites_prompts() -> None:
    sum_task = get_task("sum")
    assert score_task(sum_task, {"p1": 0.2, "p2": 0.3, "p9": 0.9}).maxp == pytest.approx(0.3)
    assert score_task(get_task("te"), {"p1": 0.2, "p2": 0.3}).cps is None


def test_prompt_summary_follows_equations_1_3_5_7_9_over_models_present() -> None:
    summary = prompt_summary([0.2, None, 0.6, 0.4])
    assert summary.n_models == 3
    assert (summary.minp, summary.maxp) == (0.2, 0.6)
    assert summary.avgp == pytest.approx(0.4)
    assert summary.cps == pytest.approx(0.6 * 0.8)


def test_prompt_summary_of_no_models_is_empty() -> None:
    summary = prompt_summary([None])
    assert (summary.minp, summary.maxp, summary.avgp, summary.cps, summary.n_models) == (None,) * 4 + (0,)


def test_saturation_and_cps_propagate_none() -> None:
    assert saturation(None, 0.5) is None
    assert combined_performance(0.5, None) is None


def test_overall_score_is_the_mean_cps_over_the_ten_tasks_and_its_kinds() -> None:
    cps = {task.id: (0.6 if task.kind is TaskKind.MULTIPLE_CHOICE else 0.3) for task in SUITE}
    overall = overall_score(cps)
    assert overall.avg_cps == pytest.approx((6 * 0.6 + 4 * 0.3) / 10)
    assert overall.mc_avg_cps == pytest.approx(0.6)
    assert overall.gen_avg_cps == pytest.approx(0.3)


def test_overall_score_is_empty_when_a_task_is_missing() -> None:
    cps: dict[str, float | None] = {task.id: 0.5 for task in SUITE}
    cps["sum"] = None
    overall = overall_score(cps)
    assert overall.avg_cps is None
    assert overall.gen_avg_cps is None
    assert overall.mc_avg_cps == pytest.approx(0.5)
    del cps["sum"]
    assert overall_score(cps).avg_cps is None


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.58894999999999996, 58.90),
        (0.71925, 71.93),
        (0.5562499, 55.62),
        (0.0, 0.0),
        (1.0, 100.0),
        (None, None),
    ],
)
def test_percent_rounds_halves_up_as_the_paper_does(value: float | None, shown: float | None) -> None:
    assert percent(value) == shown
