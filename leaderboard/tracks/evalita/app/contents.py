"""Evalita runs' records built from the contents table (the app's cold start).

:func:`records_of_table` returns, for each Evalita results file the table holds, the same
:class:`~leaderboard.tracks.evalita.app.records.RunRecord` as
:func:`~leaderboard.tracks.evalita.app.results.parse_results_file` makes of the file: the
model block from the row's columns, the run block from ``run_json``, the prompt scores from
``prompt_scores`` (the row keeps exactly the scores the parser keeps:
:func:`leaderboard.tracks.evalita.contents.known_prompt_scores`), the other metric sets and the
intervals from ``record_json``; the record is then made by the very function that makes it of
a file (:meth:`RunRecord.of`).  A row without ``record_json`` (a table written before it had
one) is left out: its file is read instead, so no interval or metric set is lost.  It reads only
the columns it needs, column by column (a large table is thousands of rows).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import TypeAdapter, ValidationError

from leaderboard.core.schema import ModelInfo
from leaderboard.tracks.evalita.app.records import RunRecord
from leaderboard.tracks.evalita.definition import TASKS, TRACK
from leaderboard.tracks.evalita.schema import EvalitaRunInfo, ResultsFile, TaskResult

logger = logging.getLogger(__name__)

_MODEL_COLUMNS = ("model", "revision", "precision", "params_b", "model_type", "license", "architecture")
_COLUMNS = ("results_path", "results_version", "comparable", "run_json", "record_json", *_MODEL_COLUMNS)
_PROMPT_FIELDS = ("task", "prompt", "score", "stderr", "n")


def records_of_table(table: pa.Table) -> dict[str, tuple[str, RunRecord]]:
    """``{results path: (store version, record)}`` of the table's Evalita rows; an unusable row is
    logged and left out (its file is then read from the store)."""
    mine = table.filter(pc.equal(table.column("track"), TRACK))
    # The intervals' JSON (tens of KB a row) is read row by row, not as one list of strings: at
    # 20,000 rows that list alone would hold hundreds of MB while the records are built.
    columns = {name: mine.column(name).to_pylist() for name in _COLUMNS if name != "record_json"}
    record_json = mine.column("record_json")
    prompts = mine.column("prompt_scores").combine_chunks()
    offsets = prompts.offsets.to_pylist()
    fields = [prompts.values.field(name).to_pylist() for name in _PROMPT_FIELDS]
    flat = list(zip(*fields, strict=True))
    records = {}
    names: dict[str, str] = {}
    for i, path in enumerate(columns["results_path"]):
        blocks = record_json[i].as_py()
        if blocks is None:
            logger.info("%s: its row of the contents table predates record_json; reading the file", path)
            continue
        try:
            model = ModelInfo(**{("id" if c == "model" else c): columns[c][i] for c in _MODEL_COLUMNS})
            run = EvalitaRunInfo.model_validate_json(columns["run_json"][i])
            tasks = _tasks(flat[offsets[i] : offsets[i + 1]])
            results = ResultsFile(
                model=model, run=run, tasks=tasks, **_shared_names(json.loads(blocks), names)
            )
        except (ValidationError, TypeError, ValueError) as exc:
            logger.warning("%s: its row of the contents table is unusable (%s); reading the file", path, exc)
            continue
        records[path] = (columns["results_version"][i], RunRecord.of(path, results))
    return records


def _shared_names(blocks: Any, names: dict[str, str]) -> Any:
    """``blocks`` with every ``intervals`` mapping's figure names taken from ``names`` (one string
    per name for all runs, not fifty-odd new ones a run: at 20,000 runs about 80 MB)."""
    if isinstance(blocks, dict):
        for key, value in blocks.items():
            if key == "intervals" and isinstance(value, dict):
                blocks[key] = {names.setdefault(name, name): pair for name, pair in value.items()}
            else:
                _shared_names(value, names)
    return blocks


#: The columns :func:`records_of_table` reads (the cold start reads no other: see
#: :func:`leaderboard.store_contents.seed_from_contents`).
records_of_table.columns = ("track", *_COLUMNS, "prompt_scores")  # type: ignore[attr-defined]


#: The ``tasks`` block validated in one call (a run's fifty-odd prompt scores one by one cost
#: ten times as much: the cold start of 20,000 runs is mostly this).
_TASKS = TypeAdapter(dict[str, TaskResult])


def _tasks(rows: list[tuple[str, str, float | None, float | None, int | None]]) -> dict[str, TaskResult]:
    """The ``tasks`` block the row's prompt scores came from (each a suite task with its metric)."""
    prompts: dict[str, dict[str, dict[str, object]]] = {}
    for task_id, prompt_id, score, stderr, n in rows:
        prompts.setdefault(task_id, {})[prompt_id] = {"score": score, "stderr": stderr, "n": n}
    return _TASKS.validate_python(
        {task_id: {"metric": TASKS[task_id].metric, "prompts": p} for task_id, p in prompts.items()}
    )
