"""The judge track's part of the Every Eval Ever export (:mod:`leaderboard.eee`).

Figures: the contents table's, per criterion and pooled (``overall``) — measured against people
(``meta``): Spearman ρ (−1…1), its p-value, MAE (0…4, lower is better), bias (−4…4, 0 is best),
the unparsed rate (lower is better); scoring another run's summaries (``generations``): the mean
score (1…5) and the unparsed rate.  Items: each ``<criterion>.jsonl`` details line (the judge's
raw answer, the score read from it, the human score where there is one, and what its ``<think>``
block held) joins the criterion's MAE (meta) or mean score (generations).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from eval_queue.safe_json import DETAILS_LINE_LIMITS, load_object, validate
from leaderboard.core.schema import ResultsEnvelope
from leaderboard.eee.export import contents_figures
from leaderboard.eee.model import Figure, Item, TrackEee
from leaderboard.tracks.judge.definition import SCORE_MAX, SCORE_MIN, Criterion
from leaderboard.tracks.judge.schema import JudgeDetail, JudgeResultsFile, judge_details_file_name

BENCHMARK = "evalita-llm-judge"
_SPREAD = SCORE_MAX - SCORE_MIN
#: column suffix → (min, max, lower is better)
BOUNDS = {
    "rho": (-1.0, 1.0, False),
    "p": (0.0, 1.0, True),
    "mae": (0.0, float(_SPREAD), True),
    "bias": (-float(_SPREAD), float(_SPREAD), False),
    "mean": (float(SCORE_MIN), float(SCORE_MAX), False),
    "unparsed": (0.0, 1.0, True),
}


def figures(results: ResultsEnvelope) -> list[Figure]:
    assert isinstance(results, JudgeResultsFile)
    joined = "mae" if results.judge.mode == "meta" else "mean"
    out = []
    for figure in contents_figures(results, "", None):
        scope, _, suffix = figure.metric_name.rpartition("_")
        low, high, lower = BOUNDS.get(suffix, (None, None, False))
        details = None
        if suffix == joined and scope in {c.value for c in Criterion}:
            details = judge_details_file_name(Criterion(scope))
        out.append(
            dataclasses.replace(
                figure,
                metric_id=f"evalita_llm_judge.{suffix}",
                min_score=low,
                max_score=high,
                lower_is_better=lower,
                details_file=details,
            )
        )
    return out


def items(results: ResultsEnvelope, file_name: str, data: bytes) -> Iterable[Item]:
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{file_name} line {number}"
        line = validate(JudgeDetail, load_object(raw, where, DETAILS_LINE_LIMITS), where)
        if line.score is None:
            continue  # unparsed: counted in the unparsed rate, no score to report
        error = abs(line.score - line.human) if line.human is not None else None
        yield Item(
            sample_id=f"{line.item}-{line.criterion.value}",
            raw_input=line.item,
            references=(str(line.human),) if line.human is not None else (),
            outputs=(line.raw,),
            score=float(error if error is not None else line.score),
            correct=(error == 0) if error is not None else None,
            extracted=str(line.score),
            extraction_method=f"JSON score ({line.status.value})",
            reasoning=line.thinking,
            metadata={"criterion": line.criterion.value, "judge_score": str(line.score)},
        )


EEE = TrackEee(
    benchmark=BENCHMARK, dataset=("Evalita-LLM judge annotated set", None), figures=figures, items=items
)
