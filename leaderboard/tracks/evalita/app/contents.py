"""An Evalita run's record built from its row of the contents table (the app's cold start).

:func:`record_of_rows` returns the same :class:`~leaderboard.tracks.evalita.app.results.RunRecord`
as :func:`~leaderboard.tracks.evalita.app.results.parse_results_file` does from the results
file: the model block from the row's columns, the run block from ``run_json``, the prompt
scores from ``prompt_scores`` (the row keeps exactly the scores the parser keeps:
:func:`leaderboard.tracks.evalita.contents.known_prompt_scores`), ``comparable`` as the
results type decided it when the row was written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from leaderboard.core.contents import run_block
from leaderboard.core.schema import ModelInfo
from leaderboard.tracks.evalita.app.results import RunRecord, _prompt_scores
from leaderboard.tracks.evalita.schema import EvalitaRunInfo


def record_of_rows(rows: Sequence[Mapping[str, Any]]) -> RunRecord:
    """The record of one Evalita results file from its row; ``ValueError`` if the row is unusable."""
    if len(rows) != 1:
        raise ValueError(f"an Evalita results file has one row in the contents table, not {len(rows)}")
    [row] = rows
    model = ModelInfo(
        id=row["model"],
        revision=row["revision"],
        precision=row["precision"],
        params_b=row.get("params_b"),
        model_type=row.get("model_type"),
        license=row.get("license"),
        architecture=row.get("architecture"),
    )
    run = EvalitaRunInfo.model_validate(run_block(row))
    scores = tuple(
        (p["task"], p["prompt"], p["score"], p["stderr"], p["n"]) for p in row.get("prompt_scores") or ()
    )
    return RunRecord(model, run, scores, _prompt_scores(scores), bool(row["comparable"]))
