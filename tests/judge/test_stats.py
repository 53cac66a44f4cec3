"""leaderboard.tracks.judge.metrics against scipy on hand-made vectors; not-enough-data is typed, never NaN."""

from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats

from leaderboard.tracks.judge.definition import Criterion
from leaderboard.tracks.judge.metrics import (
    Correlation,
    JudgedScore,
    NotEnoughData,
    agreement,
    agreement_matrix,
    bias,
    distribution,
    distributions,
    mae,
    meta_evaluation,
    spearman,
)

HUMAN = [1, 2, 2, 3, 4, 4, 5, 5]
JUDGE = [2, 2, 3, 3, 5, 4, 4, 5]  # ties on both sides


def test_spearman_with_ties_is_scipys_rho_and_p() -> None:
    expected = scipy_stats.spearmanr(HUMAN, JUDGE)

    result = spearman(HUMAN, JUDGE)

    assert isinstance(result, Correlation)
    assert result.rho == pytest.approx(expected.statistic)
    assert result.p == pytest.approx(expected.pvalue)
    assert result.n == len(HUMAN)
    assert 0 < result.rho < 1  # a real check: the ties change ρ from the untied value
    assert result.rho != pytest.approx(scipy_stats.pearsonr(HUMAN, JUDGE).statistic)


def test_a_perfectly_reversed_judge_has_rho_minus_one() -> None:
    result = spearman([1, 2, 3, 4, 5], [5, 4, 3, 2, 1])

    assert isinstance(result, Correlation)
    assert result.rho == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("human", "judge", "reason"),
    [
        ([3, 3, 3, 3], [1, 2, 4, 5], "constant human scores"),
        ([1, 2, 4, 5], [4, 4, 4, 4], "constant judge scores"),
        ([1, 5], [2, 4], "2 scored items, at least 3 needed"),
        ([], [], "0 scored items, at least 3 needed"),
    ],
)
def test_a_constant_column_or_too_few_items_is_not_enough_data(
    human: list[int], judge: list[int], reason: str
) -> None:
    result = spearman(human, judge, names=("human", "judge"))

    assert result == NotEnoughData(reason)
    assert "not enough data" in str(result)


def test_mae_and_bias_on_a_hand_computed_example() -> None:
    human = [1, 3, 5, 2]
    judge = [2, 3, 4, 5]  # differences +1, 0, −1, +3

    assert mae(human, judge) == pytest.approx((1 + 0 + 1 + 3) / 4)
    assert bias(human, judge) == pytest.approx((14 - 11) / 4)


def test_a_generous_judge_has_a_positive_bias_and_a_harsh_one_a_negative_bias() -> None:
    human = [2, 3, 3, 4]

    assert bias(human, [3, 4, 4, 5]) == pytest.approx(1.0)
    assert bias(human, [1, 2, 2, 3]) == pytest.approx(-1.0)


def test_unparsed_answers_are_left_out_of_every_figure_and_counted_in_the_rate() -> None:
    pairs = [(1, 1), (2, None), (3, 4), (4, 4), (5, None), (5, 5)]

    result = agreement(pairs)

    scored_h, scored_j = [1, 3, 4, 5], [1, 4, 4, 5]
    assert (result.n_items, result.n_scored) == (6, 4)
    assert result.unparsed_rate == pytest.approx(2 / 6)
    assert isinstance(result.spearman, Correlation)
    assert result.spearman.rho == pytest.approx(scipy_stats.spearmanr(scored_h, scored_j).statistic)
    assert result.mae == pytest.approx(0.25)
    assert result.bias == pytest.approx(0.25)


def test_an_all_unparsed_judge_has_no_figure_but_a_full_unparsed_rate() -> None:
    result = agreement([(1, None), (3, None), (5, None)])

    assert result.unparsed_rate == 1.0
    for figure in (result.spearman, result.mae, result.bias, result.mean_human, result.mean_judge):
        assert isinstance(figure, NotEnoughData)


def test_no_nan_escapes_even_when_scipy_would_give_one() -> None:
    # scipy returns NaN (and warns) on a constant input; we never call it there.
    result = agreement([(2, 3), (2, 3), (2, 3), (2, 3)])

    assert isinstance(result.spearman, NotEnoughData)
    assert result.mae == 1.0 and result.bias == 1.0
    for value in (result.mae, result.bias, result.mean_human, result.mean_judge, result.unparsed_rate):
        assert not (isinstance(value, float) and math.isnan(value))


def _scores() -> list[JudgedScore]:
    rows = [
        ("a", Criterion.FLUENCY, 5, 5),
        ("b", Criterion.FLUENCY, 2, 4),
        ("c", Criterion.FLUENCY, 3, 4),
        ("d", Criterion.FLUENCY, 1, None),
        ("a", Criterion.ORDERING, 1, 2),
        ("b", Criterion.ORDERING, 4, 3),
        ("c", Criterion.ORDERING, 5, 5),
    ]
    return [JudgedScore(*row) for row in rows]


def test_meta_evaluation_reports_each_criterion_present_and_all_pooled() -> None:
    result = meta_evaluation(_scores())

    assert list(result.criteria) == [Criterion.FLUENCY, Criterion.ORDERING]
    assert result.criteria[Criterion.FLUENCY].n_items == 4
    assert result.overall.n_items == 7 and result.overall.n_scored == 6
    pooled = scipy_stats.spearmanr([5, 2, 3, 1, 4, 5], [5, 4, 4, 2, 3, 5])
    assert isinstance(result.overall.spearman, Correlation)
    assert result.overall.spearman.rho == pytest.approx(pooled.statistic)
    assert result.overall.spearman.p == pytest.approx(pooled.pvalue)


def test_the_agreement_matrix_is_symmetric_with_ones_on_the_diagonal() -> None:
    judges = {
        "alpha": {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5},
        "beta": {"a": 2, "b": 1, "c": 4, "d": 3, "e": None},
        "gamma": {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1, "f": 3},
    }

    matrix = agreement_matrix(judges)

    assert matrix.judges == ("alpha", "beta", "gamma")
    for i, a in enumerate(matrix.judges):
        for j in range(len(matrix.judges)):
            assert matrix.cells[i][j] == matrix.cells[j][i]
        diagonal = matrix.cell(a, a)
        assert isinstance(diagonal, Correlation) and diagonal.rho == 1.0
    alpha_beta = matrix.cell("alpha", "beta")
    assert isinstance(alpha_beta, Correlation)
    assert alpha_beta.n == 4  # "e" is unparsed for beta: only items both scored
    assert alpha_beta.rho == pytest.approx(scipy_stats.spearmanr([1, 2, 3, 4], [2, 1, 4, 3]).statistic)
    alpha_gamma = matrix.cell("alpha", "gamma")
    assert isinstance(alpha_gamma, Correlation) and alpha_gamma.rho == pytest.approx(-1.0)


def test_judges_with_too_few_common_items_have_not_enough_data_in_the_matrix() -> None:
    matrix = agreement_matrix({"x": {"a": 1, "b": 2, "c": 3}, "y": {"a": 3, "z": 1}})

    assert isinstance(matrix.cell("x", "y"), NotEnoughData)
    assert isinstance(matrix.cell("y", "y"), NotEnoughData)
    assert isinstance(matrix.cell("x", "x"), Correlation)


def test_distributions_count_every_level_and_the_unparsed_answers() -> None:
    counted = distribution([5, 5, 4, None, 1])

    assert dict(counted.counts) == {1: 1, 2: 0, 3: 0, 4: 1, 5: 2}
    assert counted.unparsed == 1 and counted.total == 5

    fluency, ordering = distributions(_scores())
    assert fluency.criterion is Criterion.FLUENCY
    assert dict(fluency.human.counts) == {1: 1, 2: 1, 3: 1, 4: 0, 5: 1}
    assert dict(fluency.judge.counts) == {1: 0, 2: 0, 3: 0, 4: 2, 5: 1}
    assert fluency.judge.unparsed == 1
    assert ordering.judge.total == 3


def test_a_score_off_the_scale_cannot_enter_a_distribution() -> None:
    with pytest.raises(ValueError, match="outside the scale"):
        distribution([3, 6])
