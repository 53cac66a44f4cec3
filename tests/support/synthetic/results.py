"""A synthetic Evalita results store of N comparable models × both settings, for the tests and
the benchmarks (``bench/bench_ui*.py``, ``bench_contents.py``, ``bench_rescore.py``).

Each run is drawn item by item (:mod:`tests.support.synthetic.items`), so its scores, sizes and
intervals behave as a real leaderboard's; :func:`write_synthetic_results` writes the results
files (and, on request, each run's per-item file).  Every model's parameters are drawn first, in
order, so the store is the same whether one process writes it or several (``workers``): a store
of 10,000 models is written in parallel by the browser bench, and kept between its runs
(:func:`cached_synthetic_store`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
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


def _model_draws(n_models: int, seed: int) -> list[tuple[float, float]]:
    """``(skill, params_b)`` of each model, drawn in model order (what fixes the store)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n_models):
        skill = rng.uniform(0.2, 0.8)
        params = round(rng.choice([0.5, 1.1, 3.0, 7.2, 8.0, 13.0, 34.0, 70.0]) * rng.uniform(0.9, 1.1), 2)
        out.append((skill, params))
    return out


def _write_models(
    root: Path,
    models: list[tuple[int, float, float]],
    seed: int,
    details_root: Path | None,
    sizes: Mapping[str, Mapping[str, int]],
) -> int:
    suite = SyntheticSuite(sizes, seed=seed)
    cache = DrawCache()
    written = 0
    for i, skill, params in models:
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


def write_synthetic_results(
    root: Path,
    n_models: int,
    seed: int = 7,
    *,
    details_root: Path | None = None,
    sizes: Mapping[str, Mapping[str, int]] = SMALL_SIZES,
    workers: int = 1,
) -> int:
    """``n_models`` comparable models × both settings under ``root`` (a results store); returns
    the number of files.  Each run is drawn item by item around the model's own skill
    (``tests.support.synthetic.items``, the test sets' ``sizes``), so ranks, spreads and sizes
    vary as in a real leaderboard; its prompt scores are its items' scores and its results
    carry the intervals the worker would write (``uncertainty``), so the ranking has tiers.
    With ``details_root`` each run's per-item file is written there too (what "A vs B" reads).
    The same seed gives the same store, whatever ``workers`` (processes writing slices of it)."""
    models = [(i, skill, params) for i, (skill, params) in enumerate(_model_draws(n_models, seed))]
    if workers <= 1 or n_models < 2 * workers:
        return _write_models(root, models, seed, details_root, sizes)
    # Interleaved slices: each process gets models of every skill, so they finish together.
    slices = [models[w::workers] for w in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(_write_models, root, part, seed, details_root, sizes) for part in slices]
        return sum(future.result() for future in futures)


#: Bumped whenever what :func:`write_synthetic_results` writes changes: a kept store of another
#: version is written anew.
STORE_VERSION = 1


def cached_synthetic_store(cache_root: Path, n_models: int, seed: int = 7, *, workers: int = 2) -> Path:
    """A data folder (``results/`` with its ``contents.parquet``, ``details/``) of ``n_models``
    synthetic models, written once under ``cache_root`` and reused while its version holds.

    A folder without its ``complete`` mark (an interrupted write) is written anew."""
    import shutil

    from eval_queue.storage.local import LocalStorage
    from leaderboard.core.contents import CONTENTS_PATH, rebuild, to_parquet

    data = cache_root / f"evalita-{n_models}-seed{seed}-v{STORE_VERSION}"
    mark = data / "complete"
    if mark.is_file():
        return data
    if data.exists():
        shutil.rmtree(data)
    files = write_synthetic_results(
        data / "results", n_models, seed, details_root=data / "details", workers=workers
    )
    # The table the worker keeps at publish: what the app's cold start reads.
    storage = LocalStorage(data / "results")
    storage.write(CONTENTS_PATH, to_parquet(rebuild(storage).table))
    mark.write_text(f"{files} results files\n")
    return data
