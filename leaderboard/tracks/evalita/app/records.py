"""The Evalita track's records: one results file's :class:`RunRecord`, and the store as tidy tables.

``load_results(storage)`` reads the store through the one reader
(:func:`leaderboard.store.read_results_store`, which dispatches each file by its track),
takes the Evalita files — each parsed through :class:`~leaderboard.tracks.evalita.schema.ResultsFile`
into a :class:`RunRecord` by :func:`leaderboard.tracks.evalita.app.results.parse_results_file` —, reports (and skips) the files
that do not parse, keeps one file per (model, revision, precision, num_fewshot) — the
newest comparable one if the run has any, else the newest — and returns two tidy
:class:`pandas.DataFrame` s: one row per run, one row per run × task × prompt.  Nothing
is scored here; :mod:`leaderboard.tracks.evalita.app.tables` derives the metrics.  Files of other tracks
are not Evalita's business: they are neither loaded nor reported here.

A refresh is a new call with the same :class:`ResultsCache`: only files whose
``Storage.versions()`` entry changed are read and parsed again.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType

import pandas as pd

from eval_queue.errors import MalformedFileError
from eval_queue.safe_json import DETAILS_FILE_MAX_BYTES
from eval_queue.storage.base import Storage
from eval_queue.vocabulary import RunRef
from leaderboard.core.schema import ModelInfo
from leaderboard.core.summary import UncertaintySummary
from leaderboard.store import ResultsCache, StoreResults, read_results_store
from leaderboard.tracks.evalita.definition import TASKS, TRACK
from leaderboard.tracks.evalita.metric_sets import (
    DEFAULT_METRIC_SET,
    METRIC_SETS,
    MetricSet,
    expected_metric,
    has_current_block,
    set_tasks,
    set_uncertainty,
)
from leaderboard.tracks.evalita.schema import (
    DetailRecord,
    EvalitaRunInfo,
    ResultsFile,
    TaskResult,
    details_file_name,
    parse_details,
)
from leaderboard.tracks.evalita.uncertainty import prompt_figure

__all__ = [
    "RUN_COLUMNS",
    "RUN_KEY",
    "SCORE_COLUMNS",
    "LoadedResults",
    "ParsedScores",
    "PromptScores",
    "RunKey",
    "RunRecord",
    "RunScores",
    "evalita_results",
    "load_results",
    "loaded_from_records",
    "read_details",
    "run_info",
]

logger = logging.getLogger(__name__)

#: The columns that identify a run; one file is kept per key (see :func:`load_results`).
RUN_KEY: tuple[str, ...] = (*RunRef.COLUMNS, "num_fewshot")
#: A run's identity: (model, revision, precision, num_fewshot).
RunKey = tuple[str, str, str, int]
#: task → prompt → score (0–1, ``None`` for the paper's N/A), read-only.
PromptScores = Mapping[str, Mapping[str, float | None]]

#: How a run was made: the ``run`` block of its results file (``RunInfo``), as columns.
RUN_INFO_COLUMNS: tuple[str, ...] = (
    "data",
    "limit",
    "tasks",  # a subset run's task ids (None: all ten)
    "device",
    "dtype",  # what ran (also the run's precision); requested_precision: what was asked
    "requested_precision",
    "bootstrap_iters",  # draws behind each stderr (lm-eval's CLI: 100,000)
    "max_gen_toks",
    "harness",
    "backend",
    "hardware",
    "model_args",
    "batch_size",
    "chat_template",
    "started_at",
    "finished_at",
    "duration_s",
    "request_id",
)
RUN_COLUMNS: tuple[str, ...] = (
    *RUN_KEY,
    "params_b",
    "model_type",
    "license",
    "architecture",
    *RUN_INFO_COLUMNS,
    "comparable",
    "results_path",
    "details_path",
)
#: ``low``/``high``: the prompt score's interval (0–1) from the run's ``uncertainty`` block, NaN without.
SCORE_COLUMNS: tuple[str, ...] = (*RUN_KEY, "task", "prompt", "score", "stderr", "n", "low", "high")
# One score row of a file, without its run key: task, prompt, score, stderr, n, low, high.
_ScoreRow = tuple[str, str, float | None, float | None, int | None, float | None, float | None]


class RunScores(ABC):
    """A run's scores in each metric set: its score rows, the same scores as a mapping, and their
    intervals.  Two sources: a parsed results file (:class:`ParsedScores`, everything computed
    once) and a row of the contents table (the cold start's, which computes what the ranking
    does not need only when a page asks for it).  Equal when they hold the same scores."""

    __slots__ = ()

    @abstractmethod
    def rows(self, name: MetricSet) -> tuple[_ScoreRow, ...]:
        """One row per known task × prompt of set ``name``, with its interval."""

    @abstractmethod
    def prompt_scores(self, name: MetricSet) -> PromptScores:
        """task → prompt → score of set ``name``, read-only."""

    @abstractmethod
    def uncertainty(self, name: MetricSet) -> UncertaintySummary | None:
        """The intervals of set ``name``'s scores (None: it has none)."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunScores):
            return NotImplemented
        return all(
            self.rows(name) == other.rows(name)
            and self.prompt_scores(name) == other.prompt_scores(name)
            and self.uncertainty(name) == other.uncertainty(name)
            for name in MetricSet
        )

    __hash__ = None  # type: ignore[assignment]


class ParsedScores(RunScores):
    """Every metric set's rows, scores and intervals of one parsed results file, computed (and
    their warnings logged) once, when the file is parsed."""

    __slots__ = ("_by_set", "_uncertainty")

    def __init__(self, path: str, results: ResultsFile) -> None:
        self._by_set: dict[MetricSet, tuple[tuple[_ScoreRow, ...], PromptScores]] = {}
        self._uncertainty: dict[MetricSet, UncertaintySummary | None] = {}
        for name in MetricSet:
            # Each set's rows carry the intervals of its own scores, never another set's.
            self._uncertainty[name] = set_uncertainty(results, name)
            summary = self._uncertainty[name]
            intervals = summary.intervals if summary is not None else {}
            rows = tuple(_score_rows(path, set_tasks(results, name), name, intervals))
            self._by_set[name] = (rows, _prompt_scores(rows))

    def rows(self, name: MetricSet) -> tuple[_ScoreRow, ...]:
        return self._by_set[name][0]

    def prompt_scores(self, name: MetricSet) -> PromptScores:
        return self._by_set[name][1]

    def uncertainty(self, name: MetricSet) -> UncertaintySummary | None:
        return self._uncertainty[name]


@dataclass(frozen=True)
class RunRecord:
    """What the tables need of one usable results file: its ``model`` and ``run`` blocks and its scores.

    ``score_rows`` and ``prompt_scores`` (the same scores, as rows and as a mapping) are those
    of the metric set shown (``metric_set``), from ``scores``.  The parsed task blocks are not
    kept: on a large store they are hundreds of thousands of small objects that the garbage
    collector would walk again and again while the store loads.
    """

    model: ModelInfo
    run: EvalitaRunInfo
    #: Ranked by default (:attr:`ResultsFile.comparable`, the track's one rule).
    comparable: bool
    #: Every metric set's scores and intervals (lm-eval's intervals are the file's
    #: ``uncertainty`` block, another set's its block's: :attr:`uncertainty` shows the set's own).
    scores: RunScores = field(repr=False)
    #: The metric set ``score_rows`` and ``prompt_scores`` are in.
    metric_set: MetricSet = DEFAULT_METRIC_SET
    #: Metric sets the file holds no current scores of (their changed tasks are empty).
    sets_missing: frozenset[MetricSet] = frozenset()

    @classmethod
    def of(cls, path: str, results: ResultsFile) -> RunRecord:
        missing = frozenset(name for name in MetricSet if not has_current_block(results, name))
        return cls(
            results.model,
            results.run,
            results.comparable,
            ParsedScores(path, results),
            DEFAULT_METRIC_SET,
            missing,
        )

    def for_metric_set(self, name: MetricSet | str) -> RunRecord:
        """The same run with its scores (and their intervals) in metric set ``name``."""
        name = MetricSet(name)
        return self if name is self.metric_set else replace(self, metric_set=name)

    @property
    def score_rows(self) -> tuple[_ScoreRow, ...]:
        return self.scores.rows(self.metric_set)

    @property
    def prompt_scores(self) -> PromptScores:
        return self.scores.prompt_scores(self.metric_set)

    @property
    def uncertainty(self) -> UncertaintySummary | None:
        """The intervals of the scores shown: those of the set shown (None: it has none)."""
        return self.scores.uncertainty(self.metric_set)

    @property
    def set_uncertainty(self) -> Mapping[MetricSet, UncertaintySummary | None]:
        """Per metric set, the intervals of its scores and the mean CPS's resampled values (None:
        no per-item data, or a block computed without them)."""
        return MappingProxyType({name: self.scores.uncertainty(name) for name in MetricSet})

    @property
    def key(self) -> RunKey:
        return (self.model.id, self.model.revision, self.model.precision, self.run.num_fewshot)


@dataclass(frozen=True)
class LoadedResults:
    """What a results store holds, as tidy frames (scores on the 0–1 scale).

    ``scores`` and ``prompt_scores`` are two views of the kept ``records``, each built
    once, on first use (a cold ranking needs only the mapping, not the 90k-row frame).
    """

    #: One row per run kept: ``RUN_COLUMNS``.
    runs: pd.DataFrame
    #: Files that could not be used, each naming its path and the reason.
    problems: list[MalformedFileError]
    #: The run kept for each row of ``runs``, in the same order, with its scores.
    records: tuple[RunRecord, ...]
    #: Older files of a run that a newer file replaced.
    superseded: tuple[str, ...] = ()

    @cached_property
    def scores(self) -> pd.DataFrame:
        """One row per run × task × prompt: ``SCORE_COLUMNS``; ``score`` is NaN for the paper's N/A."""
        return _scores_frame(self.records)

    @cached_property
    def prompt_scores(self) -> Mapping[RunKey, PromptScores]:
        """run → task → prompt → score (``None`` for N/A), read-only: what the tables look scores up in."""
        return MappingProxyType({record.key: record.prompt_scores for record in self.records})

    @cached_property
    def uncertainty(self) -> Mapping[RunKey, UncertaintySummary | None]:
        """run → its ``uncertainty`` block (``None``: no per-item data, no interval), read-only."""
        return MappingProxyType({record.key: record.uncertainty for record in self.records})

    @cached_property
    def by_key(self) -> Mapping[RunKey, RunRecord]:
        """run → its kept record (one dict for the whole snapshot: a page looks runs up by key)."""
        return MappingProxyType({record.key: record for record in self.records})

    @property
    def metric_set(self) -> MetricSet:
        """The metric set every score here is in (that of the records; lm-eval for an empty store)."""
        return self.records[0].metric_set if self.records else DEFAULT_METRIC_SET

    def for_metric_set(self, name: MetricSet | str) -> LoadedResults:
        """The same runs with their scores in metric set ``name`` (one scoring path for every set)."""
        if MetricSet(name) is self.metric_set:
            return self
        return replace(self, records=tuple(record.for_metric_set(name) for record in self.records))

    def missing_in(self, name: MetricSet | str) -> tuple[RunKey, ...]:
        """The runs (in ``runs`` order) that hold no current scores of metric set ``name``."""
        return tuple(record.key for record in self.records if MetricSet(name) in record.sets_missing)


def load_results(storage: Storage, cache: ResultsCache | None = None) -> LoadedResults:
    """Every usable Evalita results file in ``storage``; one per (model, revision, precision, num_fewshot).

    The newest comparable file of a run wins; a run with no comparable file keeps its newest.

    Malformed files and files of an unknown schema or track are logged as warnings naming
    the file and listed in ``problems``; they never stop the others from loading.
    """
    return evalita_results(read_results_store(storage, cache))


def evalita_results(store: StoreResults) -> LoadedResults:
    """The Evalita view of a store already read (so that the store is listed once for every track).

    ``problems`` holds the Evalita files that do not parse and the files whose envelope
    could not be read (their track is unknown); another track's problems are its own.
    """
    parsed: dict[str, RunRecord] = dict(store.records.get(TRACK, {}))
    problems = sorted((*store.envelope_problems, *store.problems_of(TRACK)), key=lambda p: p.path)
    return loaded_from_records(parsed, problems)


def loaded_from_records(parsed: Mapping[str, RunRecord], problems: list[MalformedFileError]) -> LoadedResults:
    """Keep one file per run (:func:`_newest_per_run`) and build the run table."""
    newest, superseded = _newest_per_run(dict(parsed))
    runs = pd.DataFrame(
        [_run_row(path, record) for path, record in newest.items()], columns=list(RUN_COLUMNS)
    )
    return LoadedResults(
        runs=runs, problems=problems, records=tuple(newest.values()), superseded=tuple(superseded)
    )


def _scores_frame(records: Iterable[RunRecord]) -> pd.DataFrame:
    """``SCORE_COLUMNS`` of every kept run, built column by column (one row per run × task × prompt)."""
    columns: dict[str, list[object]] = {name: [] for name in SCORE_COLUMNS}
    for record in records:
        count = len(record.score_rows)
        if not count:
            continue
        for name, value in zip(RUN_KEY, record.key, strict=True):
            columns[name].extend([value] * count)
        transposed = zip(
            *record.score_rows, strict=True
        )  # (tasks, prompts, scores, stderrs, ns, lows, highs)
        for name, values in zip(SCORE_COLUMNS[len(RUN_KEY) :], transposed, strict=True):
            columns[name].extend(values)
    # Without any row, pandas would infer float columns from empty lists: keep them untyped.
    if not columns["task"]:
        frame = pd.DataFrame([], columns=list(SCORE_COLUMNS))
        return frame.astype({"score": float, "stderr": float, "low": float, "high": float})
    # The text columns as categoricals (issue 32): a few thousand distinct values over 880,000
    # rows at 10,000 models, so one small code a row instead of a string a row (≈ 95 MB less);
    # the views filter and read them as they read strings (the same values, in the same order).
    for name in _CATEGORICAL_SCORE_COLUMNS:
        columns[name] = pd.Categorical(columns[name])  # type: ignore[assignment]
    frame = pd.DataFrame(columns, columns=list(SCORE_COLUMNS))
    return frame.astype({"score": float, "stderr": float, "low": float, "high": float})


#: The scores frame's text columns, kept as categoricals (:func:`_scores_frame`).
_CATEGORICAL_SCORE_COLUMNS = ("model", "revision", "precision", "task", "prompt")


def _preference(path: str, record: RunRecord) -> tuple[bool, str, str]:
    """How a file ranks among its run's files: comparable first, then the newest, then the name."""
    return (record.comparable, record.run.finished_at or "", path)


def _newest_per_run(parsed: dict[str, RunRecord]) -> tuple[dict[str, RunRecord], list[str]]:
    """Keep one file per run: the newest comparable one if the run has any, else the newest.

    A later ``--limit`` or sample-data smoke run must not hide the official full run from
    the ranking; the file name breaks ties.  The files not kept are returned as superseded.
    """
    best: dict[RunKey, tuple[str, RunRecord]] = {}
    superseded: list[str] = []
    for path, record in parsed.items():
        key = record.key
        current = best.get(key)
        if current is None:
            best[key] = (path, record)
            continue
        if _preference(path, record) > _preference(*current):
            superseded.append(current[0])
            best[key] = (path, record)
        else:
            superseded.append(path)
    return {path: record for path, record in best.values()}, sorted(superseded)


def _run_row(path: str, record: RunRecord) -> dict[str, object]:
    model, run = record.model, record.run
    return {
        "model": model.id,
        "revision": model.revision,
        "precision": model.precision,
        "num_fewshot": run.num_fewshot,
        "params_b": model.params_b,
        "model_type": model.model_type,
        "license": model.license,
        "architecture": model.architecture,
        **{column: getattr(run, column) for column in RUN_INFO_COLUMNS},
        "comparable": record.comparable,
        "results_path": path,
        "details_path": run.details_path,
    }


def _score_rows(
    path: str,
    tasks: Mapping[str, TaskResult],
    metric_set: MetricSet,
    intervals: Mapping[str, tuple[float, float]],
) -> list[_ScoreRow]:
    """One row per known task × known prompt; unknown ids or a foreign metric are reported and left out."""
    rows: list[_ScoreRow] = []
    for task_id, task_result in tasks.items():
        # Another set shares lm-eval's task results where it does not change them: warn once.
        warn = metric_set is DEFAULT_METRIC_SET or task_id in METRIC_SETS[metric_set].metrics
        task = TASKS.get(task_id)
        if task is None:
            if warn:
                logger.warning(
                    "%s: ignoring unknown task %r (the suite has %s)", path, task_id, ", ".join(TASKS)
                )
            continue
        expected = expected_metric(task, metric_set)
        if task_result.metric != expected:
            if not warn:
                continue
            logger.warning(
                "%s: ignoring task %r scored with %r; the suite's %s set ranks it by %r",
                path,
                task_id,
                task_result.metric,
                metric_set,
                expected,
            )
            continue
        for prompt_id, prompt in task_result.prompts.items():
            if prompt_id not in task.prompt_ids:
                if warn:
                    logger.warning("%s: ignoring unknown prompt %r of task %r", path, prompt_id, task_id)
                continue
            low, high = intervals.get(prompt_figure(task_id, prompt_id), (None, None))
            rows.append((task_id, prompt_id, prompt.score, prompt.stderr, prompt.n, low, high))
    return rows


def _prompt_scores(rows: Iterable[_ScoreRow]) -> PromptScores:
    by_task: dict[str, dict[str, float | None]] = {}
    for task_id, prompt_id, score, *_ in rows:
        by_task.setdefault(task_id, {})[prompt_id] = score
    return MappingProxyType({task_id: MappingProxyType(prompts) for task_id, prompts in by_task.items()})


def run_info(loaded: LoadedResults, key: RunKey) -> EvalitaRunInfo | None:
    """The ``run`` block of the results file kept for ``key`` (what the run actually used), if any."""
    record = loaded.by_key.get(key)
    return None if record is None else record.run


def read_details(storage: Storage, folder: str, task_id: str, prompt_id: str) -> list[DetailRecord]:
    """The per-sample records of one (task, prompt) of a run, from ``<folder>/<task>_<prompt>.jsonl``.

    Read through the store's safe reader (:func:`leaderboard.tracks.evalita.schema.parse_details`, size-capped).
    Raises :class:`~eval_queue.errors.NotFoundError` when the run kept no such file (a storage
    error for a store that cannot be read) and :class:`~eval_queue.errors.MalformedFileError`
    naming the file and line when a line does not parse: a half-shown run would mislead.
    """
    path = f"{folder}/{details_file_name(task_id, prompt_id)}"
    return parse_details(storage.read(path, max_bytes=DETAILS_FILE_MAX_BYTES), path)
