"""Issue 29: "comparable with Table 1" needs the paper's own data (pinned digests), and ρ is
shown both ways — over the parsed answers, and over every answer with an unparsed one at its worst.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats as scipy_stats

from leaderboard.tracks.judge.data import JudgeDataError, load_paper_pins
from leaderboard.tracks.judge.metrics import (
    Correlation,
    JudgedScore,
    agreement,
    farthest_score,
    meta_evaluation,
)
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.schema import PaperDataPins, StatBlock

HUMAN = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]


def test_the_farthest_score_is_the_other_end_of_the_scale() -> None:
    assert [farthest_score(h) for h in (1, 2, 3, 4, 5)] == [5, 5, 1, 1, 1]


def test_rho_is_given_over_the_parsed_answers_and_over_every_answer_at_worst() -> None:
    judge: list[int | None] = [1, 2, 3, 4, 5, 1, None, 3, None, 5]

    result = agreement(zip(HUMAN, judge, strict=True))

    assert (result.n_items, result.n_scored) == (10, 8)
    assert isinstance(result.spearman, Correlation) and result.spearman.rho == pytest.approx(1.0)
    worst = [5 if h <= 2 else 1 for h in HUMAN]
    filled = [w if j is None else j for j, w in zip(judge, worst, strict=True)]
    expected = scipy_stats.spearmanr(HUMAN, filled)
    assert isinstance(result.spearman_all, Correlation) and result.spearman_all.n == 10
    assert result.spearman_all.rho == pytest.approx(expected.statistic)
    assert result.spearman_all.rho < result.spearman.rho  # two unreadable answers cost ρ here
    block = StatBlock.from_agreement(result)
    assert (block.rho_all, block.p_all) == (result.spearman_all.rho, result.spearman_all.p)


def test_with_every_answer_parsed_both_ways_agree() -> None:
    judge = [1, 3, 3, 4, 5, 2, 2, 3, 5, 5]
    items = [
        JudgedScore(item=f"s{i}", criterion=CRITERIA[i % 5], human=h, judge=j)
        for i, (h, j) in enumerate(zip(HUMAN, judge, strict=True))
    ]

    overall = meta_evaluation(items).overall

    assert overall.spearman == overall.spearman_all


def _pins_file(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "pins.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def test_a_pins_file_names_the_papers_two_digests(tmp_path: Path) -> None:
    pins = {"examples_sha256": "a" * 64, "annotated_sha256": "b" * 64}

    assert load_paper_pins(_pins_file(tmp_path, pins)) == PaperDataPins(**pins)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ({"examples_sha256": "a" * 64}, "annotated_sha256: Field required"),
        ({"examples_sha256": "A" * 64, "annotated_sha256": "b" * 64}, "examples_sha256: String should match"),
    ],
)
def test_a_bad_pins_file_is_refused_with_what_to_write(tmp_path: Path, content: object, message: str) -> None:
    with pytest.raises(JudgeDataError, match=message) as caught:
        load_paper_pins(_pins_file(tmp_path, content))
    assert "pins file" in str(caught.value)
