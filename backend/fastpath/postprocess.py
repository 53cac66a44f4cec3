"""Post-processing on all cores, with upstream's numbers: per-document scoring and bootstrap.

After the model has answered, lm-eval scores every document in one process: for the
summarisation task that is ROUGE at ~0.11 s a summary (≈ 31 CPU-minutes for the 16,874
summaries of a full run), and the F1 metrics of HS and WIC get their standard error from
``bootstrap_iters`` resamples, also in one process (upstream's pool cuts them in chunks of
1,000, so 1,000 iterations use one worker).  Inside :func:`parallel_postprocessing`:

* each generative task's ``process_results`` is computed for all its documents at once, in
  a pool of forked processes, the first time lm-eval asks for one; lm-eval then gets the
  stored result for each document (the same function on the same inputs: same numbers);
* ``lm_eval.api.metrics.bootstrap_stderr`` draws exactly upstream's resamples (a
  ``random.Random(i)`` per chunk of 1,000, drawn in order) in this process and evaluates
  the statistic on them in the pool: the same replicates, so the same standard error.

Fork, not spawn: the workers inherit the task objects and metric functions (lm-eval loads
task hooks from YAML-relative modules that cannot be pickled by reference).  They run
pure-Python scoring only — no torch, no CUDA, no tokenizers.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import random
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import lm_eval.api.metrics as lm_metrics

log = logging.getLogger(__name__)

#: Upstream's chunk of bootstrap draws, each with its own ``random.Random(chunk index)``.
BOOTSTRAP_CHUNK = 1000

# What forked workers read (set just before the pool forks; never changed while it runs).
_SCORING: tuple[list[Callable[..., dict[str, Any]]], list[tuple[int, Any, list[Any]]]] = ([], [])
_BOOTSTRAP: tuple[Callable[[Sequence[Any]], float] | None, Sequence[Any]] = (None, ())


@dataclass
class PostprocessStats:
    """What ran in the pool (plain numbers, for the run record and the benchmark)."""

    workers: int = 0
    documents: int = 0
    scoring_s: float = 0.0
    bootstraps: int = 0
    bootstrap_s: float = 0.0


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _pool(workers: int) -> Any:
    return multiprocessing.get_context("fork").Pool(workers)


def _fingerprint(doc: Any, results: Sequence[Any]) -> tuple[str, str]:
    return json.dumps(doc, sort_keys=True, default=repr, ensure_ascii=False), repr(list(results))


def _score(job: int) -> dict[str, Any]:
    functions, jobs = _SCORING
    task, doc, results = jobs[job]
    return functions[task](doc, results)


def _replicate(sample: Sequence[int]) -> float:
    statistic, xs = _BOOTSTRAP
    assert statistic is not None
    return statistic([xs[i] for i in sample])


class _ScoringCache:
    """Scores every document of the wrapped tasks in the pool on the first request for one."""

    def __init__(self, tasks: Sequence[Any], workers: int, stats: PostprocessStats) -> None:
        self.tasks = list(tasks)
        self.functions = [task.process_results for task in self.tasks]
        self.workers = workers
        self.stats = stats
        self.results: dict[tuple[int, str, str], dict[str, Any]] = {}
        self.filled = False

    def wrapper(self, index: int) -> Callable[[Any, list[Any]], dict[str, Any]]:
        def process_results(doc: Any, results: list[Any]) -> dict[str, Any]:
            if not self.filled:
                self.fill()
            stored = self.results.get((index, *_fingerprint(doc, results)))
            return dict(stored) if stored is not None else self.functions[index](doc, results)

        return process_results

    def _jobs(self) -> list[tuple[int, Any, list[Any]]]:
        """(task, doc, filtered responses) per document and filter, as lm-eval's evaluator groups them."""
        jobs: list[tuple[int, Any, list[Any]]] = []
        for index, task in enumerate(self.tasks):
            instances = task.instances
            if not instances or any(not inst.resps for inst in instances):
                continue  # not answered (yet): lm-eval's own call computes it
            task.apply_filters()  # idempotent: lm-eval applies them again, to the same values
            by_doc: defaultdict[int, list[Any]] = defaultdict(list)
            for inst in instances:
                by_doc[inst.doc_id].append(inst)
            for group in by_doc.values():
                group.sort(key=lambda inst: inst.idx)
                for key in group[0].filtered_resps:
                    jobs.append((index, group[0].doc, [inst.filtered_resps[key] for inst in group]))
        return jobs

    def fill(self) -> None:
        global _SCORING
        self.filled = True
        t0 = time.perf_counter()
        jobs = self._jobs()
        if not jobs:
            return
        _SCORING = (self.functions, jobs)
        try:
            with _pool(self.workers) as pool:
                chunk = max(1, len(jobs) // (self.workers * 4))
                scored = pool.map(_score, range(len(jobs)), chunksize=chunk)
        finally:
            _SCORING = ([], [])
        for (task, doc, results), metrics in zip(jobs, scored, strict=True):
            self.results[(task, *_fingerprint(doc, results))] = metrics
        self.stats.documents += len(jobs)
        self.stats.scoring_s += time.perf_counter() - t0
        log.info(
            "scored %d documents on %d cores in %.1fs", len(jobs), self.workers, time.perf_counter() - t0
        )


def bootstrap_stderr_parallel(
    statistic: Callable[[Sequence[Any]], float], xs: Sequence[Any], iters: int, workers: int
) -> float:
    """``lm_eval.api.metrics.bootstrap_stderr`` with the replicates evaluated in a pool.

    Same draws in the same order (``random.Random(i).choices`` per chunk of 1,000 —
    ``choices`` over ``range(n)`` consumes the generator exactly as over ``xs``), so the
    same standard error.
    """
    global _BOOTSTRAP
    chunk = min(BOOTSTRAP_CHUNK, iters)
    n = len(xs)
    draws: list[list[int]] = []
    for i in range(iters // chunk):
        rnd = random.Random(i)
        draws.extend(rnd.choices(range(n), k=n) for _ in range(chunk))
    _BOOTSTRAP = (statistic, xs)
    try:
        with _pool(workers) as pool:
            replicates = pool.map(_replicate, draws, chunksize=max(1, len(draws) // (workers * 4)))
    finally:
        _BOOTSTRAP = (None, ())
    return lm_metrics.sample_stddev(replicates)


@contextmanager
def parallel_postprocessing(tasks: Sequence[Any], workers: int | None = None) -> Iterator[PostprocessStats]:
    """Within the block, lm-eval scores the generative ``tasks`` and bootstraps in a process pool.

    ``tasks`` are lm-eval task objects (as passed to ``simple_evaluate``).  With one core
    nothing changes.  On exit the tasks' own ``process_results`` and lm-eval's
    ``bootstrap_stderr`` are back.
    """
    workers = workers or available_cores()
    stats = PostprocessStats(workers=workers)
    if workers < 2:
        yield stats
        return
    generative = [task for task in tasks if getattr(task, "OUTPUT_TYPE", None) == "generate_until"]
    cache = _ScoringCache(generative, workers, stats)
    upstream = lm_metrics.bootstrap_stderr

    def bootstrap_stderr(statistic: Callable[[Sequence[Any]], float], xs: Sequence[Any], iters: int) -> float:
        t0 = time.perf_counter()
        value = bootstrap_stderr_parallel(statistic, xs, iters, workers)
        stats.bootstraps += 1
        stats.bootstrap_s += time.perf_counter() - t0
        return value

    originals = [(task, task.__dict__.get("process_results")) for task in generative]
    for index, task in enumerate(generative):
        task.process_results = cache.wrapper(index)
    lm_metrics.bootstrap_stderr = bootstrap_stderr
    try:
        yield stats
    finally:
        lm_metrics.bootstrap_stderr = upstream
        for task, original in originals:
            if original is None:
                del task.process_results
            else:
                task.process_results = original
