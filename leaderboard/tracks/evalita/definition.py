"""The Evalita-LLM suite: the single source of truth for tasks, prompts and metrics.

Everything else is derived from :data:`SUITE`: the leaderboard columns, the worker's
list of harness tasks, the parsing of harness output, the About page and the plots.
The prompt texts and answer options are copied verbatim from the lm-evaluation-harness
0.4.13 task configs (``lm_eval/tasks/evalita_llm``); ``tests/foundation`` checks them
against the installed configs, so a harness upgrade that changes a prompt is noticed.

This module is pure data: it imports neither torch nor lm-eval, and does no I/O.

Prompt numbering
----------------
The harness runs six prompts per multiple-choice task (``prompt-1`` … ``prompt-6``,
our ids ``p1`` … ``p6``, the paper's p1 … p6 with the same meaning) and two per
generative task (``p1``, ``p2``).  The paper numbers its four generative *patterns*
p7 (request), p8 (request + output format), p9 (task description + request) and
p10 (task description + request + output format) and uses two of them per task:

==========  ===========  ==================  ===========================================
task        harness p1   harness p2          evidence
==========  ===========  ==================  ===========================================
SUM         p7           p9                  Table 13, Table A8 rows P7/P9; templates
NER         p8           p10                 Table 13, Tables 19/A9 rows P8/P10
REL         p8           p10                 Table A10 rows P8/P10; templates ask a format
LS          p8           p10                 Table 21 (p8 = MinP/MaxP, p10 = AvgP/CPS on LS)
==========  ===========  ==================  ===========================================

For LS the paper disagrees with itself: Table A7 labels the two rows P7/P9, but the
harness templates both prescribe an output format ("Elenca i lemmi … separandoli con
una virgola") and Table 21 attributes LS's MaxP to p8 and AvgP/CPS to p10, which is
what Table A7's numbers give for its first and second row.  We follow the pattern the
templates actually implement (p8/p10).  In every case the paper's first row is the
harness's ``p1`` and the second row ``p2``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import field_validator

from eval_queue.errors import EvalitaError
from eval_queue.text import unknown_name
from eval_queue.tracks import TrackOptions, canonical_subset, option
from leaderboard.tracks.evalita.vocabulary import (
    FEWSHOT_SETTINGS as FEWSHOT_SETTINGS,  # the suite's settings, defined once
)

#: The track's name in request and results files (its spec: :mod:`.spec`).
TRACK = "evalita"
#: The bundled sample of every task (``data: sample``), in the layout ``--data local:<dir>`` reads.
SAMPLE_DATA_DIR = Path(__file__).resolve().parent / "sample_data"


class EvalitaTask(StrEnum):
    """The ten Evalita-LLM task ids, in paper order (:data:`TASKS` describes each)."""

    WIC = "wic"
    TE = "te"
    SA = "sa"
    HS = "hs"
    FAQ = "faq"
    AT = "at"
    LS = "ls"
    NER = "ner"
    RE = "re"
    SUM = "sum"


class EvalitaOptions(TrackOptions):
    """What an Evalita request carries beyond model and setting: a subset of the tasks (None: all ten)."""

    tasks: list[EvalitaTask] | None = option(
        flag="--tasks",
        label="Tasks",
        help="evalita: only these task ids, e.g. wic,sa (a subset run: labelled, never ranked with full runs)",
        form=False,
    )

    @field_validator("tasks")
    @classmethod
    def _canonical(cls, value: list[EvalitaTask] | None) -> list[EvalitaTask] | None:
        return canonical_subset(value, EvalitaTask, "tasks")

    def variant(self) -> str | None:
        return "-".join(task.value for task in self.tasks) if self.tasks else None


class MetricSet(StrEnum):
    """The metric sets a prompt score may come from (link value, export option, results block name):
    ``lm-eval`` (what the harness computes: the paper's tables) and ``as-specified`` (the paper's own
    metrics); :mod:`leaderboard.tracks.evalita.metric_sets` defines them."""

    LM_EVAL = "lm-eval"
    AS_SPECIFIED = "as-specified"

    @property
    def label(self) -> str:
        return "lm-eval" if self is MetricSet.LM_EVAL else "as specified"


DEFAULT_METRIC_SET = MetricSet.LM_EVAL
METRIC_SET_NAMES: tuple[str, ...] = tuple(m.value for m in MetricSet)


def parse_task_ids(text: str) -> tuple[str, ...]:
    """``wic,sa`` → ``("wic", "sa")`` in paper order; an unknown id is refused listing the valid ones."""
    asked = [part.strip().lower() for part in text.split(",") if part.strip()]
    valid = [task.value for task in EvalitaTask]
    unknown = [task for task in asked if task not in valid]
    if not asked or unknown:
        raise ValueError(
            f"unknown task id(s) {', '.join(unknown) or '(none given)'}: choose among {', '.join(valid)}"
        )
    return tuple(task for task in valid if task in asked)


class TaskKind(StrEnum):
    """How the harness queries the model (paper Table 1, column "LLM eval")."""

    MULTIPLE_CHOICE = "multiple-choice"
    GENERATIVE = "generative"


class PromptPattern(StrEnum):
    """The prompt patterns of paper §4.2 (multiple choice) and §4.3 (generative)."""

    QUESTION = "question"
    TASK_QUESTION = "task description + question"
    QUESTION_ANSWERS = "question + answers"
    TASK_QUESTION_ANSWERS = "task description + question + answers"
    AFFIRMATIVE = "affirmative"
    TASK_AFFIRMATIVE = "task description + affirmative"
    REQUEST = "request"
    REQUEST_OUTPUT = "request + output"
    TASK_REQUEST = "task description + request"
    TASK_REQUEST_OUTPUT = "task description + request + output"


# The paper's prompt id for each pattern (p1…p6 multiple choice, p7…p10 generative).
PAPER_PROMPT_ID: Mapping[PromptPattern, str] = MappingProxyType(
    {
        PromptPattern.QUESTION: "p1",
        PromptPattern.TASK_QUESTION: "p2",
        PromptPattern.QUESTION_ANSWERS: "p3",
        PromptPattern.TASK_QUESTION_ANSWERS: "p4",
        PromptPattern.AFFIRMATIVE: "p5",
        PromptPattern.TASK_AFFIRMATIVE: "p6",
        PromptPattern.REQUEST: "p7",
        PromptPattern.REQUEST_OUTPUT: "p8",
        PromptPattern.TASK_REQUEST: "p9",
        PromptPattern.TASK_REQUEST_OUTPUT: "p10",
    }
)

_MC_PATTERNS = (
    PromptPattern.QUESTION,
    PromptPattern.TASK_QUESTION,
    PromptPattern.QUESTION_ANSWERS,
    PromptPattern.TASK_QUESTION_ANSWERS,
    PromptPattern.AFFIRMATIVE,
    PromptPattern.TASK_AFFIRMATIVE,
)


class UnknownTaskError(EvalitaError, LookupError):
    """A task or prompt id that is not in the suite; the message suggests the closest one."""


@dataclass(frozen=True)
class HarnessTask:
    """One lm-eval task that runs a prompt; ``part`` names the NER domain (``adg``/``fic``/``wn``)."""

    name: str
    part: str | None = None


@dataclass(frozen=True)
class PromptSpec:
    """One prompt of a task, exactly as the harness renders it.

    ``template`` and ``choices`` are Jinja templates over a dataset row.  A choice such
    as ``"{{A}}"`` is the text of an option taken from the row (the harness's
    ``doc_to_choice: "{{[A,B,C,D,E]}}"``).  Generative prompts have no choices.
    """

    id: str
    pattern: PromptPattern
    template: str
    harness_tasks: tuple[HarnessTask, ...]
    choices: tuple[str, ...] = ()

    @property
    def paper_id(self) -> str:
        """The paper's name for this prompt (``p1``…``p6``, ``p7``…``p10``)."""
        return PAPER_PROMPT_ID[self.pattern]

    @property
    def harness_task_names(self) -> tuple[str, ...]:
        return tuple(task.name for task in self.harness_tasks)


@dataclass(frozen=True)
class DatasetSpec:
    """Where the harness reads a task's data (a Hugging Face dataset)."""

    path: str
    test_split: str
    fewshot_split: str | None
    # Dataset configs; NER has one per domain, the others the default (empty).
    configs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Baseline:
    """A reference figure from paper §3 (0–100, as printed), shown next to the results.

    ``note`` says when the figure is not directly comparable (other metric or data).
    """

    label: str
    score: float
    note: str = ""


@dataclass(frozen=True)
class TaskSpec:
    """One of the ten Evalita-LLM tasks (paper Table 1)."""

    id: EvalitaTask
    abbrev: str
    name: str
    competence: str
    domain: str
    kind: TaskKind
    # Key of the metric in the harness output (``<metric>,none``) and how to call it.
    metric: str
    metric_label: str
    dataset: DatasetSpec
    prompts: tuple[PromptSpec, ...]
    baselines: tuple[Baseline, ...] = ()
    # Generative tasks: the harness's stop sequences (``generation_kwargs.until``).
    stop_sequences: tuple[str, ...] = ()
    description: str = ""
    _prompts_by_id: Mapping[str, PromptSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_prompts_by_id", _unique_index(self.prompts, f"prompt of task {str(self.id)!r}")
        )

    @cached_property
    def prompt_ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.prompts)

    def prompt(self, prompt_id: str) -> PromptSpec:
        """The prompt ``prompt_id``; raises :class:`UnknownTaskError` with a suggestion."""
        try:
            return self._prompts_by_id[prompt_id]
        except KeyError:
            raise UnknownTaskError(
                unknown_name("prompt", prompt_id, self.prompt_ids, f" for task {str(self.id)!r}")
            ) from None


def _unique_index(items: tuple[PromptSpec, ...] | tuple[TaskSpec, ...], what: str) -> Mapping[str, Any]:
    """``{item.id: item}``; defining an id twice is an error, never a silent overwrite."""
    index: dict[str, Any] = {}
    for item in items:
        if item.id in index:
            raise ValueError(f"{what} {str(item.id)!r} is defined twice")
        index[item.id] = item
    return MappingProxyType(index)


def _mc_prompts(
    harness_prefix: str, texts: tuple[tuple[str, tuple[str, ...]], ...]
) -> tuple[PromptSpec, ...]:
    """Six multiple-choice prompts ``p1``…``p6`` (patterns in paper order) from (template, choices)."""
    if len(texts) != len(_MC_PATTERNS):
        raise ValueError(f"{harness_prefix}: expected 6 prompts, got {len(texts)}")
    return tuple(
        PromptSpec(
            id=f"p{i}",
            pattern=pattern,
            template=template,
            choices=choices,
            harness_tasks=(HarnessTask(f"{harness_prefix}_prompt-{i}"),),
        )
        for i, (pattern, (template, choices)) in enumerate(zip(_MC_PATTERNS, texts, strict=True), start=1)
    )


def _gen_prompt(prompt_id: str, pattern: PromptPattern, template: str, *tasks: HarnessTask) -> PromptSpec:
    return PromptSpec(id=prompt_id, pattern=pattern, template=template, harness_tasks=tasks)


# --------------------------------------------------------------------------- texts
# Verbatim from the harness configs (YAML double-quoted scalars fold line breaks into
# spaces, which is why NER and REL read "… '&&NOENT&&'. Testo: '{{text}}' Entità:").

_WIC_Q = (
    "La parola: '{{sentence1[start1:end1]}}' nella frase: '{{sentence1}}' ha lo stesso significato "
    "della parola: '{{sentence2[start2:end2]}}' nella frase: '{{sentence2}}'?"
)
_WIC_QA = (
    "La parola '{{sentence1[start1:end1]}}' nella frase '{{sentence1}}' ha lo stesso significato "
    "della parola '{{sentence2[start2:end2]}}' nella frase '{{sentence2}}'?\nA: Sì\nB: No\nRisposta:"
)
_WIC_AFF = (
    "La parola: '{{sentence1[start1:end1]}}' nella frase: '{{sentence1}}' e la parola: "
    "'{{sentence2[start2:end2]}}' nella frase: '{{sentence2}}'"
)
_WIC_DESC = (
    "Devi determinare se una stessa parola usata in due frasi differenti ha lo stesso significato "
    "in entrambi i contesti. "
)
_WIC_AFF_CHOICES = ("non hanno lo stesso significato", "hanno lo stesso significato")

_TE_Q = "La frase: '{{text1}}' implica logicamente che la frase: '{{text2}}' sia vera?"
_TE_DESC = "Devi risolvere un compito di inferenza semantica. "
_TE_AFF = "Frase 1: '{{text1}}' Frase 2: '{{text2}}'"
_TE_AFF_CHOICES = (
    "La frase 1 implica logicamente che la frase 2 sia vera",
    "La frase 1 non implica logicamente che la frase 2 sia vera",
)

_SA_Q = "Qual è il sentiment espresso nel seguente tweet: '{{text}}'?"
_SA_DESC = "Devi svolgere un compito di analisi del sentiment. "
_SA_ANSWERS = "\nA: Positivo\nB: Negativo\nC: Neutro\nD: Misto\nRisposta:"
_SA_AFF = "Il seguente tweet: '{{text}}' esprime un sentiment"
# The harness uses "Neutrale" in the options although its p3/p4 texts say "Neutro".
_SA_CHOICES = ("Positivo", "Negativo", "Neutrale", "Misto")

_HS_Q = "C'è incitamento all'odio nel seguente tweet: '{{full_text}}'?"
_HS_DESC = "Devi svolgere un compito di identificazione di incitamento all'odio. "
_HS_AFF = "Il tweet: '{{full_text}}'"
_HS_AFF_CHOICES = ("non contiene incitamento all'odio", "contiene incitamento all'odio")

_FAQ_Q = "Rispondi alla seguente domanda: '{{question}}'"
_FAQ_ANSWERS = "\nA: {{A}}\nB: {{B}}\nC: {{C}}\nD: {{D}}\nRisposta:"
_FAQ_AFF = "La risposta alla domanda: '{{question}}' è:"
_FAQ_OPTIONS = ("{{A}}", "{{B}}", "{{C}}", "{{D}}")

_AT_Q = "Dato il seguente quesito di medicina: '{{Question}}' qual è la risposta corretta?"
_AT_ANSWERS = "\nA: {{A}}\nB: {{B}}\nC: {{C}}\nD: {{D}}\nE: {{E}}\nRisposta:"
_AT_AFF = "Dato il seguente quesito di medicina '{{Question}}' la risposta corretta è:"
_AT_OPTIONS = ("{{A}}", "{{B}}", "{{C}}", "{{D}}", "{{E}}")

_QA_DESC = "Devi risolvere un compito di risposte a domande. "
_MC_DESC = "Devi risolvere un compito a scelta multipla. "

_LS_REQ = (
    "Trova 10 parole che possono sostituire la parola racchiusa tra i marcatori <head> nella seguente "
    "frase: '{{context}}', mantenendo lo stesso significato. Elenca i lemmi (forme base) di queste parole, "
    "separandoli con una virgola, ad esempio: lemma1, lemma2, lemma3, lemma4, lemma5. Non aggiungere "
    "commenti o altro testo. Risposta:"
)
_LS_DESC = "Devi risolvere un compito di sostituzione lessicale. "

_NER_REQ = (
    "Estrai tutte le entità di tipo PER (persona), LOC (luogo) e ORG (organizzazione) dal testo seguente. "
    "Riporta ogni entità con il formato: Entità$Tipo, separando ciascuna coppia con ','. Se non ci sono "
    "entità da estrarre, rispondi con '&&NOENT&&'. Testo: '{{text}}' Entità:"
)
_NER_DESC = "Devi svolgere un compito di riconoscimento delle entità nei testi. "
NER_PARTS: tuple[str, ...] = ("adg", "fic", "wn")

_RE_REQ = (
    "Dato un documento medico devi estrarre tutte le misurazioni degli esami medici presenti. Riporta ogni "
    "relazione nel formato: misurazione$esame, separando ciascuna coppia con '%'. Se non ci sono relazioni "
    "da estrarre, rispondi con '&&NOREL&&'. Testo: '{{text}}' Relazioni:"
)
_RE_DESC = "Devi svolgere un compito di estrazione di relazioni da documenti medici. "

_SUM_REQ = "Riassumi il seguente articolo di giornale: '{{source}}'\nRiassunto:"
_SUM_DESC = "Devi risolvere un compito di sintesi automatica del testo. "

_YES_NO = ("No", "Sì")  # WIC label 0 = different meaning, 1 = same
_BA = ("B", "A")  # label 0 → "B: No/Falso", label 1 → "A: Sì/Vero"


def _ner_tasks(prompt_number: int) -> tuple[HarnessTask, ...]:
    # NER is scored per domain by three harness tasks; the prompt's score combines them
    # weighted by size, as the harness's own NER group does (``weight_by_size: True``).
    return tuple(HarnessTask(f"evalita-mp_ner_{part}_p{prompt_number}", part) for part in NER_PARTS)


# --------------------------------------------------------------------------- the suite

SUITE: tuple[TaskSpec, ...] = (
    TaskSpec(
        id=EvalitaTask.WIC,
        abbrev="WIC",
        name="Word in context",
        competence="Word disambiguation",
        domain="news",
        kind=TaskKind.MULTIPLE_CHOICE,
        metric="f1",
        metric_label="F1",
        dataset=DatasetSpec("evalitahf/word_in_context", "test", "dev", ("default",)),
        prompts=_mc_prompts(
            "evalita-mp_wic",
            (
                (_WIC_Q, _YES_NO),
                (_WIC_DESC + _WIC_Q, _YES_NO),
                (_WIC_QA, _BA),
                (_WIC_DESC + _WIC_QA, _BA),
                (_WIC_AFF, _WIC_AFF_CHOICES),
                (_WIC_DESC + _WIC_AFF, _WIC_AFF_CHOICES),
            ),
        ),
        baselines=(Baseline("Best system (SVM), WiC-ITA 2023", 85.00, "F1-macro"),),
        description="Does a word have the same meaning in two sentences?",
    ),
    TaskSpec(
        id=EvalitaTask.TE,
        abbrev="TE",
        name="Textual entailment",
        competence="Semantic inference",
        domain="news",
        kind=TaskKind.MULTIPLE_CHOICE,
        metric="acc",
        metric_label="Accuracy",
        dataset=DatasetSpec("evalitahf/textual_entailment", "test", "dev"),
        prompts=_mc_prompts(
            "evalita-mp_te",
            (
                (_TE_Q, ("Sì", "No")),
                (_TE_DESC + _TE_Q, ("Sì", "No")),
                (_TE_Q + "\nA: Sì\nB: No\nRisposta:", ("A", "B")),
                (_TE_DESC + _TE_Q + "\nA: Sì\nB: No\nRisposta:", ("A", "B")),
                (_TE_AFF, _TE_AFF_CHOICES),
                (_TE_DESC + _TE_AFF, _TE_AFF_CHOICES),
            ),
        ),
        baselines=(
            Baseline("Random guess", 50.00),
            Baseline("Always 'entailment'", 55.00),
            Baseline("Best system (EDITS), Evalita 2009", 71.00),
        ),
        description="Does the first sentence entail the second?",
    ),
    TaskSpec(
        id=EvalitaTask.SA,
        abbrev="SA",
        name="Sentiment analysis",
        competence="Text classification",
        domain="social",
        kind=TaskKind.MULTIPLE_CHOICE,
        metric="f1",
        metric_label="F1-macro",
        dataset=DatasetSpec("evalitahf/sentiment_analysis", "test", "train"),
        prompts=_mc_prompts(
            "evalita-mp_sa",
            (
                (_SA_Q, _SA_CHOICES),
                (_SA_DESC + _SA_Q, _SA_CHOICES),
                (_SA_Q + _SA_ANSWERS, ("A", "B", "C", "D")),
                (_SA_DESC + _SA_Q + _SA_ANSWERS, ("A", "B", "C", "D")),
                (_SA_AFF, _SA_CHOICES),
                (_SA_DESC + _SA_AFF, _SA_CHOICES),
            ),
        ),
        baselines=(
            Baseline("Random guess", 25.00),
            Baseline("Majority class", 41.63),
            Baseline("Best system, SENTIPOLC 2016", 66.38),
        ),
        description="Polarity of a tweet: positive, negative, neutral or mixed.",
    ),
    TaskSpec(
        id=EvalitaTask.HS,
        abbrev="HS",
        name="Hate speech",
        competence="Text classification",
        domain="social",
        kind=TaskKind.MULTIPLE_CHOICE,
        metric="f1",
        metric_label="F1-macro",
        dataset=DatasetSpec("evalitahf/hatespeech_detection", "test_all", "dev"),
        prompts=_mc_prompts(
            "evalita-mp_hs",
            (
                (_HS_Q, ("Falso", "Vero")),
                (_HS_DESC + _HS_Q, ("Falso", "Vero")),
                (_HS_Q + "\nA: Vero\nB: Falso\nRisposta:", _BA),
                # Sic: the harness's p4 offers "Sì/No" where p3 offers "Vero/Falso".
                (_HS_DESC + _HS_Q + "\nA: Sì\nB: No\nRisposta:", _BA),
                (_HS_AFF, _HS_AFF_CHOICES),
                (_HS_DESC + _HS_AFF, _HS_AFF_CHOICES),
            ),
        ),
        baselines=(
            Baseline("Most frequent class (Twitter)", 33.66),
            Baseline("SVM (Twitter)", 72.12),
            Baseline("Best system (Twitter), HaSpeeDe 2", 80.88),
            Baseline("Most frequent class (News)", 38.94),
            Baseline("SVM (News)", 62.10),
            Baseline("Best system (News), HaSpeeDe 2", 77.44),
        ),
        description="Does a tweet contain hate speech?",
    ),
    TaskSpec(
        id=EvalitaTask.FAQ,
        abbrev="FAQ",
        name="FAQ",
        competence="Question answering",
        domain="P.A.",
        kind=TaskKind.MULTIPLE_CHOICE,
        metric="acc",
        metric_label="Accuracy",
        dataset=DatasetSpec("evalitahf/faq", "test_1", "dev_1"),
        prompts=_mc_prompts(
            "evalita-mp_faq",
            (
                (_FAQ_Q, _FAQ_OPTIONS),
                (_QA_DESC + _FAQ_Q, _FAQ_OPTIONS),
                (_FAQ_Q + _FAQ_ANSWERS, ("A", "B", "C", "D")),
                (_MC_DESC + _FAQ_Q + _FAQ_ANSWERS, ("A", "B", "C", "D")),
                (_FAQ_AFF, _FAQ_OPTIONS),
                (_QA_DESC + _FAQ_AFF, _FAQ_OPTIONS),
            ),
        ),
        baselines=(
            Baseline("Lucene baseline, QA4FAQ 2016", 40.76, "c@1"),
            Baseline("Best system, QA4FAQ 2016", 44.39, "c@1"),
        ),
        description="Pick the answer to a citizen's question about a public service.",
    ),
    TaskSpec(
        id=EvalitaTask.AT,
        abbrev="AT",
        name="Admission tests",
        competence="Question answering",
        domain="scientific",
        kind=TaskKind.MULTIPLE_CHOICE,
        # The harness also reports acc_norm; the paper ranks on acc (Table 16).
        metric="acc",
        metric_label="Accuracy",
        dataset=DatasetSpec("evalitahf/admission_test", "test", "dev"),
        prompts=_mc_prompts(
            "evalita-mp_at",
            (
                (_AT_Q, _AT_OPTIONS),
                (_QA_DESC + _AT_Q, _AT_OPTIONS),
                (_AT_Q + _AT_ANSWERS, ("A", "B", "C", "D", "E")),
                (_MC_DESC + _AT_Q + _AT_ANSWERS, ("A", "B", "C", "D", "E")),
                (_AT_AFF, _AT_OPTIONS),
                (_QA_DESC + _AT_AFF, _AT_OPTIONS),
            ),
        ),
        baselines=(Baseline("GPT-3.5-turbo", 77.14, "accuracy on the original test set"),),
        description="Multiple-choice questions from Italian medical specialty admission tests.",
    ),
    TaskSpec(
        id=EvalitaTask.LS,
        abbrev="LS",
        name="Lexical substitution",
        competence="Word disambiguation",
        domain="news",
        kind=TaskKind.GENERATIVE,
        metric="f1",
        metric_label="F1",
        dataset=DatasetSpec("evalitahf/lexical_substitution", "test", "dev"),
        prompts=(
            _gen_prompt("p1", PromptPattern.REQUEST_OUTPUT, _LS_REQ, HarnessTask("evalita-mp_ls_prompt-1")),
            _gen_prompt(
                "p2",
                PromptPattern.TASK_REQUEST_OUTPUT,
                _LS_DESC + _LS_REQ,
                HarnessTask("evalita-mp_ls_prompt-2"),
            ),
        ),
        baselines=(
            Baseline("PSC baseline, Evalita 2009", 9.88, "F1, 'best' scoring"),
            Baseline("Best system, Evalita 2009", 7.64, "F1, 'best' scoring"),
            Baseline("IWN+PSC baseline, Evalita 2009", 25.19, "F1, 'oot' scoring"),
            Baseline("Best system, Evalita 2009", 38.82, "F1, 'oot' scoring"),
        ),
        stop_sequences=("</s>",),
        description="List words that can replace a marked word in context.",
    ),
    TaskSpec(
        id=EvalitaTask.NER,
        abbrev="NER",
        name="Entity recognition",
        competence="Information extraction",
        domain="mixed",
        kind=TaskKind.GENERATIVE,
        metric="f1",
        metric_label="F1",
        dataset=DatasetSpec("evalitahf/entity_recognition", "reduced_test", "trial", NER_PARTS),
        prompts=(
            _gen_prompt("p1", PromptPattern.REQUEST_OUTPUT, _NER_REQ, *_ner_tasks(1)),
            _gen_prompt("p2", PromptPattern.TASK_REQUEST_OUTPUT, _NER_DESC + _NER_REQ, *_ner_tasks(2)),
        ),
        baselines=(
            Baseline("CRF with gazetteers, NERMuD 2023", 83.00),
            Baseline("Best system (IT5/LLaMA), NERMuD 2023", 88.00, "F1-macro"),
            Baseline("Fine-tuned BERT, NERMuD 2023", 89.00),
        ),
        stop_sequences=("</s>", "\n"),
        description="Extract persons, locations and organisations (news, fiction, De Gasperi letters).",
    ),
    TaskSpec(
        id=EvalitaTask.RE,
        abbrev="REL",
        name="Relation extraction",
        competence="Information extraction",
        domain="scientific",
        kind=TaskKind.GENERATIVE,
        metric="f1",
        metric_label="F1",
        dataset=DatasetSpec("evalitahf/relation_extraction", "test", "dev"),
        prompts=(
            _gen_prompt("p1", PromptPattern.REQUEST_OUTPUT, _RE_REQ, HarnessTask("evalita-mp_re_prompt-1")),
            _gen_prompt(
                "p2",
                PromptPattern.TASK_REQUEST_OUTPUT,
                _RE_DESC + _RE_REQ,
                HarnessTask("evalita-mp_re_prompt-2"),
            ),
        ),
        baselines=(
            Baseline("GPT few-shot, CLinkaRT 2023", 36.79),
            Baseline("Fine-tuned mBERT, CLinkaRT 2023", 62.83),
            Baseline("Best system, CLinkaRT 2023", 62.99),
        ),
        stop_sequences=("</s>",),
        description="Link lab-test measurements to the tests in clinical cases.",
    ),
    TaskSpec(
        id=EvalitaTask.SUM,
        abbrev="SUM",
        name="Summarization",
        competence="Text generation",
        # Paper Table 1 says "wiki"; the data (Fanpage) are news articles.
        domain="wiki",
        kind=TaskKind.GENERATIVE,
        metric="rouge1",
        metric_label="ROUGE-1",
        # The harness config has no few-shot split for the full Fanpage test.
        dataset=DatasetSpec("ARTeLab/fanpage", "test", None),
        prompts=(
            # Sic: the harness names these "evalita-sp_…", not "evalita-mp_…".
            _gen_prompt("p1", PromptPattern.REQUEST, _SUM_REQ, HarnessTask("evalita-sp_sum_task_fp_p1")),
            _gen_prompt(
                "p2",
                PromptPattern.TASK_REQUEST,
                _SUM_DESC + _SUM_REQ,
                HarnessTask("evalita-sp_sum_task_fp_p2"),
            ),
        ),
        baselines=(Baseline("mBART (Fanpage)", 36.50, "ROUGE-1 of a fine-tuned model"),),
        stop_sequences=("</s>",),
        description="Summarise a news article.",
    ),
)

#: Task id → task, in paper order.
TASKS: Mapping[str, TaskSpec] = _unique_index(SUITE, "task")
TASK_IDS: tuple[str, ...] = tuple(TASKS)
if tuple(EvalitaTask) != TASK_IDS:  # the ids are the vocabulary's; the suite describes each, in order
    raise AssertionError(f"the suite describes {TASK_IDS}, the vocabulary names {tuple(EvalitaTask)}")


def get_task(task_id: str) -> TaskSpec:
    """The task ``task_id``; raises :class:`UnknownTaskError` ("Did you mean te?")."""
    try:
        return TASKS[task_id]
    except KeyError:
        raise UnknownTaskError(unknown_name("task", task_id, TASK_IDS)) from None


def tasks_of_kind(kind: TaskKind) -> tuple[TaskSpec, ...]:
    """The multiple-choice or the generative tasks, in paper order."""
    return tuple(task for task in SUITE if task.kind is kind)


@dataclass(frozen=True)
class HarnessTaskRef:
    """Where a harness task's score belongs in a results file."""

    task: TaskSpec
    prompt: PromptSpec
    part: str | None


def harness_index() -> Mapping[str, HarnessTaskRef]:
    """Harness task name → (task, prompt, part): how the worker files lm-eval's output."""
    return MappingProxyType(
        {
            harness.name: HarnessTaskRef(task, prompt, harness.part)
            for task in SUITE
            for prompt in task.prompts
            for harness in prompt.harness_tasks
        }
    )


def all_harness_tasks(tasks: Iterable[TaskSpec] = SUITE) -> tuple[str, ...]:
    """Every harness task the full suite (or ``tasks``, a subset run) runs — 48 names for all ten — in order."""
    return tuple(name for task in tasks for prompt in task.prompts for name in prompt.harness_task_names)


def suite_datasets() -> tuple[tuple[str, str | None], ...]:
    """``(dataset path, config name)`` pairs the harness tasks read, without duplicates (what prefetch fetches)."""
    pairs: list[tuple[str, str | None]] = []
    for task in SUITE:
        for config in task.dataset.configs or (None,):
            if (task.dataset.path, config) not in pairs:
                pairs.append((task.dataset.path, config))
    return tuple(pairs)
