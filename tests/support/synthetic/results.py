"""A synthetic Evalita results store of N comparable models × both settings, for the tests and
the benchmarks (``bench/bench_ui*.py``, ``bench_contents.py``, ``bench_rescore.py``).

Each run is drawn item by item (:mod:`tests.support.synthetic.items`), so its scores, sizes and
intervals behave as a real leaderboard's; :func:`write_synthetic_results` writes the results
files (and, on request, each run's per-item file).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path

from leaderboard.core.items import ITEMS_FILE_NAME, items_to_parquet
from leaderboard.core.schema import ModelInfo, RunInfo, details_dir, results_file_path
from leaderboard.core.uncertainty import DEFAULT_CONFIG, DrawCache
from leaderboard.tracks.evalita.cps_intervals import RunUncertainty, cps_run
from leaderboard.tracks.evalita.definition import SUITE, TASK_IDS
from leaderboard.tracks.evalita.schema import PromptScore, ResultsFile, TaskResult
from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS, summary_of
from tests.support.synthetic.items import SMALL_SIZES, SyntheticSuite

SYNTHETIC_TYPES = ("pretrained", "instruction-tuned", "fine-tuned", "merged", "continually-pretrained")


def synthetic_model(i: int) -> str:
    """The id of the ``i``-th synthetic model (37 organisations, numbered models)."""
    return f"bench-org-{i % 37}/model-{i:04d}"


def write_synthetic_results(
    root: Path,
    n_models: int,
    seed: int = 7,
    *,
    details_root: Path | None = None,
    sizes: Mapping[str, Mapping[str, int]] = SMALL_SIZES,
) -> int:
    """``n_models`` comparable models × both settings under ``root`` (a results store); returns
    the number of files.  Each run is drawn item by item around the model's own skill
    (``tests.support.synthetic.items``, the test sets' ``sizes``), so ranks, spreads and sizes
    vary as in a real leaderboard; its prompt scores are its items' scores and its results
    carry the intervals the worker would write (``uncertainty``), so the ranking has tiers.
    With ``details_root`` each run's per-item file is written there too (what "A vs B" reads).
    The same seed gives the same store."""
    rng = random.Random(seed)
    suite = SyntheticSuite(sizes, seed=seed)
    cache = DrawCache()
    written = 0
    for i in range(n_models):
        skill = rng.uniform(0.2, 0.8)
        params = round(rng.choice([0.5, 1.1, 3.0, 7.2, 8.0, 13.0, 34.0, 70.0]) * rng.uniform(0.9, 1.1), 2)
        for k, finished in ((0, "2025-05-01T10:00:00Z"), (5, "2025-05-02T10:00:00Z")):
            items = suite.run(10 * i + k, skill)
            boot = cps_run(items, EVALITA_KINDS, cache=cache)
            tasks = {
                task.id: TaskResult(
                    metric=task.metric,
                    prompts={
                        p: PromptScore(score=float(score), n=boot.tasks[task.id].bootstrap.n_items)
                        for p, score in zip(task.prompt_ids, boot.tasks[task.id].prompt_scores, strict=True)
                    },
                )
                for task in SUITE
            }
            model_id = synthetic_model(i)
            folder = details_dir(model_id, finished, "bfloat16", k)
            results = ResultsFile(
                model=ModelInfo(
                    id=model_id,
                    revision=f"{i:040x}",
                    precision="bfloat16",
                    params_b=params,
                    model_type=SYNTHETIC_TYPES[i % len(SYNTHETIC_TYPES)],
                    license="apache-2.0",
                ),
                run=RunInfo(
                    num_fewshot=k,
                    data="hub",
                    harness="lm-eval 0.4.13",
                    finished_at=finished,
                    bootstrap_iters=0,
                    details_path=folder if details_root is not None else None,
                ),
                tasks=tasks,
                uncertainty=summary_of(RunUncertainty.of(boot, TASK_IDS), DEFAULT_CONFIG),
            )
            path = root / results_file_path(results, finished)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(results.to_json())
            if details_root is not None:
                items_path = details_root / folder / ITEMS_FILE_NAME
                items_path.parent.mkdir(parents=True, exist_ok=True)
                items_path.write_bytes(items_to_parquet(items))
            written += 1
    return written
