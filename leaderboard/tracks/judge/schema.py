"""The judge track's results file and details lines (pydantic; docs/TRACKS.md, schema ``/2``).

::

    {"schema": "evalita-llm-results/2", "track": "judge",
     "model": {…the judge, as in /1…}, "run": {…as in /1…},
     "judge": {"mode": "meta", …}  |  {"mode": "generations", …}}

``meta`` (the judges leaderboard): per criterion and ``overall`` (all criteria pooled, as
the paper's Table 1) a :class:`StatBlock` — n, unparsed rate, Spearman ρ and p, MAE,
bias, mean human and judge scores — and the per-item scores (``items``) from which the
agreement matrix and the distributions are computed at read time.

``generations`` (judged outputs of another run): the judged run (``target``), per
criterion (and per prompt) the mean score with its unparsed rate, and every item's score
with the judge's explanation.  The judge's id and revision are the file's ``model`` block.

A figure that could not be computed is ``null`` in the file with its reason in
``not_enough_data``; :meth:`StatBlock.figure` gives it back as
:class:`~leaderboard.tracks.judge.metrics.NotEnoughData`.  Details lines
(:class:`JudgeDetail`) keep the judge's raw answer, one file per criterion.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.core.schema import ResultsEnvelope
from leaderboard.tracks.judge.definition import TRACK, Criterion, JudgeMode
from leaderboard.tracks.judge.metrics import Agreement, Correlation, Figure, JudgedScore, NotEnoughData
from leaderboard.tracks.judge.parse import ParseStatus

#: The figures of a :class:`StatBlock` that can be "not enough data".
STAT_FIGURES: tuple[str, ...] = ("unparsed_rate", "rho", "p", "mae", "bias", "mean_human", "mean_judge")


class StatBlock(BaseModel):
    """One judge against the human scores on one criterion (or all pooled): a row of Table 1."""

    model_config = ConfigDict(extra="allow")

    n_items: int
    n_scored: int
    unparsed_rate: float | None = None
    rho: float | None = None
    p: float | None = None
    mae: float | None = None
    bias: float | None = None
    mean_human: float | None = None
    mean_judge: float | None = None
    #: figure name → why it is null.
    not_enough_data: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def from_agreement(cls, agreement: Agreement) -> StatBlock:
        values: dict[str, Figure] = {
            "unparsed_rate": agreement.unparsed_rate,
            "mae": agreement.mae,
            "bias": agreement.bias,
            "mean_human": agreement.mean_human,
            "mean_judge": agreement.mean_judge,
        }
        if isinstance(agreement.spearman, Correlation):
            values |= {"rho": agreement.spearman.rho, "p": agreement.spearman.p}
        else:
            values |= {"rho": agreement.spearman, "p": agreement.spearman}
        return cls(
            n_items=agreement.n_items,
            n_scored=agreement.n_scored,
            **{k: v for k, v in values.items() if not isinstance(v, NotEnoughData)},
            not_enough_data={k: v.reason for k, v in values.items() if isinstance(v, NotEnoughData)},
        )

    def figure(self, name: str) -> Figure:
        """A figure by name, or :class:`NotEnoughData` with the stored reason."""
        if name not in STAT_FIGURES:
            raise KeyError(f"unknown figure {name!r}; valid: {', '.join(STAT_FIGURES)}")
        value = getattr(self, name)
        if value is None:
            return NotEnoughData(self.not_enough_data.get(name, "not computed"))
        return float(value)


class MetaItem(BaseModel):
    """One (item, criterion) of the annotated set: the human score and the judge's."""

    item: str
    criterion: Criterion
    human: int
    judge: int | None
    status: ParseStatus


class FewShotInfo(BaseModel):
    """The few-shot file a run used (its name and digest) and how many examples per criterion."""

    file: str
    sha256: str
    examples: dict[Criterion, int]


class MetaBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    mode: Literal[JudgeMode.META] = JudgeMode.META
    rubric: str
    few_shot: FewShotInfo | None = None
    criteria: dict[Criterion, StatBlock]
    overall: StatBlock
    items: list[MetaItem]

    def judged_scores(self) -> list[JudgedScore]:
        return [JudgedScore(i.item, i.criterion, i.human, i.judge) for i in self.items]


class MeanBlock(BaseModel):
    """A judge's mean score for one criterion (or all pooled) over a run's outputs."""

    n_items: int
    n_scored: int
    unparsed_rate: float | None
    mean: float | None


class JudgedRun(BaseModel):
    """The run whose outputs were judged (``judge_target`` and what its results file says)."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())

    results_path: str
    model: str
    revision: str
    precision: str
    num_fewshot: int
    data: str
    limit: int | float | None = None
    details_path: str


class GeneratedItem(BaseModel):
    """One judged output: task, prompt and document of the judged run, the score and the reason."""

    item: str
    task: str
    prompt: str
    doc_id: int
    criterion: Criterion
    score: int | None
    status: ParseStatus
    explanation: str | None = None


class GenerationsBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    mode: Literal[JudgeMode.GENERATIONS] = JudgeMode.GENERATIONS
    rubric: str
    few_shot: FewShotInfo | None = None
    target: JudgedRun
    task: str
    criteria: dict[Criterion, MeanBlock]
    overall: MeanBlock
    #: prompt id → criterion → mean (the SUM page shows them beside ROUGE per prompt).
    by_prompt: dict[str, dict[Criterion, MeanBlock]]
    items: list[GeneratedItem]


JudgeBody = Annotated[MetaBody | GenerationsBody, Field(discriminator="mode")]


class JudgeResultsFile(ResultsEnvelope):
    """A judge run's results file: the shared envelope (docs/TRACKS.md) with the ``judge`` body.

    Read with the inherited :meth:`~leaderboard.core.schema.ResultsEnvelope.from_json` (the
    store's safe reader, then the migrations, then this schema); written to
    :func:`~leaderboard.core.schema.results_file_path` with the request's variant.
    """

    TRACK: ClassVar[str] = TRACK

    track: str = TRACK
    judge: JudgeBody

    @property
    def comparable(self) -> bool:
        """A full run on a published annotated set (``hub:…``); sample, local and limited runs are not."""
        return self.run.data.startswith("hub") and self.run.limit is None


class JudgeDetail(BaseModel):
    """One line of ``<details>/<criterion>.jsonl``: what the judge answered and how it was read."""

    model_config = ConfigDict(extra="allow")

    item: str
    criterion: Criterion
    raw: str
    status: ParseStatus
    score: int | None = None
    explanation: str | None = None
    repaired: bool = False
    human: int | None = None


# --------------------------------------------------------------------------- paths


def judge_details_file_name(criterion: Criterion) -> str:
    """One details file per criterion, inside the run's :func:`~leaderboard.core.schema.details_dir`."""
    return f"{criterion.value}.jsonl"
