"""The CPS-vs-energy plot's points: measured runs on **one** GPU model only.

Energy depends on the hardware as much as on the model: points from different GPUs on one axis
would compare the GPUs.  So the plot shows the runs whose energy NVML measured on the GPU model
most runs of the ranking used (ties: the first name), and says which; runs not measured (CPU,
no counter, made before energy was recorded) are left out and counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from eval_queue.vocabulary import RunRef
from leaderboard.tracks.evalita.app.records import run_info
from leaderboard.tracks.evalita.app.views.board import Board
from leaderboard.tracks.evalita.app.views.labels import AVG
from leaderboard.views.common import KEY_COLUMN, MODEL

WH_PER_1000 = "Wh per 1,000 scored items"


@dataclass(frozen=True)
class EnergyPoints:
    """``points`` (MODEL, AVG, WH_PER_1000), the GPU model they were all measured on, runs left out."""

    points: pd.DataFrame
    gpu_model: str | None
    left_out: int


def energy_points(board: Board, ranking: pd.DataFrame, num_fewshot: int) -> EnergyPoints:
    """The ranking's rows whose energy was measured, restricted to the most common GPU model."""
    rows = []
    # Column by column (a ranking may hold 10,000 rows: no per-row pandas access).
    keys = ranking[KEY_COLUMN].tolist() if KEY_COLUMN in ranking.columns else [""] * len(ranking)
    averages = ranking[AVG].tolist() if AVG in ranking.columns else [None] * len(ranking)
    for key, avg, model in zip(keys, averages, ranking[MODEL].tolist(), strict=True):
        ref = RunRef.parse(str(key))
        if ref is None or avg is None or pd.isna(avg):
            continue
        info = run_info(board.loaded, (ref.model, ref.revision, ref.precision, num_fewshot))
        cost = info.cost if info is not None else None
        per_items = cost.wh_per_thousand_items if cost is not None else None
        gpu = cost.energy.gpu_model if cost is not None and cost.energy is not None else None
        rows.append((model, float(avg), per_items, gpu))
    measured = [r for r in rows if r[2] is not None and r[3]]
    if not measured:
        return EnergyPoints(pd.DataFrame(columns=[MODEL, AVG, WH_PER_1000]), None, len(rows))
    counts = Counter(r[3] for r in measured)
    gpu = sorted(counts, key=lambda name: (-counts[name], name))[0]
    kept = [(m, a, w) for m, a, w, g in measured if g == gpu]
    return EnergyPoints(pd.DataFrame(kept, columns=[MODEL, AVG, WH_PER_1000]), gpu, len(rows) - len(kept))
