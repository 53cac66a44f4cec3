"""Synthetic Evalita per-item data: shared gold labels per task, predictions per run.

Used by the uncertainty tests (small sizes) and ``bench/bench_tiers.py`` (the test sets' real
sizes).  Vectorised: a run of the real sizes (about 64,000 rows) is built in milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from leaderboard.core.items import RunItems, TaskItems
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.uncertainty import EVALITA_METRICS

#: The official test sets' sizes (paper §3; NER per domain).
REAL_SIZES: Mapping[str, Mapping[str, int]] = {
    "wic": {"": 500},
    "te": {"": 400},
    "sa": {"": 2000},
    "hs": {"": 1763},
    "faq": {"": 401},
    "at": {"": 521},
    "ls": {"": 1710},
    "ner": {"adg": 521, "fic": 1517, "wn": 2088},
    "re": {"": 1064},
    "sum": {"": 8437},
}
SMALL_SIZES: Mapping[str, Mapping[str, int]] = {
    task: {part: max(8, n // 40) for part, n in parts.items()} for task, parts in REAL_SIZES.items()
}


def pair_stats(gold: NDArray[np.int64], pred: NDArray[np.int64], n_labels: int) -> NDArray[np.float64]:
    """``(n, 2K)`` F1 statistics of one (gold, prediction) pair per item."""
    labels = np.arange(n_labels)
    g = gold[:, None] == labels
    p = pred[:, None] == labels
    return np.concatenate([(g & p), g.astype(np.int64) + p], axis=1).astype(np.float64)


def _noisy(
    rng: np.random.Generator, gold: NDArray[np.int64], quality: float, n_labels: int
) -> NDArray[np.int64]:
    wrong = rng.random(gold.shape) > quality
    return np.where(wrong, rng.integers(0, n_labels, gold.shape), gold)


@dataclass(frozen=True)
class SyntheticSuite:
    """Gold labels of every task (fixed by ``seed``), from which runs of any skill are drawn."""

    sizes: Mapping[str, Mapping[str, int]]
    seed: int = 0

    def _golds(self, task: str, n: int, n_labels: int) -> NDArray[np.int64]:
        rng = np.random.default_rng([self.seed, sum(map(ord, task))])
        return rng.integers(0, n_labels, n)

    def task(self, task_id: str, rng: np.random.Generator, skill: float) -> TaskItems:
        """One task of a run whose prompts answer correctly about ``skill`` of the time."""
        spec = next(t for t in SUITE if t.id == task_id)
        metric = EVALITA_METRICS[task_id]
        parts = tuple(self.sizes[task_id])
        n = sum(self.sizes[task_id].values())
        prompts = spec.prompt_ids
        kind = metric.kind.name
        stats = []
        for _ in prompts:
            quality = float(np.clip(skill + rng.normal(0, 0.05), 0.02, 0.98))
            if kind == "mean" and task_id == "sum":
                stats.append(np.clip(rng.normal(quality * 0.4, 0.12, (n, 1)), 0, 1))
            elif kind == "mean":
                stats.append((rng.random((n, 1)) < quality).astype(np.float64))
            elif kind == "f1_binary":
                gold = self._golds(task_id, n, 2)
                stats.append(pair_stats(gold, _noisy(rng, gold, quality, 2), 2))
            elif kind == "evalita_sa":
                gold = self._golds(task_id, n, 4)
                pred = _noisy(rng, gold, quality, 4)
                opos = pair_stats(
                    np.isin(gold, (0, 3)).astype(np.int64), np.isin(pred, (0, 3)).astype(np.int64), 2
                )
                oneg = pair_stats(
                    np.isin(gold, (1, 3)).astype(np.int64), np.isin(pred, (1, 3)).astype(np.int64), 2
                )
                stats.append(np.concatenate([opos, oneg], axis=1))
            elif kind in ("evalita_ner", "f1_macro"):
                k = 4 if kind == "evalita_ner" else 2
                # One to three (gold, prediction) pairs per item, summed.
                total = np.zeros((n, 2 * k))
                for extra in range(3):
                    gold = self._golds(f"{task_id}{extra}", n, k)
                    pairs = pair_stats(gold, _noisy(rng, gold, quality, k), k)
                    total += pairs if extra == 0 else pairs * (rng.random((n, 1)) < 0.4)
                stats.append(total)
            elif kind == "evalita_ls":
                answered = (rng.random(n) < 0.9).astype(np.float64)
                annotated = (rng.random(n) < 0.95).astype(np.float64)
                prec = np.clip(rng.normal(quality * 0.3, 0.15, n), 0, 1) * answered * annotated
                stats.append(np.stack([prec, answered, annotated], axis=1))
            else:  # pragma: no cover - a new kind needs a generator here
                raise AssertionError(kind)
        part_index = np.repeat(np.arange(len(parts), dtype=np.int16), list(self.sizes[task_id].values()))
        doc_ids = np.concatenate([np.arange(m, dtype=np.int64) for m in self.sizes[task_id].values()])
        return TaskItems(
            task=task_id,
            metric=kind,
            labels=metric.labels,
            prompts=prompts,
            parts=parts,
            part_index=part_index,
            doc_ids=doc_ids,
            stats=np.stack(stats, axis=1),
        )

    def run(self, seed: int, skill: float, tasks: tuple[str, ...] | None = None) -> RunItems:
        rng = np.random.default_rng([self.seed, seed])
        chosen = tasks if tasks is not None else tuple(self.sizes)
        return RunItems("evalita", {t: self.task(t, rng, skill) for t in chosen})
