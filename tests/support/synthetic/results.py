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

import numpy as np

from leaderboard.core.items import ITEMS_FILE_NAME, items_to_parquet
from leaderboard.core.schema import ModelInfo, RunInfo, details_dir, results_file_path
from leaderboard.core.summary import encode_draws
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


def _shifted(results: ResultsFile, delta: float) -> ResultsFile:
    """``results`` with every score, interval and resampled value moved by ``delta`` (0–1 scale)."""

    def move(value: float | None) -> float | None:
        return None if value is None else min(1.0, max(0.0, value + delta))

    tasks = {
        task_id: task.model_copy(
            update={
                "prompts": {
                    p: score.model_copy(update={"score": move(score.score)})
                    for p, score in task.prompts.items()
                }
            }
        )
        for task_id, task in results.tasks.items()
    }
    block = results.uncertainty
    if block is not None:
        block = block.model_copy(
            update={
                "intervals": {f: (low + delta, high + delta) for f, (low, high) in block.intervals.items()},
                "draws": {
                    f: kept.model_copy(update={"float32": encode_draws(kept.values() + delta)})
                    for f, kept in block.draws.items()
                },
            }
        )
    return results.model_copy(update={"tasks": tasks, "uncertainty": block})


def _write_models(
    root: Path,
    models: list[tuple[int, float, float]],
    seed: int,
    details_root: Path | None,
    sizes: Mapping[str, Mapping[str, int]],
    distinct: int | None = None,
    bases_from: Path | None = None,
) -> int:
    suite = SyntheticSuite(sizes, seed=seed)
    cache = DrawCache()
    bases: dict[tuple[int, int], tuple[ResultsFile, bytes]] = {}
    written = 0
    for i, skill, params in models:
        for k, finished in ((0, "2025-05-01T10:00:00Z"), (5, "2025-05-02T10:00:00Z")):
            if distinct is not None and i >= distinct:
                # A copy of a drawn run (see write_synthetic_results): its own name and metadata.
                base, items_bytes = bases[(i % distinct, k)]
                delta = float(np.random.default_rng([seed, i, k]).normal(0.0, 0.02))
                copy = _shifted(base, delta)
                _write_run(root, details_root, copy, i, params, k, finished, items_bytes)
                written += 1
                continue
            if bases_from is not None and distinct is not None:
                # The drawn runs are those of a store of `distinct` models already written.
                folder = details_dir(synthetic_model(i), finished, "bfloat16", k)
                kept = ResultsFile.from_json(
                    (bases_from / "results" / _base_path(i, k, finished)).read_bytes(),
                    _base_path(i, k, finished),
                )
                items_bytes = (
                    (bases_from / "details" / folder / ITEMS_FILE_NAME).read_bytes()
                    if details_root is not None
                    else b""
                )
                bases[(i, k)] = (kept, items_bytes)
                _write_run(root, details_root, kept, i, params, k, finished, items_bytes)
                written += 1
                continue
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
            results = ResultsFile(
                model=ModelInfo(
                    id=synthetic_model(i),
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
                ),
                tasks=tasks,
                uncertainty=summary_of(RunUncertainty.of(boot, TASK_IDS), DEFAULT_CONFIG),
            )
            items_bytes = items_to_parquet(items) if details_root is not None else b""
            if distinct is not None:
                bases[(i, k)] = (results, items_bytes)
            _write_run(root, details_root, results, i, params, k, finished, items_bytes)
            written += 1
    return written


def _base_path(i: int, k: int, finished: str) -> str:
    """Where model ``i``'s run of setting ``k`` lies in a synthetic store (its name and time fix it)."""
    org, name = synthetic_model(i).split("/")
    return f"{org}/{name}/results_{finished.replace(':', '-')}_bfloat16_{k}shot.json"


def _write_run(
    root: Path,
    details_root: Path | None,
    results: ResultsFile,
    i: int,
    params: float,
    k: int,
    finished: str,
    items_bytes: bytes,
) -> None:
    """Write model ``i``'s run of setting ``k`` (its identity set here) and its per-item file."""
    model_id = synthetic_model(i)
    folder = details_dir(model_id, finished, "bfloat16", k)
    results = results.model_copy(
        update={
            "model": ModelInfo(
                id=model_id,
                revision=f"{i:040x}",
                precision="bfloat16",
                params_b=params,
                model_type=SYNTHETIC_TYPES[i % len(SYNTHETIC_TYPES)],
                license="apache-2.0",
            ),
            "run": results.run.model_copy(
                update={"details_path": folder if details_root is not None else None}
            ),
        }
    )
    path = root / results_file_path(results, finished)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(results.to_json())
    if details_root is not None:
        items_path = details_root / folder / ITEMS_FILE_NAME
        items_path.parent.mkdir(parents=True, exist_ok=True)
        items_path.write_bytes(items_bytes)


def write_synthetic_results(
    root: Path,
    n_models: int,
    seed: int = 7,
    *,
    details_root: Path | None = None,
    sizes: Mapping[str, Mapping[str, int]] = SMALL_SIZES,
    workers: int = 1,
    distinct: int | None = None,
    bases_from: Path | None = None,
) -> int:
    """``n_models`` comparable models × both settings under ``root`` (a results store); returns
    the number of files.  Each run is drawn item by item around the model's own skill
    (``tests.support.synthetic.items``, the test sets' ``sizes``), so ranks, spreads and sizes
    vary as in a real leaderboard; its prompt scores are its items' scores and its results
    carry the intervals the worker would write (``uncertainty``), so the ranking has tiers.
    With ``details_root`` each run's per-item file is written there too (what "A vs B" reads).
    The same seed gives the same store, whatever ``workers`` (processes writing slices of it).

    ``distinct``: only the first ``distinct`` models are drawn item by item (the bootstrap is
    what takes the time: about 75 ms a run); model ``i`` beyond them is a copy of model
    ``i % distinct``'s runs under its own name, size and type, every score, interval and
    resampled value moved by a small amount of its own (normal, sd 2 points), and the same
    per-item file.  So a 10,000-model store takes minutes, not an hour, and keeps the spread of
    scores and intervals of independent runs; the one difference is that a copy and its base
    differ by a constant on every resample (a certain outcome of their test, a few pairs
    among millions).  ``bases_from``: a data folder (``results/``, ``details/``) of a store of
    the first ``distinct`` models with the same seed, whose runs are read instead of drawn again."""
    models = [(i, skill, params) for i, (skill, params) in enumerate(_model_draws(n_models, seed))]
    if workers <= 1 or n_models < 2 * workers:
        return _write_models(root, models, seed, details_root, sizes, distinct, bases_from)
    if distinct is not None:
        distinct -= distinct % workers  # each process then holds the bases of its own copies
    # Interleaved slices: each process gets models of every skill, so they finish together.
    slices = [models[w::workers] for w in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        futures = [
            pool.submit(_write_models, root, part, seed, details_root, sizes, distinct, bases_from)
            for part in slices
        ]
        return sum(future.result() for future in futures)


#: Bumped whenever what :func:`write_synthetic_results` writes changes: a kept store of another
#: version is written anew.
STORE_VERSION = 2


def cached_synthetic_store(
    cache_root: Path, n_models: int, seed: int = 7, *, workers: int = 2, distinct: int | None = None
) -> Path:
    """A data folder (``results/`` with its ``contents.parquet``, ``details/``) of ``n_models``
    synthetic models, written once under ``cache_root`` and reused while its version holds.

    A folder without its ``complete`` mark (an interrupted write) is written anew.  A kept folder
    whose ``contents.parquet`` is in an older format than the app's (written before the format
    changed: the benches would time a read the app no longer does) has its table rebuilt from its
    results files, once, and says so (:func:`refresh_contents`).  ``distinct``: see
    :func:`write_synthetic_results` (part of the folder's name)."""
    import shutil

    from eval_queue.storage.local import LocalStorage
    from leaderboard.core.contents import CONTENTS_PATH, to_parquet
    from leaderboard.core.contents_io import rebuild

    if distinct is not None and distinct >= n_models:
        distinct = None
    copies = "" if distinct is None else f"-distinct{distinct}"
    data = cache_root / f"evalita-{n_models}{copies}-seed{seed}-v{STORE_VERSION}"
    mark = data / "complete"
    if mark.is_file():
        refresh_contents(data)
        return data
    # The drawn runs: those of the store of `distinct` models (written first, and kept too).
    bases = None if distinct is None else cached_synthetic_store(cache_root, distinct, seed, workers=workers)
    if data.exists():
        shutil.rmtree(data)
    files = write_synthetic_results(
        data / "results",
        n_models,
        seed,
        details_root=data / "details",
        workers=workers,
        distinct=distinct,
        bases_from=bases,
    )
    # The table the worker keeps at publish: what the app's cold start reads.
    storage = LocalStorage(data / "results")
    storage.write(CONTENTS_PATH, to_parquet(rebuild(storage).table))
    mark.write_text(f"{files} results files\n")
    return data


def refresh_contents(data: Path) -> str | None:
    """Rebuild ``data/results/contents.parquet`` from the results files when its format is not the
    app's (:data:`~leaderboard.core.contents.CONTENTS_FORMAT`); the format it had ("no table"
    when there was none), None when it was current.  Printed, since it takes minutes at 10,000 models.

    The rebuild runs in a child process (its GBs would count in the peak memory of every process
    the benches start from this one), and its table replaces the file (written aside, then
    renamed), so a hard-linked copy of the store keeps the old one."""
    import subprocess
    import sys
    import time

    import pyarrow.parquet as pq

    from leaderboard.core.contents import CONTENTS_FORMAT, CONTENTS_PATH, format_of

    table = data / "results" / CONTENTS_PATH
    found = (format_of(pq.read_schema(table)) or "an unmarked table") if table.is_file() else "no table"
    if found == CONTENTS_FORMAT:
        return None
    print(
        f"{table}: {found}, not the app's {CONTENTS_FORMAT}: rebuilding it from the results files", flush=True
    )
    started = time.monotonic()
    child = f"from tests.support.synthetic.results import _rebuild_contents; _rebuild_contents({str(data)!r})"
    subprocess.run([sys.executable, "-c", child], cwd=Path(__file__).resolve().parents[3], check=True)
    print(f"{table}: rebuilt in {time.monotonic() - started:.0f} s", flush=True)
    return found


def _rebuild_contents(data: str) -> None:
    """The store's contents table written anew from its results files (:func:`refresh_contents`'s child)."""
    from eval_queue.storage.local import LocalStorage
    from leaderboard.core.contents import CONTENTS_PATH, to_parquet
    from leaderboard.core.contents_io import rebuild

    storage = LocalStorage(Path(data) / "results")
    storage.write(CONTENTS_PATH, to_parquet(rebuild(storage).table))
