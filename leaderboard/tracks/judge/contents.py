"""The judge track's part of the contents table (:mod:`leaderboard.core.contents`).

One row per judge run (``setting``: its mode).  ``meta`` — the judge against human scores,
Table 1's figures per criterion and pooled (``overall``): Spearman ``<c>_rho`` and its
``<c>_p``, ``<c>_mae``, ``<c>_bias``, ``<c>_unparsed`` (rate), ``<c>_n`` (items scored).
``generations`` — the judge scoring another run's SUM outputs: ``<c>_mean`` score (1–5) and
``<c>_unparsed``, with the judged run's results path (``judge_target``).  A figure that
cannot be computed is null.
"""

from __future__ import annotations

import pyarrow as pa

from leaderboard.core.contents import Row, TrackContents, column
from leaderboard.core.schema import ResultsEnvelope
from leaderboard.tracks.judge.definition import Criterion
from leaderboard.tracks.judge.schema import GenerationsBody, JudgeResultsFile, MetaBody

#: The criteria and the pooled figures, as column prefixes.
SCOPES: tuple[str, ...] = (*(c.value for c in Criterion), "overall")
#: (column suffix, type, what it is, the field of a meta StatBlock or a generations MeanBlock).
FIGURES: tuple[tuple[str, pa.DataType, str, str | None, str | None], ...] = (
    ("rho", pa.float64(), "Spearman ρ with the human scores (meta)", "rho", None),
    ("p", pa.float64(), "p-value of ρ (meta)", "p", None),
    ("mae", pa.float64(), "mean absolute error against the human scores (meta)", "mae", None),
    ("bias", pa.float64(), "mean judge − human score (meta)", "bias", None),
    ("mean", pa.float64(), "mean score given, 1–5 (generations)", None, "mean"),
    ("unparsed", pa.float64(), "share of answers with no readable score", "unparsed_rate", "unparsed_rate"),
    ("n", pa.int64(), "items scored", "n_scored", "n_scored"),
)


def _columns() -> tuple[pa.Field, ...]:
    fields = [
        column(f"{scope}_{suffix}", kind, f"judge: {scope}, {what}")
        for scope in SCOPES
        for suffix, kind, what, _, _ in FIGURES
    ]
    fields.append(column("judge_target", pa.string(), "judge: the results file whose answers were judged"))
    return tuple(fields)


def rows(results: ResultsEnvelope) -> list[Row]:
    """The one row of a judge run."""
    assert isinstance(results, JudgeResultsFile)
    body = results.judge
    row: Row = {"setting": body.mode.value}
    meta = isinstance(body, MetaBody)
    blocks = {**{c.value: b for c, b in body.criteria.items()}, "overall": body.overall}
    for scope, block in blocks.items():
        for suffix, _, _, meta_field, generations_field in FIGURES:
            source = meta_field if meta else generations_field
            row[f"{scope}_{suffix}"] = getattr(block, source) if source else None
    if isinstance(body, GenerationsBody):
        row["judge_target"] = body.target.results_path
    return [row]


CONTENTS = TrackContents(columns=_columns(), rows=rows)
