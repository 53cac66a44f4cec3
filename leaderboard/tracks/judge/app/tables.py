"""The judge track's tables, computed from parsed results files (no gradio; the tab renders them).

* :func:`judges_table` — the judges leaderboard (paper Table 1): per judge run, Spearman ρ
  and its p-value, MAE, bias and unparsed rate per criterion and overall;
* :func:`agreement_table` / :func:`agreement_for` — ρ between every pair of judges on the
  items both scored, for judges run on the same annotated set;
* :func:`distribution_table` — human vs judge score counts per criterion (Figures 4–6);
* :func:`criterion_means_table` — judged generations: a judge's mean score per criterion
  for each judged run (the SUM task page and the model page);
* :func:`export_table` — what ``python -m leaderboard export --track judge`` prints.

Every column name is built here, once, from the rubric (:func:`stat_column`,
:func:`mean_column`).  A figure that could not be computed is ``pd.NA`` in a nullable
``Float64`` column — never NaN, never 0 — and the tab shows it as *not enough data*.
Several files of one judge on one set with one protocol: the newest wins
(:func:`~leaderboard.tracks.judge.app.records.latest`).
By default the judges table lists the paper-protocol runs in full (:attr:`JudgeResultsFile.standing`):
those *comparable with Table 1* (on the examples file and annotated set pinned as the paper's)
first, then, beside them and ranked apart, those of the *paper protocol, other data*; the rest
only when asked for.  Judges are ranked only beside judges of the same standing and the same
annotated set — identified by its SHA-256 (:func:`annotated_sets`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import pandas as pd

from eval_queue.vocabulary import short_revision
from leaderboard.tracks.judge.app.records import JudgeRun, latest
from leaderboard.tracks.judge.definition import SCORES, Criterion, JudgeMode
from leaderboard.tracks.judge.metrics import AgreementMatrix, Correlation, agreement_matrix, distributions
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.schema import (
    GenerationsBody,
    JudgeStanding,
    MeanBlock,
    MetaBody,
    StatBlock,
)

#: "All criteria pooled", the scope beside the five criteria.
OVERALL = "overall"
#: Shown for ``pd.NA`` by the tab and the export (a figure computed from too few scores).
NOT_ENOUGH_DATA = "not enough data"


class TableFigure(StrEnum):
    """The figures of the judges table, each per criterion and overall."""

    RHO = "rho"
    P = "p"
    MAE = "mae"
    BIAS = "bias"
    UNPARSED = "unparsed"
    N = "n"

    @property
    def decimals(self) -> int:
        """As the paper prints them: ρ and p to 3 decimals, MAE and bias to 2."""
        match self:
            case TableFigure.RHO | TableFigure.P | TableFigure.UNPARSED:
                return 3
            case TableFigure.MAE | TableFigure.BIAS:
                return 2
            case TableFigure.N:
                return 0
            case _:
                raise AssertionError(f"unhandled figure {self!r}")


def stat_column(scope: Criterion | str, figure: TableFigure) -> str:
    """``coherence_rho``, ``overall_mae`` …: the one place that builds a judges-table column name."""
    return f"{scope}_{figure}"


def mean_column(scope: Criterion | str) -> str:
    """``fluency_mean``, ``overall_mean``: the criterion-means columns."""
    return f"{scope}_mean"


def unparsed_column(scope: Criterion | str) -> str:
    return f"{scope}_unparsed"


SCOPES: tuple[Criterion | str, ...] = (OVERALL, *CRITERIA)
JUDGE_KEY_COLUMNS: tuple[str, ...] = ("judge", "revision", "precision")
RUN_COLUMNS: tuple[str, ...] = (
    "data",
    "set_sha256",
    "protocol",
    "limit",
    "comparable",
    "standing",
    "few_shot",
    "rubric",
    "finished_at",
    "results_path",
    "details_path",
)
#: ρ and p with every answer counted, an unparsed one at its worst (``StatBlock.rho_all``), pooled.
ALL_ANSWERS_COLUMNS: tuple[str, ...] = (f"{OVERALL}_rho_all", f"{OVERALL}_p_all")
JUDGES_COLUMNS: tuple[str, ...] = (
    *JUDGE_KEY_COLUMNS,
    *RUN_COLUMNS,
    *(stat_column(scope, figure) for scope in SCOPES for figure in TableFigure),
    *ALL_ANSWERS_COLUMNS,
)
#: The order of the standings in the judges table (comparable first, the others beside).
_STANDING_ORDER = {standing: i for i, standing in enumerate(JudgeStanding)}
MEANS_COLUMNS: tuple[str, ...] = (
    "model",
    "model_revision",
    "model_precision",
    "num_fewshot",
    "task",
    "prompt",
    "judge",
    "judge_revision",
    "judged_results_path",
    "data",
    "limit",
    "protocol",
    "rubric",
    "finished_at",
    "results_path",
    *(column for scope in SCOPES for column in (mean_column(scope), unparsed_column(scope))),
)
DISTRIBUTION_COLUMNS: tuple[str, ...] = ("judge", "criterion", "source", "score", "count")
HUMAN = "human"
UNPARSED_BIN = "unparsed"


def _select(runs: Iterable[JudgeRun], mode: JudgeMode, include_noncomparable: bool) -> list[JudgeRun]:
    chosen = [r for r in latest(runs) if r.mode is mode]
    return chosen if include_noncomparable else [r for r in chosen if r.listed]


@dataclass(frozen=True)
class AnnotatedSetChoice:
    """One annotated set judges ran on: its key (SHA-256, or the label of files without one), how
    it is named and how many judges are listed on it."""

    key: str
    name: str
    sha256: str | None
    judges: int

    @property
    def label(self) -> str:
        """``hub:org/set · sha256 3f2a9c0d11ab · 12 judges``."""
        digest = f" · sha256 {self.sha256[:12]}" if self.sha256 else ""
        return f"{self.name}{digest} · {self.judges} judge{'s' if self.judges != 1 else ''}"


def annotated_sets(
    runs: Iterable[JudgeRun], *, include_noncomparable: bool = False
) -> list[AnnotatedSetChoice]:
    """The annotated sets of the listed meta runs, the one with most judges first (then real sets)."""
    chosen = _select(runs, JudgeMode.META, include_noncomparable)
    grouped: dict[str, list[JudgeRun]] = {}
    for run in chosen:
        grouped.setdefault(run.annotated_set, []).append(run)
    choices = []
    for key, members in grouped.items():
        newest = max(members, key=lambda r: (r.finished_at, r.path))
        body = newest.results.judge
        info = body.annotated if isinstance(body, MetaBody) else None
        choices.append(
            AnnotatedSetChoice(
                key=key,
                name=info.name if info else newest.results.run.data,
                sha256=info.sha256 if info else None,
                judges=len(members),
            )
        )
    return sorted(choices, key=lambda c: (-c.judges, c.name == "sample", c.name, c.key))


def judge_labels(runs: Sequence[JudgeRun]) -> dict[str, str]:
    """A short unique label per run path: the model id, with revision and precision only when needed."""
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.results.model.id] = counts.get(run.results.model.id, 0) + 1
    labels = {}
    for run in runs:
        model = run.results.model
        label = model.id
        if counts[model.id] > 1:
            label = f"{model.id}@{short_revision(model.revision)} {model.precision}"
        labels[run.path] = label
    if len(set(labels.values())) != len(labels):  # same model, revision, precision: two protocols
        labels = {run.path: f"{labels[run.path]} ({run.results.judge.protocol.value})" for run in runs}
    if len(set(labels.values())) != len(labels):  # … or two sets
        labels = {run.path: f"{labels[run.path]} [{run.results.run.data}]" for run in runs}
    return labels


def _rounded(value: float | int | None, decimals: int) -> Any:
    return pd.NA if value is None else round(float(value), decimals)


def _stat_cell(block: StatBlock, figure: TableFigure) -> Any:
    match figure:
        case TableFigure.RHO:
            value: float | int | None = block.rho
        case TableFigure.P:
            value = block.p
        case TableFigure.MAE:
            value = block.mae
        case TableFigure.BIAS:
            value = block.bias
        case TableFigure.UNPARSED:
            value = block.unparsed_rate
        case TableFigure.N:
            value = block.n_items
        case _:
            raise AssertionError(f"unhandled figure {figure!r}")
    return _rounded(value, figure.decimals)


def _typed(frame: pd.DataFrame, numeric: Iterable[str]) -> pd.DataFrame:
    for column in numeric:
        frame[column] = frame[column].astype("Float64")
    return frame


def judges_table(
    runs: Iterable[JudgeRun], *, include_noncomparable: bool = False, annotated_set: str | None = None
) -> pd.DataFrame:
    """One row per judge run on an annotated set, best overall ρ first (``pd.NA`` last).

    ``annotated_set`` (a key of :func:`annotated_sets`) keeps that set's judges only; without
    it, the rows are grouped by set (``set_sha256``, then ``data``) and ranked within each, so
    judges measured on different sets are never ranked together.
    """
    runs = list(runs)
    rows = []
    for run in _select(runs, JudgeMode.META, include_noncomparable):
        if annotated_set is not None and run.annotated_set != annotated_set:
            continue
        body = run.results.judge
        assert isinstance(body, MetaBody)
        model, info = run.results.model, run.results.run
        row: dict[str, Any] = {
            "judge": model.id,
            "revision": model.revision,
            "precision": model.precision,
            "data": info.data,
            "set_sha256": body.annotated.sha256 if body.annotated else None,
            "protocol": body.protocol.value,
            "limit": info.limit,
            "comparable": run.comparable,
            "standing": run.standing.value,
            "few_shot": body.few_shot.file if body.few_shot else None,
            "rubric": body.rubric,
            "finished_at": info.finished_at,
            "results_path": run.path,
            "details_path": info.details_path,
        }
        for scope in SCOPES:
            block = body.overall if scope == OVERALL else body.criteria.get(Criterion(scope))
            for figure in TableFigure:
                row[stat_column(scope, figure)] = pd.NA if block is None else _stat_cell(block, figure)
        row[ALL_ANSWERS_COLUMNS[0]] = _rounded(body.overall.rho_all, TableFigure.RHO.decimals)
        row[ALL_ANSWERS_COLUMNS[1]] = _rounded(body.overall.p_all, TableFigure.P.decimals)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(JUDGES_COLUMNS))
    numeric = [c for c in JUDGES_COLUMNS if c not in JUDGE_KEY_COLUMNS and c not in RUN_COLUMNS]
    frame = _typed(frame, numeric)
    for scope in SCOPES:  # counts are whole numbers (``25``, not ``25.0`` in a CSV)
        frame[stat_column(scope, TableFigure.N)] = frame[stat_column(scope, TableFigure.N)].astype("Int64")
    main = stat_column(OVERALL, TableFigure.RHO)
    # Sets in the selector's order (most judges first), each set's judges best first.
    order = {
        c.key: i for i, c in enumerate(annotated_sets(runs, include_noncomparable=include_noncomparable))
    }
    frame["_set"] = [
        order.get(sha if isinstance(sha, str) else data, len(order))
        for sha, data in zip(frame["set_sha256"], frame["data"], strict=True)
    ]
    # Standing first: a run on other data is listed beside the comparable ones, never among them.
    frame["_standing"] = [_STANDING_ORDER[JudgeStanding(s)] for s in frame["standing"]]
    ranked = frame.sort_values(
        ["_standing", "_set", main, "judge"],
        ascending=[True, True, False, True],
        na_position="last",
        ignore_index=True,
    )
    return ranked.drop(columns=["_standing", "_set"])


def agreement_for(
    runs: Iterable[JudgeRun],
    data: str,
    criterion: Criterion | None = None,
    *,
    include_noncomparable: bool = True,
) -> AgreementMatrix:
    """The agreement matrix of the judges run on the annotated set ``data`` (a key of
    :func:`annotated_sets`; one criterion, or pooled)."""
    chosen = [r for r in _select(runs, JudgeMode.META, include_noncomparable) if r.annotated_set == data]
    labels = judge_labels(chosen)
    scores: dict[str, dict[tuple[str, Criterion], int | None]] = {}
    for run in chosen:
        body = run.results.judge
        assert isinstance(body, MetaBody)
        scores[labels[run.path]] = {
            (item.item, item.criterion): item.judge
            for item in body.items
            if criterion is None or item.criterion is criterion
        }
    return agreement_matrix(scores)


def agreement_table(
    runs: Iterable[JudgeRun],
    data: str,
    criterion: Criterion | None = None,
    *,
    include_noncomparable: bool = True,
) -> pd.DataFrame:
    """The matrix as a square frame of ρ (3 decimals; ``pd.NA``: not enough common scored items)."""
    matrix = agreement_for(runs, data, criterion, include_noncomparable=include_noncomparable)
    cells = [
        [round(c.rho, TableFigure.RHO.decimals) if isinstance(c, Correlation) else pd.NA for c in row]
        for row in matrix.cells
    ]
    frame = pd.DataFrame(cells, index=list(matrix.judges), columns=list(matrix.judges))
    return frame.astype("Float64")


def distribution_table(
    runs: Iterable[JudgeRun], data: str | None = None, *, include_noncomparable: bool = True
) -> pd.DataFrame:
    """Tidy counts: per judge and criterion, ``source`` = ``human`` or ``judge``, ``score`` 1–5 or ``unparsed``
    (``data``: the annotated set's key, :func:`annotated_sets`)."""
    chosen = [
        r
        for r in _select(runs, JudgeMode.META, include_noncomparable)
        if data is None or r.annotated_set == data
    ]
    labels = judge_labels(chosen)
    rows = []
    for run in chosen:
        body = run.results.judge
        assert isinstance(body, MetaBody)
        for pair in distributions(body.judged_scores()):
            for source, counted in ((HUMAN, pair.human), ("judge", pair.judge)):
                for score in SCORES:
                    rows.append(
                        (labels[run.path], pair.criterion.value, source, str(score), counted.counts[score])
                    )
                if source != HUMAN:
                    rows.append(
                        (labels[run.path], pair.criterion.value, source, UNPARSED_BIN, counted.unparsed)
                    )
    return pd.DataFrame(rows, columns=list(DISTRIBUTION_COLUMNS))


def _mean_cells(blocks: dict[Criterion, MeanBlock], overall: MeanBlock | None) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for scope in SCOPES:
        block = overall if scope == OVERALL else blocks.get(Criterion(scope))
        row[mean_column(scope)] = pd.NA if block is None else _rounded(block.mean, 2)
        row[unparsed_column(scope)] = pd.NA if block is None else _rounded(block.unparsed_rate, 3)
    return row


def _pooled(blocks: Iterable[MeanBlock]) -> MeanBlock:
    blocks = list(blocks)
    n_items = sum(b.n_items for b in blocks)
    n_scored = sum(b.n_scored for b in blocks)
    total = sum(b.mean * b.n_scored for b in blocks if b.mean is not None)
    return MeanBlock(
        n_items=n_items,
        n_scored=n_scored,
        unparsed_rate=(n_items - n_scored) / n_items if n_items else None,
        mean=total / n_scored if n_scored else None,
    )


def criterion_means_table(
    runs: Iterable[JudgeRun],
    *,
    task: str | None = None,
    model: str | None = None,
    prompt: str | None = None,
) -> pd.DataFrame:
    """Judged generations: one row per (judged run, judge), its mean score per criterion.

    ``prompt`` picks the means on that prompt's outputs only (the SUM page, beside each
    prompt's ROUGE); without it the means pool every judged prompt.  Sample and limited
    runs are kept: the task page labels the judged run, whose data the row carries.
    """
    rows = []
    for run in latest(runs):
        body = run.results.judge
        if not isinstance(body, GenerationsBody):
            continue
        if (task and body.task != task) or (model and body.target.model != model):
            continue
        if prompt is not None:
            if prompt not in body.by_prompt:
                continue
            blocks = body.by_prompt[prompt]
            overall = _pooled(blocks.values())
        else:
            blocks, overall = body.criteria, body.overall
        judge, target = run.results.model, body.target
        rows.append(
            {
                "model": target.model,
                "model_revision": target.revision,
                "model_precision": target.precision,
                "num_fewshot": target.num_fewshot,
                "task": body.task,
                "prompt": prompt,
                "judge": judge.id,
                "judge_revision": judge.revision,
                "judged_results_path": target.results_path,
                "data": target.data,
                "limit": target.limit,
                "protocol": body.protocol.value,
                "rubric": body.rubric,
                "finished_at": run.results.run.finished_at,
                "results_path": run.path,
                **_mean_cells(blocks, overall),
            }
        )
    frame = pd.DataFrame(rows, columns=list(MEANS_COLUMNS))
    numeric = [c for scope in SCOPES for c in (mean_column(scope), unparsed_column(scope))]
    return _typed(frame, numeric).sort_values(["model", "num_fewshot", "judge"], ignore_index=True)


class JudgeExport(StrEnum):
    """What ``python -m leaderboard export --track judge`` can print."""

    JUDGES = "judges"
    GENERATIONS = "generations"


def export_table(
    runs: Iterable[JudgeRun], kind: JudgeExport = JudgeExport.JUDGES, *, include_noncomparable: bool = False
) -> pd.DataFrame:
    """The rows to export (``pd.NA`` becomes an empty CSV cell or JSON ``null``)."""
    match kind:
        case JudgeExport.JUDGES:
            return judges_table(runs, include_noncomparable=include_noncomparable)
        case JudgeExport.GENERATIONS:
            return criterion_means_table(runs)
        case _:
            raise AssertionError(f"unhandled export {kind!r}")
