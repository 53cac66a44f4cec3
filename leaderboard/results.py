"""Read every results file of a store into tidy tables.

``load_results(storage)`` lists the results store, parses each ``results_<ts>.json``
through :class:`~leaderboard.schema.ResultsFile`, reports (and skips) the files that
do not parse, keeps the newest run per (model, revision, precision, num_fewshot), and
returns two tidy :class:`pandas.DataFrame` s: one row per run, one row per run × task
× prompt.  Nothing is scored here; :mod:`leaderboard.tables` derives the metrics.

A refresh is a new call with the same :class:`ResultsCache`: only files whose
``Storage.versions()`` entry changed are read and parsed again.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from eval_queue.errors import MalformedFileError, NotFoundError
from eval_queue.storage.base import Storage
from leaderboard.schema import ResultsFile
from leaderboard.suite import TASKS

logger = logging.getLogger(__name__)

#: The columns that identify a run; the newest file wins per key.
RUN_KEY: tuple[str, ...] = ("model", "revision", "precision", "num_fewshot")

RUN_COLUMNS: tuple[str, ...] = (
    *RUN_KEY,
    "params_b",
    "model_type",
    "license",
    "architecture",
    "data",
    "limit",
    "harness",
    "backend",
    "finished_at",
    "duration_s",
    "comparable",
    "results_path",
    "details_path",
)
SCORE_COLUMNS: tuple[str, ...] = (*RUN_KEY, "task", "prompt", "score", "stderr", "n")

# On the hub the results repo also holds per-sample outputs under this folder.
_DETAILS_FOLDER = "details/"


@dataclass(frozen=True)
class ParsedFile:
    """One results file as read at one store version: its content or why it is unusable.

    ``score_rows`` are computed (and their warnings logged) once, when the file is parsed.
    """

    version: str
    results: ResultsFile | None
    problem: MalformedFileError | None
    score_rows: tuple[dict[str, object], ...] = ()


@dataclass
class ResultsCache:
    """Parsed results files by path, each with the store version it was parsed from.

    Pass the same object to successive :func:`load_results` calls so that a refresh
    re-reads only new or changed files (and warns about a bad file once, not on every
    refresh).  It holds no reference to a store.
    """

    _entries: dict[str, ParsedFile] = field(default_factory=dict)
    #: How many files were read and parsed (rather than served from the cache).
    parsed_count: int = 0

    def get(self, path: str, version: str) -> ParsedFile | None:
        entry = self._entries.get(path)
        return entry if entry is not None and entry.version == version else None

    def put(self, path: str, entry: ParsedFile) -> None:
        self._entries[path] = entry
        self.parsed_count += 1

    def keep_only(self, paths: Iterable[str]) -> None:
        """Forget files that are no longer in the store."""
        alive = set(paths)
        for path in [p for p in self._entries if p not in alive]:
            del self._entries[path]


@dataclass(frozen=True)
class LoadedResults:
    """What a results store holds, as tidy frames (scores on the 0–1 scale)."""

    #: One row per run kept: ``RUN_COLUMNS``.
    runs: pd.DataFrame
    #: One row per run × task × prompt: ``SCORE_COLUMNS``; ``score`` is NaN for the paper's N/A.
    scores: pd.DataFrame
    #: Files that could not be used, each naming its path and the reason.
    problems: list[MalformedFileError]
    #: Older files of a run that a newer file replaced.
    superseded: tuple[str, ...] = ()


def is_results_file(path: str) -> bool:
    """``org/model/results_<ts>.json`` — anything else in the store is not ours to parse."""
    name = posixpath.basename(path)
    return not path.startswith(_DETAILS_FOLDER) and name.startswith("results_") and name.endswith(".json")


def load_results(storage: Storage, cache: ResultsCache | None = None) -> LoadedResults:
    """Every usable results file in ``storage``; the newest per (model, revision, precision, num_fewshot).

    Malformed files and files of an unknown schema are logged as warnings naming the
    file and listed in ``problems``; they never stop the others from loading.
    """
    cache = ResultsCache() if cache is None else cache
    versions = {path: version for path, version in storage.versions().items() if is_results_file(path)}
    cache.keep_only(versions)

    parsed: dict[str, ParsedFile] = {}
    problems: list[MalformedFileError] = []
    for path in sorted(versions):
        entry = _parse_cached(storage, path, versions[path], cache)
        if entry is None:
            continue
        if entry.problem is not None:
            problems.append(entry.problem)
        else:
            parsed[path] = entry

    newest, superseded = _newest_per_run(
        {path: entry.results for path, entry in parsed.items() if entry.results is not None}
    )
    runs = pd.DataFrame(
        [_run_row(path, results) for path, results in newest.items()], columns=list(RUN_COLUMNS)
    )
    score_rows = [row for path in newest for row in parsed[path].score_rows]
    scores = pd.DataFrame(score_rows, columns=list(SCORE_COLUMNS)).astype({"score": float, "stderr": float})
    return LoadedResults(runs=runs, scores=scores, problems=problems, superseded=tuple(superseded))


def _parse_cached(storage: Storage, path: str, version: str, cache: ResultsCache) -> ParsedFile | None:
    cached = cache.get(path, version)
    if cached is not None:
        return cached
    try:
        data = storage.read(path)
    except NotFoundError:
        # Deleted between listing and reading: it is simply no longer there.
        logger.info("results file %s vanished while loading", path)
        return None
    try:
        results = ResultsFile.from_json(data, path)
    except MalformedFileError as exc:
        logger.warning("skipping results file %s", exc)
        entry = ParsedFile(version, None, exc)
    else:
        entry = ParsedFile(version, results, None, tuple(_score_rows(path, results)))
    cache.put(path, entry)
    return entry


def _run_key(results: ResultsFile) -> tuple[str, str, str, int]:
    return (results.model.id, results.model.revision, results.model.precision, results.run.num_fewshot)


def _newest_per_run(parsed: dict[str, ResultsFile]) -> tuple[dict[str, ResultsFile], list[str]]:
    """Keep the most recently finished file of each run; the file name breaks ties."""
    best: dict[tuple[str, str, str, int], tuple[str, ResultsFile]] = {}
    superseded: list[str] = []
    for path, results in parsed.items():
        key = _run_key(results)
        current = best.get(key)
        if current is None:
            best[key] = (path, results)
            continue
        if (results.run.finished_at or "", path) > (current[1].run.finished_at or "", current[0]):
            superseded.append(current[0])
            best[key] = (path, results)
        else:
            superseded.append(path)
    return {path: results for path, results in best.values()}, sorted(superseded)


def _run_row(path: str, results: ResultsFile) -> dict[str, object]:
    model, run = results.model, results.run
    return {
        "model": model.id,
        "revision": model.revision,
        "precision": model.precision,
        "num_fewshot": run.num_fewshot,
        "params_b": model.params_b,
        "model_type": model.model_type,
        "license": model.license,
        "architecture": model.architecture,
        "data": run.data,
        "limit": run.limit,
        "harness": run.harness,
        "backend": run.backend,
        "finished_at": run.finished_at,
        "duration_s": run.duration_s,
        "comparable": run.comparable,
        "results_path": path,
        "details_path": run.details_path,
    }


def _score_rows(path: str, results: ResultsFile) -> list[dict[str, object]]:
    """One row per known task × known prompt; unknown ids or a foreign metric are reported and left out."""
    key = dict(zip(RUN_KEY, _run_key(results), strict=True))
    rows = []
    for task_id, task_result in results.tasks.items():
        task = TASKS.get(task_id)
        if task is None:
            logger.warning("%s: ignoring unknown task %r (the suite has %s)", path, task_id, ", ".join(TASKS))
            continue
        if task_result.metric != task.metric:
            logger.warning(
                "%s: ignoring task %r scored with %r; the suite ranks it by %r",
                path,
                task_id,
                task_result.metric,
                task.metric,
            )
            continue
        for prompt_id, prompt in task_result.prompts.items():
            if prompt_id not in task.prompt_ids:
                logger.warning("%s: ignoring unknown prompt %r of task %r", path, prompt_id, task_id)
                continue
            rows.append(
                {
                    **key,
                    "task": task_id,
                    "prompt": prompt_id,
                    "score": prompt.score,
                    "stderr": prompt.stderr,
                    "n": prompt.n,
                }
            )
    return rows
