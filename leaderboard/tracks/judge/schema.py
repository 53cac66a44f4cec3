"""The judge track's results file and details lines (pydantic; docs/TRACKS.md, schema ``/2``).

::

    {"schema": "evalita-llm-results/2", "track": "judge",
     "model": {…the judge, as in /1…}, "run": {…as in /1…},
     "judge": {"mode": "meta", …}  |  {"mode": "generations", …}}

``meta`` (the judges leaderboard): per criterion and ``overall`` (all criteria pooled, as
the paper's Table 1) a :class:`StatBlock` — n, unparsed rate, Spearman ρ and p, MAE,
bias, mean human and judge scores — and the per-item scores (``items``) from which the
agreement matrix and the distributions are computed at read time; **[project]** the
annotated set judged (``annotated``: its label, SHA-256 and size).

Both bodies **[project]** record the ``protocol`` (``project`` | ``paper``; absent in files
written before protocols existed: ``project``, which is what they ran), the examples file
the prompts held (``few_shot``: name, SHA-256, examples per criterion) and how the judge
decoded (``generation``: whose settings, sampling, token budget, stop sequences, prefill).

``generations`` (judged outputs of another run): the judged run (``target``), per
criterion (and per prompt) the mean score with its unparsed rate, and every item's score
with the judge's explanation.  The judge's id and revision are the file's ``model`` block.

A figure that could not be computed is ``null`` in the file with its reason in
``not_enough_data``; :meth:`StatBlock.figure` gives it back as
:class:`~leaderboard.tracks.judge.metrics.NotEnoughData`.  Details lines
(:class:`JudgeDetail`) keep the judge's raw answer, one file per criterion.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.core.schema import ResultsEnvelope
from leaderboard.tracks.judge.definition import TRACK, Criterion, JudgeMode, JudgeProtocol
from leaderboard.tracks.judge.metrics import Agreement, Correlation, Figure, JudgedScore, NotEnoughData
from leaderboard.tracks.judge.parse import ParseStatus

#: The figures of a :class:`StatBlock` that can be "not enough data".
STAT_FIGURES: tuple[str, ...] = (
    "unparsed_rate",
    "rho",
    "p",
    "mae",
    "bias",
    "mean_human",
    "mean_judge",
    "rho_all",
    "p_all",
)


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
    #: **[project]** ρ and p over *every* answer, an unparsed one counted as the score farthest
    #: from the human's (:func:`~leaderboard.tracks.judge.metrics.farthest_score`): Table 1's n
    #: (250 per judge) with a worst case for what could not be read.  ``rho`` and ``p`` are over
    #: the scored answers only.  Absent in files written before issue 29.
    rho_all: float | None = None
    p_all: float | None = None
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
        for rho, p, spearman in (
            ("rho", "p", agreement.spearman),
            ("rho_all", "p_all", agreement.spearman_all),
        ):
            if isinstance(spearman, Correlation):
                values |= {rho: spearman.rho, p: spearman.p}
            else:
                values |= {rho: spearman, p: spearman}
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


class AnnotatedSetInfo(BaseModel):
    """The annotated set a meta run judged: its label (as ``run.data``), digest and size.

    ``sha256`` is :func:`~leaderboard.tracks.judge.data.annotated_digest`: the same set read
    from ``hub:`` or ``local:`` has the same one.
    """

    name: str
    sha256: str
    items: int


class PaperDataPins(BaseModel):
    """The SHA-256 digests a maintainer pinned as the paper's own data (``--judge-paper-pins FILE``).

    The paper's examples and annotations are under a no-derivatives licence: the project ships
    neither, only a way to say "these bytes are the paper's".  ``examples_sha256`` is the digest
    of the examples file's bytes (:class:`FewShotInfo`), ``annotated_sha256`` that of the
    annotated set's items (:class:`AnnotatedSetInfo`).  A meta run records the pins its worker
    held; it is comparable with Table 1 only when its own digests equal them.
    """

    model_config = ConfigDict(frozen=True)

    examples_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    annotated_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class JudgeStanding(StrEnum):
    """What a judge run's figures can be compared with (:attr:`JudgeResultsFile.standing`)."""

    #: The paper protocol, in full, on the pinned examples and annotated set: a row of Table 1.
    COMPARABLE = "comparable with Table 1"
    #: The paper protocol in full on other data (unpinned, or digests that differ): listed beside
    #: the comparable runs, never ranked among them.
    PAPER_OTHER_DATA = "paper protocol, other data"
    #: The project protocol, the bundled sample, a limit or a token cap: shown only on request.
    NOT_COMPARABLE = "not comparable"


class GenerationSource(StrEnum):
    """Whose decoding settings a judge ran with."""

    #: The ``project`` protocol's fixed settings: greedy, 256 tokens, the answer prefilled.
    PROJECT = "project"
    #: The sampling settings of the model's own ``generation_config.json`` (its authors' advice).
    GENERATION_CONFIG = "generation_config"
    #: Greedy: the model ships no sampling settings (no ``generation_config.json``, or one without
    #: ``do_sample``).
    GREEDY = "greedy"


class GenerationSettings(BaseModel):
    """How the judge decoded: recorded so that a row says what it measured."""

    model_config = ConfigDict(extra="allow")

    source: GenerationSource
    do_sample: bool
    #: The sampling parameters passed to ``generate`` (``temperature``, ``top_p``, ``top_k``, …).
    sampling: dict[str, float | int] = Field(default_factory=dict)
    #: The token budget of one answer (thinking included).
    max_gen_toks: int
    stop: list[str]
    #: The start of the answer written for the judge (``project``); None: none (``paper``).
    prefill: str | None = None
    #: The model's window as the harness reads it, and the longest prompt in tokens (``paper``:
    #: the budget is what the window leaves after the longest prompt, up to the protocol's cap).
    window: int | None = None
    longest_prompt_tokens: int | None = None
    #: ``paper``: whether the model thinks in a ``<think>`` block (its larger budget).
    reasoning: bool | None = None


class MetaBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    mode: Literal[JudgeMode.META] = JudgeMode.META
    rubric: str
    protocol: JudgeProtocol = JudgeProtocol.PROJECT
    few_shot: FewShotInfo | None = None
    generation: GenerationSettings | None = None
    annotated: AnnotatedSetInfo | None = None
    #: **[project]** The digests the worker held as the paper's data (None: it held none).
    paper_pins: PaperDataPins | None = None
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
    protocol: JudgeProtocol = JudgeProtocol.PROJECT
    few_shot: FewShotInfo | None = None
    generation: GenerationSettings | None = None
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
    def standing(self) -> JudgeStanding:
        """Comparable with Table 1, the paper protocol on other data, or neither.

        *Paper protocol in full*: a meta run of the ``paper`` protocol with its examples file,
        every item (no ``limit``, answers not capped by ``--max-gen-toks``), on an annotated set
        read from ``hub:`` or ``local:`` and identified by its digest.  Such a run is
        **comparable with Table 1** only when its examples file's SHA-256 and its annotated
        set's SHA-256 equal the digests pinned as the paper's (:class:`PaperDataPins`, recorded
        by the worker from its maintainer's configuration); otherwise it is **paper protocol,
        other data**.  Anything else (the ``project`` protocol, the bundled sample, a limit, a
        cap) is **not comparable**.
        """
        body, run = self.judge, self.run
        in_full = (
            isinstance(body, MetaBody)
            and body.protocol is JudgeProtocol.PAPER
            and body.few_shot is not None
            and body.annotated is not None
            and run.data.startswith(("hub:", "local:"))
            and run.limit is None
            and run.max_gen_toks is None
        )
        if not in_full:
            return JudgeStanding.NOT_COMPARABLE
        assert isinstance(body, MetaBody) and body.few_shot is not None and body.annotated is not None
        pins = body.paper_pins
        if (
            pins is not None
            and pins.examples_sha256 == body.few_shot.sha256
            and pins.annotated_sha256 == body.annotated.sha256
        ):
            return JudgeStanding.COMPARABLE
        return JudgeStanding.PAPER_OTHER_DATA

    @property
    def comparable(self) -> bool:
        """The same measurement as the paper's Table 1 on the paper's data (:attr:`standing`).

        Comparable runs are ranked only beside runs on the same set (:attr:`annotated_set`).
        """
        return self.standing is JudgeStanding.COMPARABLE

    @property
    def annotated_set(self) -> str:
        """What groups judges that can be ranked together: the set's SHA-256 when recorded, else its label."""
        body = self.judge
        if isinstance(body, MetaBody) and body.annotated is not None:
            return body.annotated.sha256
        return self.run.data


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
    #: **[project]** what the judge wrote in its think block(s) (removed before the answer was read).
    thinking: str | None = None


# --------------------------------------------------------------------------- paths


def judge_details_file_name(criterion: Criterion) -> str:
    """One details file per criterion, inside the run's :func:`~leaderboard.core.schema.details_dir`."""
    return f"{criterion.value}.jsonl"
