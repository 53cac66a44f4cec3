"""The long-context results file: the shared envelope with this track's ``settings`` body.

docs/TRACKS.md fixes the envelope (``evalita-llm-results/2``)::

    {"schema": "evalita-llm-results/2", "track": "long-context",
     "model": {…}, "run": {…, "context_settings": ["10k", …], …},
     "settings": {"10k": {"sets": {"summary": {…}, …}, "truncation": {…}}, …}}

Per setting and question set (:class:`SetScores`): mean EM, METEOR (paper-compatible),
METEOR (Italian) over the OE items, accuracy and unparsed rate over the MC items, and
their counts; per setting (:class:`TruncationStats`): how many items were cut to the
setting's words and to the model's window, and how many tokens of the book the model
saw.  Scores are on the 0–1 scale; a score that does not exist is ``None`` (Entity has no
MC, so its ``acc`` is ``None``), never 0.  The body is strict: unknown keys are errors.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eval_queue.errors import MalformedFileError
from eval_queue.safe_json import DETAILS_LINE_LIMITS, load_object, validate
from leaderboard.core.schema import ResultsEnvelope, RunInfo, StrictModel
from leaderboard.tracks.long_context.definition import (
    PAPER_KEPT_SIDE,
    QUESTION_SET_SPECS,
    TRACK,
    AnswerKind,
    ContextSetting,
    KeptSide,
    QuestionSet,
)

#: A score on the 0–1 scale (the UI shows 0–100).
Unit = Annotated[float, Field(ge=0.0, le=1.0)]


class SetScores(StrictModel):
    """One question set under one setting: OE means over ``n_oe`` items, MC over ``n_mc``."""

    n_oe: int = Field(ge=0)
    em: Unit | None = None
    meteor: Unit | None = None
    meteor_it: Unit | None = None
    n_mc: int | None = Field(default=None, ge=0)
    acc: Unit | None = None
    unparsed: Unit | None = None

    @model_validator(mode="after")
    def _mc_fields_together(self) -> SetScores:
        mc = (self.n_mc, self.acc, self.unparsed)
        if any(v is None for v in mc) and any(v is not None for v in mc):
            raise ValueError("n_mc, acc and unparsed are given together or not at all")
        return self


class TruncationStats(StrictModel):
    """What the model saw of the books under one setting, over all its items (OE and MC).

    ``words_cut``: items whose book is longer than the setting's word limit (cut by design).
    ``window_cut``: items whose context was cut further to fit the model's window.
    Tokens count the context before the question: BOS, any chat-template preamble and
    the book (what :mod:`backend.tracks.long_context.lm` may cut).  ``kept_side``: which
    end of a prompt longer than the window was kept (``end``: the paper's harness; ``None``:
    a file from before it was recorded, whose runs kept the ``start``).
    """

    unit: Literal["tokens"] = "tokens"
    items: int = Field(ge=0)
    words_cut: int = Field(ge=0)
    window_cut: int = Field(ge=0)
    offered_words_mean: float = Field(ge=0)
    context_tokens_mean: float = Field(ge=0)
    seen_tokens_mean: float = Field(ge=0)
    seen_tokens_min: int = Field(ge=0)
    seen_fraction_mean: float = Field(ge=0, le=1)
    window_tokens: int | None = Field(default=None, ge=1)
    kept_side: KeptSide | None = None


class SettingResult(StrictModel):
    sets: dict[QuestionSet, SetScores]
    truncation: TruncationStats

    @model_validator(mode="after")
    def _every_set(self) -> SettingResult:
        missing = [q.value for q in QuestionSet if q not in self.sets]
        if missing:
            raise ValueError(f"question set(s) missing: {', '.join(missing)}")
        for question_set, scores in self.sets.items():
            has_mc = AnswerKind.MULTIPLE_CHOICE in QUESTION_SET_SPECS[question_set].kinds
            if not has_mc and scores.n_mc is not None:
                raise ValueError(f"{question_set.value} has no multiple-choice items")
        return self


class LongContextRunInfo(RunInfo):
    """The shared ``run`` block plus what a long-context run adds.

    ``kept_side``: which end of a prompt longer than the model's window the run kept
    (:class:`KeptSide`; ``None`` in files written before it was recorded: those runs kept
    the book's ``start``).  Only ``end`` runs without a chat template measure what the
    paper's harness measured: any other run is a variant (:attr:`variants`), never
    comparable, whatever its data.
    """

    context_settings: list[ContextSetting]
    model_class: str | None = None
    prefix_reuse: bool | None = None
    prefill_tokens: int | None = None
    window_tokens: int | None = None
    kept_side: KeptSide | None = None
    decode_cache: str | None = None  # "static" | "dynamic": how answers were decoded (speed only)
    #: Which data the run read (issue 29; None in files written before): the SHA-256 of the
    #: local folder's book files, or of every Hub split's rows as loaded; the Hub commit when
    #: the datasets cache names it; for ``hub`` data, each count that differs from the paper's
    #: Table 2 / §3.7 (``[]``: none differs; None: not checked).
    data_sha256: str | None = None
    data_commit: str | None = None
    data_mismatches: list[str] | None = None

    @property
    def data_problems(self) -> tuple[str, ...]:
        """Why the data cannot be called the paper's (empty: it can): unknown revision, other counts."""
        if self.data_sha256 is None:
            return ("dataset revision not recorded",)
        if self.data_mismatches is None:
            return ("dataset not checked against the paper's counts",)
        return tuple(self.data_mismatches)

    @property
    def variants(self) -> tuple[str, ...]:
        """What makes this run another measurement than the paper's (empty: none)."""
        found = []
        if self.kept_side is not PAPER_KEPT_SIDE:
            side = (self.kept_side or KeptSide.START).value
            found.append(f"window keeps the {side}")
        if self.chat_template:
            found.append("chat template")
        return tuple(found)


class LongContextResults(ResultsEnvelope):
    """A long-context results file: the shared envelope and, per context setting, its scores.

    Read through :meth:`ResultsEnvelope.from_json` (the store's safe reader, the
    migrations, then this schema); the body is strict (unknown keys are errors).
    """

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    TRACK: ClassVar[str] = TRACK

    track: str = TRACK
    run: LongContextRunInfo

    @property
    def comparable(self) -> bool:
        """A full run on the official data that measured what the paper measured (no variant), on
        a recorded dataset revision whose question and book counts are the paper's.

        Comparable runs are ranked together only when their data is the same revision
        (``run.data_sha256``: two Hub versions of INDAQA2 are never ranked together).
        """
        return self.run.official_full_run and not self.run.variants and not self.run.data_problems

    settings: dict[ContextSetting, SettingResult]

    @model_validator(mode="after")
    def _settings_as_run_says(self) -> LongContextResults:
        if set(self.settings) != set(self.run.context_settings):
            raise ValueError(
                f"settings {sorted(self.settings)} differ from run.context_settings "
                f"{sorted(self.run.context_settings)}"
            )
        return self


class LongContextDetail(BaseModel):
    """One line of a details file (``<harness task>.jsonl``): one question and the model's answer."""

    model_config = ConfigDict(extra="forbid")

    doc_id: int
    question_id: str
    book_id: str
    question: str
    references: list[str]
    answer: str
    choices: list[str] | None = None
    label: str | None = None
    letter: str | None = None  # MC: extracted by Appendix E's regexes; None = unparsed
    em: float | None = None
    meteor: float | None = None
    meteor_it: float | None = None
    acc: float | None = None
    context_tokens: int | None = None
    seen_tokens: int | None = None


def parse_details(data: bytes, path: str) -> list[LongContextDetail]:
    """The lines of a details file, each through the store's safe reader (size, depth, numbers).

    A bad line makes the whole file malformed (``MalformedFileError`` naming the file and the
    line), as every track's details reader does.
    """
    records = []
    for number, line in enumerate(data.splitlines(), start=1):
        if line.strip():
            where = f"{path} line {number}"
            try:
                records.append(
                    validate(LongContextDetail, load_object(line, where, DETAILS_LINE_LIMITS), where)
                )
            except MalformedFileError as exc:
                raise MalformedFileError(path, f"line {number}: {exc.reason}") from None
    return records
