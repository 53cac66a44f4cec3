"""Evalita runs' records built from the contents table (the app's cold start).

:func:`records_of_table` returns, for each Evalita results file the table holds, the same
:class:`~leaderboard.tracks.evalita.app.results.RunRecord` as
:func:`~leaderboard.tracks.evalita.app.results.parse_results_file` makes of the file: the
model block from the row's columns, the run block from ``run_json``, the prompt scores from
``prompt_scores`` (the row keeps exactly the scores the parser keeps:
:func:`leaderboard.tracks.evalita.contents.known_prompt_scores`), ``comparable`` as the
results type decided it when the row was written.  It reads only the columns it needs,
column by column (a large table is thousands of rows).
"""

from __future__ import annotations

import logging

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import ValidationError

from leaderboard.core.schema import ModelInfo
from leaderboard.tracks.evalita.app.results import RunRecord, _prompt_scores
from leaderboard.tracks.evalita.definition import TRACK
from leaderboard.tracks.evalita.schema import EvalitaRunInfo

logger = logging.getLogger(__name__)

_MODEL_COLUMNS = ("model", "revision", "precision", "params_b", "model_type", "license", "architecture")
_COLUMNS = ("results_path", "results_version", "comparable", "run_json", *_MODEL_COLUMNS)
_PROMPT_FIELDS = ("task", "prompt", "score", "stderr", "n")


def records_of_table(table: pa.Table) -> dict[str, tuple[str, RunRecord]]:
    """``{results path: (store version, record)}`` of the table's Evalita rows; an unusable row is
    logged and left out (its file is then read from the store)."""
    mine = table.filter(pc.equal(table.column("track"), TRACK))
    columns = {name: mine.column(name).to_pylist() for name in _COLUMNS}
    prompts = mine.column("prompt_scores").combine_chunks()
    offsets = prompts.offsets.to_pylist()
    fields = [prompts.values.field(name).to_pylist() for name in _PROMPT_FIELDS]
    flat = list(zip(*fields, strict=True))
    records = {}
    for i, path in enumerate(columns["results_path"]):
        try:
            model = ModelInfo(**{("id" if c == "model" else c): columns[c][i] for c in _MODEL_COLUMNS})
            run = EvalitaRunInfo.model_validate_json(columns["run_json"][i])
        except (ValidationError, TypeError) as exc:
            logger.warning("%s: its row of the contents table is unusable (%s); reading the file", path, exc)
            continue
        scores = tuple(flat[offsets[i] : offsets[i + 1]])
        record = RunRecord(model, run, scores, _prompt_scores(scores), bool(columns["comparable"][i]))
        records[path] = (columns["results_version"][i], record)
    return records
