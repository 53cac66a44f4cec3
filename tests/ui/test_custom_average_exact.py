"""The custom average (issue 32) computed fast — its draws gathered from the compact matrices at
once, its intervals without scipy.stats, its tiers by the pruned ``significance_counts`` — gives
exactly the points, intervals and tiers of the straightforward computation: each run's draws read
one by one, ``scipy.stats.quantile``, and every pair tested (``significance_matrix``) with Holm
over each run's comparisons.  Boards with ties, missing and mismatched draws, runs that are not
comparable, and both kinds of block (compact rows and parsed text)."""

from __future__ import annotations

from base64 import b64decode
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest
from scipy.stats import quantile

from leaderboard.core import tiers
from leaderboard.core.summary import UncertaintySummary, encode_draws
from leaderboard.core.tiers import significance_counts, significance_matrix
from leaderboard.tracks.evalita.app.compact import BlockBatch, kept_draws
from leaderboard.tracks.evalita.app.views import subsets
from leaderboard.tracks.evalita.cps_intervals import TASK_DRAWS_KEPT, mean_draws_key
from leaderboard.tracks.evalita.definition import TASK_IDS
from leaderboard.tracks.evalita.uncertainty import (
    MEAN_CPS_FIGURE,
    MEAN_CPS_TIE_FIGURE,
    cps_figure,
    cps_tie_figure,
)

CHOSEN = ("te", "sa", "ner")


def reference_task_draws(
    summaries: Sequence[UncertaintySummary | None], task_ids: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
    """Run by run: each run's draws read alone (``kept_draws``), stacked, summed in task order."""
    figures = (
        [(MEAN_CPS_FIGURE, MEAN_CPS_TIE_FIGURE)]
        if set(task_ids) == set(TASK_IDS)
        else [(cps_figure(t), cps_tie_figure(t)) for t in task_ids]
    )
    names = [name for pair in figures for name in pair]
    present, keys, values_by_run = [], [], []
    for i, summary in enumerate(summaries):
        kept = [kept_draws(summary, name) for name in names]
        if all(k is not None for k in kept):
            present.append(i)
            values_by_run.append([k[1] for k in kept])
            reflected_keys = [k[0] for k in kept[::2]]
            keys.append(reflected_keys[0] if len(figures) == 1 else mean_draws_key(reflected_keys))
        else:
            keys.append(None)
    sizes = [{len(v) for v in values} for values in values_by_run]
    common = Counter(next(iter(size)) for size in sizes if len(size) == 1).most_common(1)
    b = common[0][0] if common else 0
    ok = [k for k, found in enumerate(sizes) if found == {b}]
    for k, i in enumerate(present):
        if k not in set(ok):
            keys[i] = None
    reflected = np.full((len(summaries), b), np.nan)
    tie_aware = np.full((len(summaries), b), np.nan)
    if ok:
        rows = [present[k] for k in ok]
        for side, out in ((0, reflected), (1, tie_aware)):
            total = np.zeros((len(ok), b))
            for j in range(len(figures)):
                total += np.stack([values_by_run[k][2 * j + side] for k in ok])
            out[rows] = total / len(figures)
    return reflected, tie_aware, keys


def reference_custom_average(
    summaries: Sequence[UncertaintySummary | None],
    task_cps: np.ndarray,
    tasks: Sequence[str],
    comparable: Sequence[bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int | None, ...]]:
    chosen_tasks = subsets.chosen_tasks(tasks)
    points = task_cps[:, [TASK_IDS.index(t) for t in chosen_tasks]].mean(axis=1)
    reflected, tie_aware, keys = reference_task_draws(summaries, chosen_tasks)
    lows, highs = np.full(len(points), np.nan), np.full(len(points), np.nan)
    alpha = (1.0 - 0.95) / 2.0  # as percentile_intervals writes it (not the literal 0.025)
    for i, key in enumerate(keys):
        if key is not None and np.isfinite(points[i]):
            plain = quantile(reflected[i], np.array([alpha, 1.0 - alpha]))
            tied = quantile(tie_aware[i], np.array([alpha, 1.0 - alpha]))
            lows[i] = min(float(plain[0]), float(tied[0]))
            highs[i] = max(float(plain[1]), float(tied[1]))
    eligible = [i for i, k in enumerate(keys) if k is not None and comparable[i] and np.isfinite(points[i])]
    found: list[int | None] = [None] * len(points)
    if eligible:
        common = Counter(keys[i] for i in eligible).most_common(1)[0][0]
        ranked = [i for i in eligible if keys[i] == common]
        matrix = significance_matrix(reflected[ranked], tie_aware[ranked])
        for i, better in zip(ranked, (matrix > 0).sum(axis=1).tolist(), strict=True):
            found[i] = better + 1
    return points, lows, highs, tuple(found)


def _block(draws: dict[str, tuple[str, np.ndarray]]) -> dict:
    return {
        "method": "bootstrap",
        "seed": 1,
        "n_resamples": 1000,
        "level": 0.95,
        "intervals": {MEAN_CPS_FIGURE: [0.1, 0.9]},
        "draws": {f: {"key": k, "float32": encode_draws(v)} for f, (k, v) in draws.items()},
    }


def edge_case_board(
    seed: int, n: int = 90
) -> tuple[list, list[UncertaintySummary | None], np.ndarray, list[bool]]:
    """``n`` runs' blocks: skills from crowded to spread, and the edge cases in the first rows."""
    rng = np.random.default_rng(seed)
    skill = np.where(np.arange(n) % 3 == 0, rng.uniform(0.45, 0.47, n), rng.uniform(0.2, 0.8, n))
    noise = rng.uniform(0.005, 0.04, n)
    shared = rng.normal(0, 1, 1000)  # items every run is scored on: paired draws
    blocks: list[dict | None] = []
    task_cps = np.clip(skill[:, None] + rng.normal(0, 0.02, (n, len(TASK_IDS))), 0, 1)
    for i in range(n):
        draws: dict[str, tuple[str, np.ndarray]] = {}
        for t_index, task in enumerate(TASK_IDS):
            values = task_cps[i, t_index] + noise[i] * (0.5 * shared + rng.normal(0, 1, 1000))
            draws[cps_figure(task)] = (f"{task}-items", values[:TASK_DRAWS_KEPT])
            shift = 0.004 if i % 4 == 0 else 0.0  # a tied maximum: a second centring for some
            draws[cps_tie_figure(task)] = (f"{task}-items", values[:TASK_DRAWS_KEPT] - shift)
        mean = task_cps[i].mean() + noise[i] * (0.5 * shared + rng.normal(0, 0.3, 1000))
        draws[MEAN_CPS_FIGURE] = ("mean-items", mean)
        draws[MEAN_CPS_TIE_FIGURE] = ("mean-items", mean - 0.001 * (i % 2))
        blocks.append(_block(draws))
    # Ties: identical runs, every draw and point the same.
    for copy in (1, 2):
        blocks[copy] = blocks[0]
        task_cps[copy] = task_cps[0]
    del blocks[3]["draws"][cps_figure("sa")]  # a chosen task without draws: no interval, no tier
    blocks[4]["draws"][cps_figure("ner")]["key"] = "other-items"  # other items: not paired
    short = np.zeros(TASK_DRAWS_KEPT // 2) + 0.5  # another number of resamples for one task
    blocks[5]["draws"][cps_tie_figure("te")]["float32"] = encode_draws(short)
    for figure in list(blocks[6]["draws"]):  # every draw shorter: a single size, not the common one
        raw = blocks[6]["draws"][figure]
        raw["float32"] = encode_draws(np.frombuffer(b64decode(raw["float32"]), "<f4")[:50])
    blocks[7] = None  # no uncertainty block at all
    task_cps[8, TASK_IDS.index("ner")] = np.nan  # no CPS for a chosen task: no point
    for kept in blocks[9]["draws"].values():  # constant draws: a zero standard error
        length = len(np.frombuffer(b64decode(kept["float32"]), "<f4"))
        kept["float32"] = encode_draws(np.full(length, 0.61))
    comparable = [i % 11 != 10 for i in range(n)]
    # Two compact batches (two layouts of matrices) and some blocks parsed as the files hold them.
    summaries: list[UncertaintySummary | None] = [None] * n
    batches = (BlockBatch(), BlockBatch(spill=lambda figure: True))
    slots: list[tuple[int, int]] = []
    for i, block in enumerate(blocks):
        if block is None:
            continue
        if i % 5 == 4:
            summaries[i] = UncertaintySummary.model_validate(block)
        else:
            slots.append((i, batches[i % 2].add(block)))
    built = [batch.build() for batch in batches]
    for i, slot in slots:
        summary = built[i % 2][slot]
        assert not isinstance(summary, ValueError), summary
        summaries[i] = summary
    keys = [(f"org/model-{i}", "main", "bfloat16", 0) for i in range(n)]
    return keys, summaries, task_cps, comparable


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tasks", [CHOSEN, ("wic",), tuple(TASK_IDS), ("ner", "te", "sa", "te", "nope")])
def test_the_custom_average_equals_the_straightforward_computation(
    seed: int, tasks: tuple[str, ...], monkeypatch
) -> None:
    monkeypatch.setattr(tiers, "_BLOCK", 23)  # several blocks: the pruning across them is exercised
    keys, summaries, task_cps, comparable = edge_case_board(seed)
    uncertainty = dict(zip(keys, summaries, strict=True))
    got = subsets.custom_average(keys, {}, uncertainty, tasks, comparable, task_cps)
    points, lows, highs, found = reference_custom_average(summaries, task_cps, tasks, comparable)
    np.testing.assert_array_equal(got.points, points)
    np.testing.assert_array_equal(got.lows, lows)
    np.testing.assert_array_equal(got.highs, highs)
    assert got.tiers == found
    # The board has what the comparison is about: tiers above 1, ties, and runs left out.
    assert max(t for t in found if t is not None) > 3
    assert found[0] == found[1] == found[2] is not None
    assert found[7] is None and found[10] is None  # no block; not comparable
    if set(CHOSEN) <= set(tasks) != set(TASK_IDS):  # (every task: the mean CPS's own draws)
        assert found[3] is None and found[4] is None and found[5] is None and found[8] is None
        assert np.isnan(lows[[3, 5, 6, 7, 8]]).all() and np.isfinite(lows[[0, 4, 9]]).all()


@pytest.mark.parametrize("tasks", [CHOSEN, tuple(TASK_IDS)])
def test_the_draws_gathered_at_once_are_the_runs_own_read_one_by_one(tasks: tuple[str, ...]) -> None:
    _, summaries, _, _ = edge_case_board(5)
    got = subsets._task_draws(summaries, subsets.chosen_tasks(tasks))
    want = reference_task_draws(summaries, subsets.chosen_tasks(tasks))
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2] == want[2]
    if tasks == CHOSEN:  # missing, one task short, all short, no block; two keys (other items)
        assert [i for i, k in enumerate(got[2]) if k is None] == [3, 5, 6, 7]
        assert len({k for k in got[2] if k is not None}) == 2


def test_no_runs_and_no_draws_at_all() -> None:
    reflected, tie_aware, keys = subsets._task_draws([None, None], CHOSEN)
    assert reflected.shape == (2, 0) and tie_aware.shape == (2, 0) and keys == [None, None]
    reflected, tie_aware, keys = subsets._task_draws([], CHOSEN)
    assert reflected.shape == (0, 0) and keys == []


@pytest.mark.parametrize("seed", range(3))
def test_pruned_counts_equal_every_pair_tested_on_a_crowded_board_of_independent_draws(
    seed: int, monkeypatch
) -> None:
    """The custom average's hard case: few tasks, 200 unpaired-looking resamples, runs close
    together — most pairs are in doubt and many p-values reach Holm (the bound on which can
    still be rejected, and the p-values computed only for those, are what is exercised)."""
    monkeypatch.setattr(tiers, "_BLOCK", 64)
    rng = np.random.default_rng(100 + seed)
    n = 500
    skill = rng.uniform(0.3, 0.7, n)
    draws = skill[:, None] + rng.uniform(0.01, 0.03, n)[:, None] * rng.normal(0, 1, (n, 200))
    alt = draws - np.where(rng.random(n) < 0.3, 0.003, 0.0)[:, None]
    draws[5] = draws[4]
    alt[5] = alt[4]
    better, worse = significance_counts(draws, alt)
    matrix = significance_matrix(draws, alt)
    assert better.tolist() == (matrix > 0).sum(axis=1).tolist()
    assert worse.tolist() == (matrix < 0).sum(axis=1).tolist()
