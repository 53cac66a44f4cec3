"""The long-context track (INDAQA2, CALAMITA 2026): its one definition.

Question sets, context settings, metrics, the inference prompt, generation settings,
and harness task names are defined here once; the harness configs, the data preparation, the
results schema, the tables, the tab and the About text (:mod:`leaderboard.tracks.long_context.app.about`)
derive from it.

Facts from the INDAQA2 paper (Gioffré et al., CALAMITA 2026):

* two splits (§3.2–3.3): *Summary-level* (362 books, questions written from Wikipedia
  summaries) and *Passage-level* (99 books, questions written from passages, in three
  sets: *Local*, *Local (alternative)*, *Entity*);
* only the two *Local* sets have multiple-choice (MC) items (§3.3, "MCQA conversion");
* contexts are the first 10K or 50K words of a book, or the whole book, split on
  whitespace (§4 "Context Truncation", footnote 6);
* the inference prompt is Figure 4; open-ended (OE) answers are scored with EM and
  METEOR, the maximum over the 1–5 references (§4); MC answers with the 15 regexes of
  Appendix E, in order;
* 38–117 questions per book (Table 1); answers average 4–6 words, entity answers
  24 ± 8 words (Table 2).

Pure data: no I/O, no torch, no lm-eval.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from pydantic import field_validator

from eval_queue.errors import EvalitaError
from eval_queue.text import unknown_name
from eval_queue.tracks import TrackOptions, canonical_subset, option

#: The track's name in request and results files (its spec: :mod:`.spec`).
TRACK = "long-context"


class ContextSetting(StrEnum):
    """Long-context track: how much of the book the model reads (first 10,000 / 50,000 words, or all)."""

    K10 = "10k"
    K50 = "50k"
    FULL = "full"


#: The dataset on the Hugging Face Hub (§3.5, footnote 4); all its splits are read and
#: each QA item is routed to its question set by its ``kind`` field.
HUB_DATASET = "sapienzanlp/INDAQA_CALAMITA"
HUB_DATASET_CONFIG: str | None = None


class UnknownNameError(EvalitaError, ValueError):
    """A setting, question set or task name that the track does not define."""


def _unknown(kind: str, value: str, valid: list[str]) -> UnknownNameError:
    return UnknownNameError(unknown_name(kind, value, valid))


# --------------------------------------------------------------------------- question sets


class Split(StrEnum):
    """The two data splits of INDAQA2 (§3.2, §3.3)."""

    SUMMARY_LEVEL = "summary_level"
    PASSAGE_LEVEL = "passage_level"


class QuestionSet(StrEnum):
    """The four question sets, in the column order of the paper's Table 5."""

    SUMMARY = "summary"
    LOCAL = "local"
    LOCAL_ALT = "local_alt"
    ENTITY = "entity"

    @classmethod
    def parse(cls, value: str) -> QuestionSet:
        try:
            return cls(value)
        except ValueError:
            raise _unknown("question set", value, [m.value for m in cls]) from None


class AnswerKind(StrEnum):
    """How the model answers: free text (OE) or a letter among four choices (MC)."""

    OPEN_ENDED = "oe"
    MULTIPLE_CHOICE = "mc"


@dataclass(frozen=True)
class QuestionSetSpec:
    id: QuestionSet
    label: str  # as Table 5's column group
    split: Split
    item_kind: str  # the ``kind`` field of a QA item (Figures 13–16)
    kinds: tuple[AnswerKind, ...]  # OE for all; MC only for the two Local sets
    show_em: bool  # Table 5 omits Entity EM ("close to zero": 24-word answers)


QUESTION_SETS: tuple[QuestionSetSpec, ...] = (
    QuestionSetSpec(
        QuestionSet.SUMMARY,
        "Summary",
        Split.SUMMARY_LEVEL,
        "summary_question",
        (AnswerKind.OPEN_ENDED,),
        True,
    ),
    QuestionSetSpec(
        QuestionSet.LOCAL,
        "Local",
        Split.PASSAGE_LEVEL,
        "local_question",
        (AnswerKind.OPEN_ENDED, AnswerKind.MULTIPLE_CHOICE),
        True,
    ),
    QuestionSetSpec(
        QuestionSet.LOCAL_ALT,
        "Local alt.",
        Split.PASSAGE_LEVEL,
        "local_question_alt",
        (AnswerKind.OPEN_ENDED, AnswerKind.MULTIPLE_CHOICE),
        True,
    ),
    QuestionSetSpec(
        QuestionSet.ENTITY,
        "Entity",
        Split.PASSAGE_LEVEL,
        "entity_question",
        (AnswerKind.OPEN_ENDED,),
        False,
    ),
)
QUESTION_SET_SPECS: Mapping[QuestionSet, QuestionSetSpec] = MappingProxyType({s.id: s for s in QUESTION_SETS})
#: A QA item's ``kind`` field → its question set.
SET_BY_ITEM_KIND: Mapping[str, QuestionSet] = MappingProxyType({s.item_kind: s.id for s in QUESTION_SETS})


#: The INDAQA2 paper's counts of the full dataset: QA items per question type (Table 2) and
#: documents per split (§3.7: "13,661 open-ended QA items spanning 362 documents"; "11,560
#: open-ended QA items spanning 99 documents").  A ``hub`` run is checked against them at load.
PAPER_QUESTIONS: Mapping[QuestionSet, int] = MappingProxyType(
    {
        QuestionSet.SUMMARY: 13_661,
        QuestionSet.LOCAL: 7_901,
        QuestionSet.LOCAL_ALT: 2_286,
        QuestionSet.ENTITY: 1_373,
    }
)
PAPER_BOOKS: Mapping[Split, int] = MappingProxyType({Split.SUMMARY_LEVEL: 362, Split.PASSAGE_LEVEL: 99})


def paper_count_mismatches(
    questions: Mapping[QuestionSet, int], books: Mapping[Split, int]
) -> tuple[str, ...]:
    """Each count that differs from the paper's (:data:`PAPER_QUESTIONS`, :data:`PAPER_BOOKS`), named.

    Empty: the data has the paper's size.  A count absent from ``questions``/``books`` is 0.
    """
    found = [
        f"{spec.label} questions: {questions.get(spec.id, 0):,}, the paper's Table 2 has {PAPER_QUESTIONS[spec.id]:,}"
        for spec in QUESTION_SETS
        if questions.get(spec.id, 0) != PAPER_QUESTIONS[spec.id]
    ]
    found += [
        f"{split.value} books: {books.get(split, 0):,}, the paper (§3.7) has {expected:,}"
        for split, expected in PAPER_BOOKS.items()
        if books.get(split, 0) != expected
    ]
    return tuple(found)


# --------------------------------------------------------------------------- context settings


def parse_setting(value: str) -> ContextSetting:
    """``" 10K "`` → :attr:`ContextSetting.K10`; an unknown name says the valid ones."""
    try:
        return ContextSetting(value.strip().lower())
    except ValueError:
        raise _unknown("context setting", value, [m.value for m in ContextSetting]) from None


@dataclass(frozen=True)
class ContextSettingSpec:
    """Labels and word counts of a setting; the setting itself is the queue's vocabulary."""

    id: ContextSetting
    label: str  # as Table 5's row groups
    max_words: int | None  # the first N whitespace-separated words; None: the whole book


CONTEXT_SETTINGS: tuple[ContextSettingSpec, ...] = (
    ContextSettingSpec(ContextSetting.K10, "10K-word context", 10_000),
    ContextSettingSpec(ContextSetting.K50, "50K-word context", 50_000),
    ContextSettingSpec(ContextSetting.FULL, "Full book context", None),
)
CONTEXT_SETTING_SPECS: Mapping[ContextSetting, ContextSettingSpec] = MappingProxyType(
    {s.id: s for s in CONTEXT_SETTINGS}
)


class LongContextOptions(TrackOptions):
    """What a long-context request carries: the context settings to run (None: all three)."""

    context_settings: list[ContextSetting] | None = option(
        flag="--context",
        label="Context setting(s)",
        help="long-context: only these settings (10k, 50k, full; default: all)",
        choice_labels={s.id.value: s.label for s in CONTEXT_SETTINGS},
    )

    @field_validator("context_settings")
    @classmethod
    def _canonical(cls, value: list[ContextSetting] | None) -> list[ContextSetting] | None:
        return canonical_subset(value, ContextSetting, "context_settings")

    def variant(self) -> str | None:
        return "-".join(s.value for s in self.context_settings) if self.context_settings else None


class KeptSide(StrEnum):
    """Which end of a prompt longer than the model's window is kept.

    * ``end`` — the paper's (§4: "evaluation is carried out using the LM Evaluation
      Harness"): lm-eval's ``generate_until`` keeps the prompt's last
      ``max_length − max_gen_toks`` tokens, so the question, the options and the end of
      the (word-truncated) book are read and the beginning is cut — BOS and any
      chat-template preamble included.  Runs that keep it are comparable.
    * ``start`` — the project's earlier rule: the beginning of the book and the whole
      question; the end of the book is cut.  A variant: recorded, labelled, never ranked
      beside ``end`` runs (Table 5's rows would otherwise not be the same measurement).
    """

    END = "end"
    START = "start"

    @classmethod
    def parse(cls, value: str) -> KeptSide:
        try:
            return cls(value.strip().lower())
        except ValueError:
            raise _unknown("kept side", value, [m.value for m in cls]) from None


#: What the paper's harness keeps; any other side is a labelled variant.
PAPER_KEPT_SIDE = KeptSide.END


def parse_settings(values: str | list[str] | tuple[str, ...] | None) -> tuple[ContextSetting, ...]:
    """``"10k,full"`` or ``["10k", "full"]`` → settings in canonical order; empty/None → all three."""
    if values is None:
        return tuple(s.id for s in CONTEXT_SETTINGS)
    items = values.split(",") if isinstance(values, str) else list(values)
    chosen = {parse_setting(v) for v in items if v.strip()}
    if not chosen:
        return tuple(s.id for s in CONTEXT_SETTINGS)
    return tuple(s.id for s in CONTEXT_SETTINGS if s.id in chosen)


# --------------------------------------------------------------------------- metrics


class Metric(StrEnum):
    """Per-item scores (0–1) the harness tasks report; the results keep their mean."""

    EM = "em"
    METEOR = "meteor"  # paper-compatible: NLTK meteor_score, English WordNet 3.0, Porter stems
    METEOR_IT = "meteor_it"  # Italian tokenisation, Snowball Italian stems, no synonyms
    ACC = "acc"  # MC accuracy; an answer no regex parses is wrong
    UNPARSED = "unparsed"  # MC: share of answers no Appendix E regex matched


@dataclass(frozen=True)
class MetricSpec:
    id: Metric
    label: str
    kind: AnswerKind
    higher_is_better: bool
    description: str


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec(
        Metric.EM,
        "EM",
        AnswerKind.OPEN_ENDED,
        True,
        "a reference appears verbatim in the answer after Italian normalisation (max over references)",
    ),
    MetricSpec(
        Metric.METEOR,
        "METEOR",
        AnswerKind.OPEN_ENDED,
        True,
        "NLTK meteor_score as the paper's community computes it: English WordNet 3.0 synonyms, "
        "Porter stems (max over references)",
    ),
    MetricSpec(
        Metric.METEOR_IT,
        "METEOR (it)",
        AnswerKind.OPEN_ENDED,
        True,
        "METEOR with Italian tokenisation and Snowball Italian stems, no synonym stage",
    ),
    MetricSpec(
        Metric.ACC,
        "ACC",
        AnswerKind.MULTIPLE_CHOICE,
        True,
        "letter extracted with Appendix E's regexes equals the correct one",
    ),
    MetricSpec(
        Metric.UNPARSED,
        "unparsed",
        AnswerKind.MULTIPLE_CHOICE,
        False,
        "share of MC answers none of Appendix E's regexes matched (counted wrong)",
    ),
)
METRIC_SPECS: Mapping[Metric, MetricSpec] = MappingProxyType({m.id: m for m in METRICS})


def metrics_for(kind: AnswerKind) -> tuple[Metric, ...]:
    return tuple(m.id for m in METRICS if m.kind is kind)


#: Table 5's columns, in order: (question set, metric).  The Entity set shows METEOR only.
TABLE5_COLUMNS: tuple[tuple[QuestionSet, Metric], ...] = tuple(
    (spec.id, metric)
    for spec in QUESTION_SETS
    for metric in (
        *((Metric.EM,) if spec.show_em else ()),
        Metric.METEOR,
        *((Metric.ACC,) if AnswerKind.MULTIPLE_CHOICE in spec.kinds else ()),
    )
)


# --------------------------------------------------------------------------- prompt (Figure 4)

QUESTION_PREFIX = "Domanda: "
ANSWER_CUE = "Risposta:"
#: Where the question starts in a prompt: everything before the *last* occurrence is the
#: book (and whatever a chat template put before it), which is what may be cut.
QUESTION_MARKER = "\n" + QUESTION_PREFIX
CHOICE_LETTERS: tuple[str, ...] = ("A", "B", "C", "D")


def choices_block(choices: list[str] | tuple[str, ...]) -> str:
    """``A. …`` to ``D. …``, one per line; the data's options usually carry the letter already."""
    lines = []
    for letter, choice in zip(CHOICE_LETTERS, choices, strict=True):
        text = choice.strip()
        lines.append(text if text[:2] == f"{letter}." else f"{letter}. {text}")
    return "\n".join(lines)


_WORD = re.compile(r"\S+")


def word_count(text: str) -> int:
    """Words as the paper counts them: whitespace-separated (footnote 6)."""
    return len(text.split())


def truncate_words(text: str, max_words: int | None) -> str:
    """The text up to the end of its ``max_words``-th whitespace-separated word (``None``: all).

    The book's own line breaks and spacing are kept (only what follows the last kept word
    is dropped), so a 10K-word context reads like the book's first pages.
    """
    if max_words is None:
        return text
    if max_words <= 0:
        return ""
    for count, match in enumerate(_WORD.finditer(text), start=1):
        if count == max_words:
            return text[: match.end()]
    return text


def render_prompt(book: str, question: str, choices: list[str] | tuple[str, ...] | None = None) -> str:
    """Figure 4: the book, ``Domanda: {question}``, the choices (MC only), ``Risposta:``.

    In the open-ended task the choices block is void; its line is left out rather than
    left blank.  The book's trailing whitespace is dropped so that the book ends where
    :data:`QUESTION_MARKER` begins.
    """
    parts = [book.rstrip(), f"{QUESTION_PREFIX}{question.strip()}"]
    if choices:
        parts.append(choices_block(choices))
    parts.append(ANSWER_CUE)
    return "\n".join(parts)


# --------------------------------------------------------------------------- generation

#: Greedy decoding; stop at a blank line or when the model starts another question.
STOP_SEQUENCES: tuple[str, ...] = ("\n\n", QUESTION_MARKER)


@dataclass(frozen=True)
class GenerationSpec:
    max_gen_toks: int
    stop: tuple[str, ...] = STOP_SEQUENCES
    do_sample: bool = False
    temperature: float = 0.0


#: OE: entity answers average 24 ± 8 words (Table 2), i.e. up to ~40 words, ~70 tokens for
#: Italian at 1.5–1.8 tokens a word; 96 tokens leave room for a short preamble.  MC: a
#: letter, perhaps with the option text or a short "La risposta corretta è la B".
GENERATION: Mapping[AnswerKind, GenerationSpec] = MappingProxyType(
    {
        AnswerKind.OPEN_ENDED: GenerationSpec(max_gen_toks=96),
        AnswerKind.MULTIPLE_CHOICE: GenerationSpec(max_gen_toks=32),
    }
)


# --------------------------------------------------------------------------- harness tasks

TASK_PREFIX = "indaqa2"


@dataclass(frozen=True)
class ContextHarnessTask:
    """One lm-eval task: a question set, asked OE or MC, under one context setting."""

    question_set: QuestionSet
    kind: AnswerKind
    setting: ContextSetting

    @property
    def base(self) -> str:
        """The project-owned config it is built from: ``harness/indaqa2_<set>_<kind>.yaml``."""
        return f"{TASK_PREFIX}_{self.question_set.value}_{self.kind.value}"

    @property
    def name(self) -> str:
        return f"{self.base}_{self.setting.value}"


def harness_tasks(settings: tuple[ContextSetting, ...] | None = None) -> tuple[ContextHarnessTask, ...]:
    """The tasks a run of ``settings`` (default all) evaluates, in setting then Table 5 order."""
    chosen = settings if settings is not None else tuple(s.id for s in CONTEXT_SETTINGS)
    return tuple(
        ContextHarnessTask(qs.id, kind, setting)
        for setting in chosen
        for qs in QUESTION_SETS
        for kind in qs.kinds
    )


def task_by_name(name: str) -> ContextHarnessTask:
    tasks = {t.name: t for t in harness_tasks()}
    try:
        return tasks[name]
    except KeyError:
        raise _unknown("long-context task", name, sorted(tasks)) from None


def base_configs() -> tuple[str, ...]:
    """The names of the project-owned task configs (one per question set and answer kind)."""
    return tuple(dict.fromkeys(t.base for t in harness_tasks((ContextSetting.K10,))))
