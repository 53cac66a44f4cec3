"""A vs B: per task ΔCPS, its interval and p-value, the items where the runs disagree, a verdict."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.core.items import ItemId, RunItems, TaskItems
from leaderboard.core.uncertainty import DrawCache
from leaderboard.tracks.evalita.compare import Verdict, compare_runs
from leaderboard.tracks.evalita.cps_intervals import cps_task
from leaderboard.tracks.evalita.definition import TASK_IDS
from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS
from tests.support.synthetic.items import SMALL_SIZES, SyntheticSuite


@pytest.fixture(scope="module")
def runs() -> tuple[RunItems, RunItems]:
    suite = SyntheticSuite(SMALL_SIZES, seed=2)
    return suite.run(1, 0.85), suite.run(2, 0.35)


def test_a_run_against_itself_differs_nowhere(runs):
    strong, _ = runs
    result = compare_runs(strong, strong, EVALITA_KINDS, TASK_IDS)
    assert result.summary == "A better on 0 tasks, no difference on 10, B better on 0"
    assert all(t.delta == 0 and t.p_value == 1 for t in result.tasks)
    assert all(not d.items for t in result.tasks for d in t.disagreements)
    assert result.mean is not None and result.mean.verdict is Verdict.NO_DIFFERENCE


def test_a_much_stronger_run_is_better_with_intervals_and_holm_adjusted_p_values(runs):
    strong, weak = runs
    result = compare_runs(strong, weak, EVALITA_KINDS, TASK_IDS, a_label="Strong", b_label="Weak")
    better = [t for t in result.tasks if t.verdict is Verdict.A_BETTER]
    assert len(better) >= 8
    assert result.summary.startswith(f"Strong better on {len(better)} tasks, no difference on ")
    for t in result.tasks:
        assert t.interval.low <= t.delta <= t.interval.high or t.interval.low == t.interval.high
        assert t.p_holm >= t.p_value
        assert t.delta == pytest.approx(t.cps_a - t.cps_b)
    assert result.mean.verdict is Verdict.A_BETTER and result.mean.interval.low > 0


def test_swapping_the_runs_negates_the_differences(runs):
    strong, weak = runs
    ab = compare_runs(strong, weak, EVALITA_KINDS, TASK_IDS)
    ba = compare_runs(weak, strong, EVALITA_KINDS, TASK_IDS)
    for x, y in zip(ab.tasks, ba.tasks, strict=True):
        assert x.delta == -y.delta
        assert x.p_value == pytest.approx(y.p_value)
        assert {x.verdict, y.verdict} <= {Verdict.NO_DIFFERENCE} or {x.verdict, y.verdict} == {
            Verdict.A_BETTER,
            Verdict.B_BETTER,
        }


def accuracy(correct: np.ndarray, doc_ids: np.ndarray) -> TaskItems:
    n, n_prompts = correct.shape
    return TaskItems(
        "te", "mean", (), tuple(f"p{i + 1}" for i in range(n_prompts)), ("",), np.zeros(n, np.int16),
        doc_ids.astype(np.int64), correct.astype(np.float64)[:, :, None],
    )  # fmt: skip


def test_the_items_where_the_runs_disagree_are_listed_per_prompt():
    rng = np.random.default_rng(0)
    correct = rng.integers(0, 2, (40, 2))
    changed = correct.copy()
    changed[[3, 17], 0] = 1 - changed[[3, 17], 0]
    changed[25, 1] = 1 - changed[25, 1]
    docs = np.arange(40)
    result = compare_runs(
        RunItems("evalita", {"te": accuracy(correct, docs)}),
        RunItems("evalita", {"te": accuracy(changed, docs)}),
        EVALITA_KINDS,
        ["te"],
    )
    (task,) = result.tasks
    assert [(d.prompt, d.items) for d in task.disagreements] == [
        ("p1", (ItemId("", 3), ItemId("", 17))),
        ("p2", (ItemId("", 25),)),
    ]


def test_runs_are_compared_on_the_items_they_share():
    rng = np.random.default_rng(1)
    a = accuracy(rng.integers(0, 2, (100, 2)), np.arange(100))
    b = accuracy(rng.integers(0, 2, (100, 2)), np.arange(50, 150))
    cache = DrawCache()
    result = compare_runs(
        RunItems("evalita", {"te": a}), RunItems("evalita", {"te": b}), EVALITA_KINDS, ["te"], cache=cache
    )
    (task,) = result.tasks
    assert task.n_items == 50
    shared_a = a.restricted(np.arange(100) >= 50)
    assert task.cps_a == cps_task(shared_a, EVALITA_KINDS, cache=cache).cps


def test_a_task_without_per_item_data_on_one_side_is_not_compared(runs):
    strong, weak = runs
    partial = RunItems("evalita", {k: v for k, v in weak.tasks.items() if k != "sum"})
    result = compare_runs(strong, partial, EVALITA_KINDS, TASK_IDS)
    assert result.missing == ("sum",) and len(result.tasks) == 9
    assert result.mean is None
    assert result.summary.endswith("(1 not compared: no per-item data)")
