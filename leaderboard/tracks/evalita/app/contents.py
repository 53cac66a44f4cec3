"""Evalita runs' records built from the contents table (the app's cold start), column by column.

:func:`records_of_table` returns, for each Evalita results file the table holds, a
:class:`~leaderboard.tracks.evalita.app.records.RunRecord` equal to the one
:func:`~leaderboard.tracks.evalita.app.results.parse_results_file` makes of the file
(``tests/contents/test_cold_start.py`` pins it), built for a cold start of 20,000 runs:

* what the first ranking reads is built at once, from the columns: the model block (the row's
  columns), the run block (``run_json``), the lm-eval prompt scores as a mapping
  (``prompt_scores``: the row keeps exactly the scores the parser keeps,
  :func:`leaderboard.tracks.evalita.contents.known_prompt_scores`) and the ``uncertainty``
  block of ``record_json``, kept compactly (:mod:`.compact`: its draws as float32 bytes);
* the rest — the score rows with their stderr, items and intervals (the task and model pages),
  another metric set's scores and intervals — is computed when a page asks for it
  (:class:`TableScores`), from the table's prompt scores (kept as Arrow arrays) and the file's
  ``metric_sets`` blocks (kept as their JSON text, only in rows that have them), by the very
  function that computes it for a file (:class:`~leaderboard.tracks.evalita.app.records.ParsedScores`).

A row without ``record_json`` (a table written before it had one) is left out: its file is read
instead, so no interval or metric set is lost; so is a row that does not validate (logged).  It
reads only the columns it needs (:data:`COLUMNS`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from functools import lru_cache
from types import MappingProxyType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray
from pydantic import BaseModel, TypeAdapter, ValidationError

from leaderboard.core.schema import ModelInfo
from leaderboard.core.summary import UncertaintySummary
from leaderboard.tracks.evalita.app.compact import BlockBatch
from leaderboard.tracks.evalita.app.records import (
    ParsedScores,
    PromptScores,
    RunRecord,
    RunScores,
)
from leaderboard.tracks.evalita.contents import PROMPT_SCORE
from leaderboard.tracks.evalita.definition import TASKS, TRACK
from leaderboard.tracks.evalita.metric_sets import DEFAULT_METRIC_SET, MetricSet, has_current_version
from leaderboard.tracks.evalita.schema import EvalitaRunInfo, ResultsFile, TaskResult
from leaderboard.tracks.evalita.uncertainty import MEAN_CPS_FIGURE, MEAN_CPS_TIE_FIGURE, prompt_figure

try:  # gradio's JSON library (installed with the app): twice as fast on the blocks' long draws strings
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - the standard library's, the same values
    from json import loads as _loads

logger = logging.getLogger(__name__)

#: The model block's columns (``model`` is its ``id``).
_MODEL_COLUMNS = ("model", "revision", "precision", "params_b", "model_type", "license", "architecture")
#: The fields of one ``prompt_scores`` entry (task, prompt, score, stderr, n: a score row's order),
#: as the table's writer names them.
_PROMPT_FIELDS = tuple(field.name for field in PROMPT_SCORE)
_ID_FIELDS, _NUMBER_FIELDS = _PROMPT_FIELDS[:2], _PROMPT_FIELDS[2:]
#: The columns :func:`records_of_table` reads (the cold start reads no other: see
#: :func:`leaderboard.store_contents.seed_from_contents`).
COLUMNS: tuple[str, ...] = (
    "track",
    "results_path",
    "results_version",
    "comparable",
    "run_json",
    "record_json",
    *_MODEL_COLUMNS,
    "prompt_scores",
    "draws",
)
#: The draws the ranking reads (its tiers), once per snapshot and setting.
RANKING_DRAWS = frozenset({MEAN_CPS_FIGURE, MEAN_CPS_TIE_FIGURE})
#: One prompt score of a row: task, prompt, score, stderr, n.
_PromptRow = tuple[str, str, float | None, float | None, int | None]


class _PromptColumn:
    """The table's ``prompt_scores`` of the Evalita rows, as flat Arrow arrays (a few bytes a
    prompt, not a Python tuple), with each task and prompt id one shared string."""

    def __init__(self, prompts: pa.ListArray) -> None:
        self.offsets: list[int] = prompts.offsets.to_pylist()
        values = prompts.values
        (self._task_codes, tasks), (_, prompt_ids) = (_shared_strings(values.field(n)) for n in _ID_FIELDS)
        self._ids = (tasks, prompt_ids)
        self._numbers = [values.field(name) for name in _NUMBER_FIELDS]

    def rows(self, i: int) -> list[_PromptRow]:
        """Row ``i``'s prompt scores (task, prompt, score, stderr, n), in the file's order."""
        start, end = self.offsets[i], self.offsets[i + 1]
        numbers = [array.slice(start, end - start).to_pylist() for array in self._numbers]
        return list(zip(self._ids[0][start:end], self._ids[1][start:end], *numbers, strict=True))

    def mappings(self) -> list[PromptScores]:
        """Each row's task → prompt → score, read-only (what the parser's record holds)."""
        tasks, prompt_ids = self._ids
        scores = self._numbers[0].to_pylist()
        offsets = np.asarray(self.offsets)
        # A run's prompts come task by task: one dict per stretch of one task within one row.
        starts = np.zeros(len(tasks), dtype=bool)
        starts[1:] = self._task_codes[1:] != self._task_codes[:-1]
        starts[offsets[:-1][offsets[:-1] < len(tasks)]] = True
        bounds = [*np.flatnonzero(starts).tolist(), len(tasks)]
        owners = (np.searchsorted(offsets, bounds[:-1], side="right") - 1).tolist()
        by_row: list[dict[str, PromptScores]] = [{} for _ in range(len(offsets) - 1)]
        for owner, start, end in zip(owners, bounds[:-1], bounds[1:], strict=True):
            by_row[owner][tasks[start]] = MappingProxyType(
                dict(zip(prompt_ids[start:end], scores[start:end], strict=True))
            )
        return [MappingProxyType(row) for row in by_row]


def _shared_strings(array: pa.Array) -> tuple[NDArray[np.int32], list[str]]:
    """The strings of ``array`` as codes and as Python objects, one object per distinct value (a
    million prompt ids are a few dozen strings)."""
    encoded = pc.dictionary_encode(array)
    names = encoded.dictionary.to_pylist()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    return codes, [names[i] for i in codes]


class TableScores(RunScores):
    """A run's scores from its row of the contents table (module docstring): the lm-eval scores
    and intervals at once, the rest when asked (not kept: the views keep what they build)."""

    __slots__ = ("_blocks", "_metric_sets", "_path", "_prompts", "_row", "_scores", "_uncertainty")

    def __init__(
        self,
        path: str,
        row: int,
        prompts: _PromptColumn,
        scores: PromptScores,
        uncertainty: UncertaintySummary | None,
        metric_sets: str | None,
        blocks: tuple[ModelInfo, EvalitaRunInfo],
    ) -> None:
        self._path, self._row, self._prompts = path, row, prompts
        self._scores, self._uncertainty, self._metric_sets = scores, uncertainty, metric_sets
        self._blocks = blocks

    def rows(self, name: MetricSet) -> tuple[Any, ...]:
        if name is not DEFAULT_METRIC_SET:
            return self._parsed().rows(name)
        intervals = self._uncertainty.intervals if self._uncertainty is not None else {}
        return tuple(
            (task, prompt, score, stderr, n, *intervals.get(prompt_figure(task, prompt), (None, None)))
            for task, prompt, score, stderr, n in self._prompts.rows(self._row)
        )

    def prompt_scores(self, name: MetricSet) -> PromptScores:
        return self._scores if name is DEFAULT_METRIC_SET else self._parsed().prompt_scores(name)

    def uncertainty(self, name: MetricSet) -> UncertaintySummary | None:
        if name is DEFAULT_METRIC_SET:
            return self._uncertainty
        # Another set's intervals are its block's: a row without blocks has none.
        return None if self._metric_sets is None else self._parsed().uncertainty(name)

    def _parsed(self) -> ParsedScores:
        """Every set's scores as the parser computes them of the file this row was built from."""
        model, run = self._blocks
        results = ResultsFile(
            model=model,
            run=run,
            tasks=_tasks(self._prompts.rows(self._row)),
            uncertainty=self._uncertainty,
            metric_sets=[] if self._metric_sets is None else _loads(self._metric_sets),
        )
        return ParsedScores(self._path, results)


def records_of_table(
    table: pa.Table, deferred: Callable[[], pa.Table] | None = None
) -> dict[str, tuple[str, RunRecord]]:
    """``{results path: (store version, record)}`` of the table's Evalita rows; an unusable row is
    logged and left out (its file is then read from the store).

    ``deferred``: the ``draws`` column, when ``table`` lacks it, as a table of the same rows that
    this function waits for only once the rest is built (the cold start decodes it meanwhile)."""
    # The Evalita rows by index (no filtered copy of the table: its record_json is most of a GB).
    evalita = pc.fill_null(pc.equal(table.column("track"), TRACK), False)
    mine = pa.array(np.flatnonzero(evalita.to_numpy(zero_copy_only=False)))
    every = len(mine) == len(table)  # a store of one track: no copy of any column

    def picked(name: str, source: pa.Table = table) -> pa.ChunkedArray:
        # ``source``: the table, or the deferred columns' (the same rows, in the same order).
        return source.column(name) if every else source.column(name).take(mine)

    columns = {name: picked(name).to_pylist() for name in COLUMNS if name not in _ARROW_ONLY}
    prompts = _PromptColumn(_one_array(picked("prompt_scores")))
    # The blocks' JSON (tens of KB a row in a version-1 table) is read a slice of rows at a time,
    # not as one list of strings (at 20,000 rows that list alone would hold about a GB while the
    # records are built), nor row by row (an Arrow scalar a row costs a second at 20,000).
    record_json = _slices(picked("record_json"))
    # Every draw set mapped from a temporary file (issue 32's server memory: 480 MB at 20,000
    # runs, the mean CPS's a third): its pages are the page cache's, resident only while a view
    # reads them — the ranking's tiers (:data:`RANKING_DRAWS`) once per snapshot and setting, the
    # custom average each task's — and handed back after (``compact.release_spilled``).
    batch = BlockBatch(spill=lambda figure: True)
    # The draws as bytes (a table written since the column exists; null in an older row, whose
    # draws are in its record_json), asked for only when a row's record_json holds draws too,
    # or once every row is built.
    draws = _DrawsColumn(
        table if deferred is None or "draws" in table.column_names else deferred,
        lambda source, name: picked(name, source),
    )
    parts: dict[int, _RowParts] = {}
    fields_sets: dict[frozenset[str], set[str]] = {}
    for i, (path, text) in enumerate(zip(columns["results_path"], record_json, strict=True)):
        if text is None:
            logger.info("%s: its row of the contents table predates record_json; reading the file", path)
            continue
        try:
            parts[i] = _row_parts(i, columns, text, batch, draws)
            for block in parts[i][:2]:
                _share_fields_set(block, fields_sets)
        except (ValidationError, TypeError, ValueError, KeyError, AttributeError) as exc:
            _unusable(path, exc)
    if draws.column() is not None:
        columnar = draws.columnar()
        _add_draws_column(draws.column(), {i: part[2] for i, part in parts.items() if columnar[i]}, batch)
    # The intervals and draws of every row at once (checked together), then the scores.
    summaries = batch.build()
    scores = prompts.mappings()
    records = {}
    for i, (model, run, slot, metric_sets, missing) in parts.items():
        path = columns["results_path"][i]
        uncertainty = None if slot is None else summaries[slot]
        if isinstance(uncertainty, ValueError):
            _unusable(path, uncertainty)
            continue
        table_scores = TableScores(path, i, prompts, scores[i], uncertainty, metric_sets, (model, run))
        # The file's rule, from its run block (as the parser does), not the column a table once wrote.
        record = RunRecord(model, run, run.comparable, table_scores, DEFAULT_METRIC_SET, missing)
        records[path] = (columns["results_version"][i], record)
    return records


class _DrawsColumn:
    """The Evalita rows' ``draws`` column (None when the table has none), taken from ``source``
    on first use: the table, or a call that returns it (decoded meanwhile)."""

    def __init__(
        self, source: pa.Table | Callable[[], pa.Table], picked: Callable[[pa.Table, str], pa.ChunkedArray]
    ) -> None:
        self._source, self._picked = source, picked
        self._column: pa.ListArray | None = None
        self._columnar: NDArray[np.bool_] | None = None
        self._taken = False

    def column(self) -> pa.ListArray | None:
        if not self._taken:
            table = self._source if isinstance(self._source, pa.Table) else self._source()
            if "draws" in table.column_names:
                self._column = _one_array(self._picked(table, "draws"))
                self._columnar = ~np.asarray(self._column.is_null(), dtype=bool)
            self._taken, self._source = True, None  # type: ignore[assignment]
        return self._column

    def columnar(self) -> NDArray[np.bool_]:
        """Which rows have their draws in the column (none when there is no column)."""
        column = self.column()
        return np.zeros(0, dtype=bool) if column is None else self._columnar  # type: ignore[return-value]

    def has(self, i: int) -> bool:
        """Whether row ``i``'s draws are in the column."""
        return self.column() is not None and bool(self.columnar()[i])


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    """``column`` as one array: its only chunk as it is (Arrow's ``combine_chunks`` copies even
    one chunk: half a GB of draws), or its chunks joined."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _slices(column: pa.ChunkedArray, rows: int = 512) -> Iterator[Any]:
    """``column``'s values in order, converted to Python ``rows`` at a time."""
    for start in range(0, len(column), rows):
        yield from column.slice(start, rows).to_pylist()


def _add_draws_column(draws: pa.ListArray, slots: dict[int, int | None], batch: BlockBatch) -> None:
    """The ``draws`` of the rows in ``slots`` (row → its uncertainty block's slot in ``batch``) into
    ``batch``, column by column (no text decoded).  A row whose record_json has no uncertainty
    block has no slot: its draws are left out, as its block is."""
    owner_of_row = np.full(len(draws), -1, dtype=np.int64)
    for i, slot in slots.items():
        if slot is not None:
            owner_of_row[i] = slot
    offsets = np.asarray(draws.offsets)
    # Each set's row (the list offsets of a null row are equal: it owns none).
    row_of_set = np.repeat(np.arange(len(draws)), np.diff(offsets))
    first, last = int(offsets[0]), int(offsets[-1])
    sets = draws.values.slice(first, last - first)
    owners = owner_of_row[row_of_set]
    kept = np.flatnonzero(owners >= 0)
    if not len(kept):
        return
    if len(kept) < len(owners):  # a copy only when some rows are left out (most of a GB)
        sets, owners = sets.take(pa.array(kept, pa.int64())), owners[kept]
    batch.add_draws_column(
        owners,
        _distinct(sets.field("figure")),
        _distinct(sets.field("key")),
        sets.field("float32"),
    )


def _distinct(array: pa.Array) -> tuple[NDArray[np.int32], list[str]]:
    """``array``'s strings as codes into its distinct values."""
    encoded = pc.dictionary_encode(array)
    return encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary.to_pylist()


def _unusable(path: str, exc: Exception) -> None:
    logger.warning("%s: its row of the contents table is unusable (%s); reading the file", path, exc)


#: Columns read as Arrow arrays, not as one Python list.
_ARROW_ONLY = frozenset({"record_json", "prompt_scores", "draws"})
#: What one row gives before the batch is built: its model and run blocks, its uncertainty
#: block's slot in the batch (None: none), its metric_sets blocks as JSON (None: none), and the
#: metric sets it has no current block of.
_RowParts = tuple[ModelInfo, EvalitaRunInfo, int | None, str | None, frozenset[MetricSet]]


def _share_fields_set(block: BaseModel, shared: dict[frozenset[str], set[str]]) -> None:
    """Give ``block`` the one set of field names every block with the same names holds.

    Pydantic keeps a set of the names a model was given with each instance: 2.3 KB for a run
    block's 27 names, 46 MB over 20,000 runs, the same few sets over and over.  The app never
    assigns to a record's blocks (the set changes only on assignment) nor dumps them by it."""
    names = block.__pydantic_fields_set__
    kept = shared.setdefault(frozenset(names), names)
    if kept is not names:
        object.__setattr__(block, "__pydantic_fields_set__", kept)


def _row_parts(
    i: int, columns: dict[str, list[Any]], text: str, batch: BlockBatch, draws: _DrawsColumn
) -> _RowParts:
    model = ModelInfo(**{("id" if c == "model" else c): columns[c][i] for c in _MODEL_COLUMNS})
    run = EvalitaRunInfo.model_validate_json(columns["run_json"][i])
    blocks = _loads(text)
    if not isinstance(blocks, dict):
        raise TypeError("record_json is not a JSON object")
    block = blocks.get("uncertainty")
    if isinstance(block, dict) and "draws" in block and draws.has(i):
        block.pop("draws")  # the row's draws column holds them (:func:`_add_draws_column`)
    slot = None if block is None else batch.add(block)
    metric_sets = blocks.get("metric_sets") or None
    missing = _sets_missing(tuple((b["name"], b["version"]) for b in metric_sets or ()))
    kept = None if metric_sets is None else json.dumps(metric_sets, separators=(",", ":"), ensure_ascii=False)
    return model, run, slot, kept, missing


@lru_cache(maxsize=256)
def _sets_missing(versions: tuple[tuple[Any, Any], ...]) -> frozenset[MetricSet]:
    """The metric sets a file with these (name, version) blocks has no current block of (the
    same few combinations for thousands of rows: computed once each)."""
    return frozenset(name for name in MetricSet if not has_current_version(versions, name))


#: The columns :func:`records_of_table` reads (the cold start reads no other: see
#: :func:`leaderboard.store_contents.seed_from_contents`).
records_of_table.columns = COLUMNS  # type: ignore[attr-defined]
#: The columns :func:`records_of_table` can take later (``deferred``): the draws, most of the
#: table's bytes, decoded while the records are built from the rest.
records_of_table.deferred_columns = ("draws",)  # type: ignore[attr-defined]


#: The ``tasks`` block validated in one call (a run's fifty-odd prompt scores one by one cost
#: ten times as much).
_TASKS = TypeAdapter(dict[str, TaskResult])


def _tasks(rows: list[_PromptRow]) -> dict[str, TaskResult]:
    """The ``tasks`` block the row's prompt scores came from (each a suite task with its metric)."""
    prompts: dict[str, dict[str, dict[str, object]]] = {}
    for task_id, prompt_id, score, stderr, n in rows:
        prompts.setdefault(task_id, {})[prompt_id] = {"score": score, "stderr": stderr, "n": n}
    return _TASKS.validate_python(
        {task_id: {"metric": TASKS[task_id].metric, "prompts": p} for task_id, p in prompts.items()}
    )
