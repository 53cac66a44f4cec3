"""Intervals of the other tracks: long context's means, judges' ρ and MAE, judges vs the best."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from leaderboard.core.uncertainty import bootstrap_task
from leaderboard.tracks.judge.metrics import JudgedScore
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.uncertainty import OVERALL, judge_figures, resampled_spearman, standings
from leaderboard.tracks.long_context.definition import AnswerKind, harness_tasks
from leaderboard.tracks.long_context.uncertainty import (
    LONG_CONTEXT_KINDS,
    long_context_intervals,
    long_context_run_items,
)


def long_context_samples(rng: np.random.Generator, n: int = 40) -> dict[str, list[dict]]:
    samples = {}
    for task in harness_tasks()[:4]:
        if task.kind is AnswerKind.OPEN_ENDED:
            rows = [
                {
                    "doc_id": i,
                    "em": float(rng.random() < 0.2),
                    "meteor": rng.random(),
                    "meteor_it": rng.random(),
                }
                for i in range(n)
            ]
        else:
            rows = [
                {"doc_id": i, "acc": float(rng.random() < 0.5), "unparsed": float(rng.random() < 0.1)}
                for i in range(n)
            ]
        samples[task.name] = rows
    return samples


def test_long_context_means_are_the_harness_means_with_an_interval_each():
    samples = long_context_samples(np.random.default_rng(0))
    run = long_context_run_items(samples)
    assert set(run.tasks) == set(samples)
    (intervals,) = long_context_intervals([run])
    for name, rows in samples.items():
        tb = bootstrap_task(run.tasks[name], LONG_CONTEXT_KINDS)
        task = next(t for t in harness_tasks() if t.name == name)
        for metric, score in zip(tb.prompts, tb.prompt_scores, strict=True):
            values = [row[metric] for row in rows]
            assert score == sum(values) / len(values)  # lm-eval's mean
            interval = intervals[task.setting.value][task.question_set.value][metric]
            assert interval.low <= score <= interval.high


def test_a_long_context_run_without_items_has_no_interval():
    assert long_context_intervals([None]) == [None]


def judged(rng: np.random.Generator, noise: float, n: int = 60, unparsed: float = 0.0) -> list[JudgedScore]:
    humans = rng.integers(1, 6, n)
    scores = []
    for i, human in enumerate(humans):
        for criterion in CRITERIA[:2]:
            judge = (
                None if rng.random() < unparsed else int(np.clip(round(human + rng.normal(0, noise)), 1, 5))
            )
            scores.append(JudgedScore(f"doc{i}/s1", criterion, int(human), judge))
    return scores


def test_resampled_spearman_is_scipys_on_each_resample():
    rng = np.random.default_rng(1)
    human = rng.integers(1, 6, (20, 30)).astype(float)
    judge = np.clip(human + rng.integers(-1, 2, (20, 30)), 1, 5)
    judge[rng.random((20, 30)) < 0.1] = np.nan  # unparsed
    ours = resampled_spearman(human, judge)
    for row in range(20):
        keep = ~np.isnan(judge[row])
        assert ours[row] == pytest.approx(spearmanr(human[row, keep], judge[row, keep]).statistic, abs=1e-12)


def test_judge_figures_are_the_published_ones_with_intervals():
    scores = judged(np.random.default_rng(2), noise=0.7, unparsed=0.05)
    figures = judge_figures("j", scores, CRITERIA[0].value)
    assert figures.n_items == 60 and figures.n_scored < 60
    assert figures.rho_interval.low <= figures.rho <= figures.rho_interval.high
    assert figures.mae_interval.low <= figures.mae <= figures.mae_interval.high
    assert judge_figures("j", scores, OVERALL).n_items == 120


def test_the_best_judge_and_those_not_distinguishable_from_it():
    rng = np.random.default_rng(3)
    good = judged(rng, noise=0.5, n=120)
    twin = list(good)
    bad = [JudgedScore(s.item, s.criterion, s.human, int(rng.integers(1, 6))) for s in good]
    result = {
        s.figures.judge: s for s in standings({"good": good, "twin": twin, "bad": bad}, CRITERIA[0].value)
    }
    assert result["good"].best and result["twin"].indistinguishable and result["twin"].p_vs_best == 1.0
    assert not result["bad"].indistinguishable and result["bad"].p_vs_best < 0.05


def test_long_context_questions_of_one_book_are_drawn_together():
    samples = long_context_samples(np.random.default_rng(1))
    for rows in samples.values():
        for row in rows:
            row["doc"] = {"book_id": f"book{row['doc_id'] % 5}"}
    run = long_context_run_items(samples)
    items = next(iter(run.tasks.values()))
    assert items.n_clusters == 5
    from leaderboard.core.uncertainty import DEFAULT_CONFIG, DrawCache

    weights = DrawCache().get(DEFAULT_CONFIG, items).weights
    same_book = items.clusters == items.clusters[0]
    assert (weights[:, same_book] == weights[:, [int(np.flatnonzero(same_book)[0])]]).all()
    # Records without the doc (an older run): questions drawn one by one.
    plain = long_context_run_items(long_context_samples(np.random.default_rng(1)))
    assert next(iter(plain.tasks.values())).clusters is None


def test_a_judges_summaries_of_one_document_are_drawn_together():
    scores = [
        JudgedScore(f"d{d}/s{s}", criterion, 1 + (d + s) % 5, 1 + (d * s) % 5)
        for d in range(12)
        for s in range(3)
        for criterion in CRITERIA
    ]
    figures = judge_figures("j", scores, OVERALL)
    assert figures.rho_interval is not None
    from leaderboard.core.uncertainty import DEFAULT_CONFIG, make_draws

    # The same draws the judge's figures use: 12 documents drawn whole, 15 units each.
    units = sorted(f"{s.item}|{s.criterion.value}" for s in scores)
    documents = np.array([u.split("/", 1)[0] for u in units])
    draws = make_draws(DEFAULT_CONFIG, "x", [len(units)], [documents])
    first = documents == "d0"
    assert (draws.weights[:, first] == draws.weights[:, [int(np.flatnonzero(first)[0])]]).all()
    assert (draws.weights.sum(axis=1) == len(units)).all()  # 12 documents of 15 units each drawn
