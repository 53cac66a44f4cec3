"""The LLM-as-judge track's one definition: the rubric, its prompts, its labels and its About text.

The rubric follows Donati et al., "Do Large Language Models understand how to be judges?"
(``shared/seeds/002_…``): five criteria — coherence, consistency, fluency, relevance,
ordering — each scored 1–5 by a judge that plays an impartial evaluator and justifies its
score in Italian, answering with ``{"score": …, "explanation": …}``.  Each criterion's
prompt has the structure of the paper's Appendix A templates (role and task, the
criterion's definition, its sub-criteria, the evaluation procedure, the five score levels,
the request for an Italian explanation, the JSON output shape, a few-shot slot, then the
document and the summary); the About text follows Appendix B's annotation guidelines
(task, definition, sub-criteria, 1–5 scale).

Licence: the paper's few-shot examples and annotations are published under a
no-derivatives licence, so nothing of them is copied here.  Every text below is the
project's own wording — the ``project`` protocol's prompts; the ``paper`` protocol quotes
Appendix A's own templates, with attribution, in :mod:`leaderboard.tracks.judge.paper` —
and a maintainer can point the judge at the paper's examples through a user-provided
few-shot file (:class:`FewShotExample`, loaded by
:func:`leaderboard.tracks.judge.data.load_few_shot`; the worker's ``--judge-examples``).

Everything else derives from :data:`RUBRIC`: the harness prompts (:func:`render_prompt`),
the result columns (:mod:`leaderboard.tracks.judge.app.tables`) and the About page
(:func:`about_markdown`).  Pure data and pure functions: no I/O, no torch, no lm-eval.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from pydantic import field_validator, model_validator

from eval_queue.errors import EvalitaError
from eval_queue.text import unknown_name
from eval_queue.tracks import TrackOptions, option

#: The track's name in request and results files (its spec: :mod:`.spec`).
TRACK = "judge"


class JudgeMode(StrEnum):
    """Judge track: what the judge model scores."""

    #: The annotated set: the judge's scores are compared with human rubric scores.
    META = "meta"
    #: The generations of another run (``judge_target``, a results path).
    GENERATIONS = "generations"


class JudgeProtocol(StrEnum):
    """Judge track: how the judge is prompted and decodes (docs/TRACKS.md, "Fidelity to the papers")."""

    #: The project's Italian rubric, zero-shot, the answer prefilled with ``{"score":``, 256 greedy
    #: tokens: what even a small judge answers in a readable shape (the default; the bundled sample).
    PROJECT = "project"
    #: Table 1's: Appendix A's English templates (:mod:`~leaderboard.tracks.judge.paper`) with the
    #: worker's examples file in their few-shot slots, no prefill, the model's own generation
    #: settings and a budget a reasoning model can think in.
    PAPER = "paper"


#: Version of the rubric text.  Stored in every results file: figures obtained with
#: different prompts are never put side by side silently.  Bump it when a prompt changes.
#: /2: the judge's answer is prefilled with :data:`ANSWER_PREFIX` (the prompts are /1's).
RUBRIC_VERSION = "evalita-judge-rubric/2"

#: The score scale (paper §3: discrete 1–5 per criterion).
SCORE_MIN = 1
SCORE_MAX = 5
SCORES: tuple[int, ...] = tuple(range(SCORE_MIN, SCORE_MAX + 1))

#: The keys of the judge's answer (Appendix A's output template).
SCORE_KEY = "score"
EXPLANATION_KEY = "explanation"

#: Level names, shared by every criterion (Italian in the prompts, agreeing with "punteggio"; English in the UI).
LEVEL_NAMES_IT: tuple[str, ...] = ("molto scarso", "scarso", "discreto", "buono", "eccellente")
LEVEL_NAMES_EN: tuple[str, ...] = ("very poor", "poor", "fair", "good", "excellent")


class Criterion(StrEnum):
    """The five rubric criteria, in the paper's order."""

    COHERENCE = "coherence"
    CONSISTENCY = "consistency"
    FLUENCY = "fluency"
    RELEVANCE = "relevance"
    ORDERING = "ordering"

    @property
    def spec(self) -> CriterionSpec:
        return RUBRIC[self]

    @property
    def label(self) -> str:
        return RUBRIC[self].label


#: lm-eval task names: one generation task per criterion (``harness/_judge_template_yaml``).
HARNESS_TASK_PREFIX = "evalita-judge"


def harness_task_name(criterion: Criterion) -> str:
    """``evalita-judge_coherence`` …: the one place that builds a judge task's name."""
    return f"{HARNESS_TASK_PREFIX}_{criterion.value}"


def judge_variant(
    mode: JudgeMode, target: str | None = None, protocol: JudgeProtocol = JudgeProtocol.PROJECT
) -> str | None:
    """The ``<variant>`` of a judge request's and results file's name (docs/TRACKS.md).

    None for ``meta``; for ``generations``, ``gen-`` and 12 hex digits of the SHA-1 of the
    target results path, so judging two runs of one model never collides and the name stays
    short and safe whatever the path (the path itself is in the file).  The ``paper``
    protocol appends ``paper`` (``paper`` alone for ``meta``): a model judged both ways has
    two requests, never one taking the place of the other; ``project`` adds nothing, so the
    names of files written before protocols existed are unchanged.
    """
    parts: list[str] = []
    if mode is JudgeMode.GENERATIONS:
        if not target:
            raise ValueError("judging generations needs the results path of the run to judge")
        parts.append("gen-" + hashlib.sha1(target.encode()).hexdigest()[:12])
    if protocol is JudgeProtocol.PAPER:
        parts.append(JudgeProtocol.PAPER.value)
    return "-".join(parts) or None


class JudgeOptions(TrackOptions):
    """What a judge request carries: what the judge scores (a target run implies its generations)."""

    #: ``meta`` (None: the annotated set) or ``generations`` (of the run at ``judge_target``).
    judge_mode: JudgeMode | None = option()
    judge_target: str | None = option(
        flag="--judge-target",
        label="Judge the outputs of run … (optional results path; empty: the annotated set)",
        help="judge: score the generations of this results file (default: the annotated set)",
        placeholder="org/model/results_<timestamp>_<precision>_0shot.json",
    )
    #: None: ``project``.  ``paper`` runs only on a worker with an examples file (``--judge-examples``).
    judge_protocol: JudgeProtocol | None = option(
        flag="--judge-protocol",
        label="Judge protocol",
        help="judge: project (default: the project's zero-shot Italian rubric) or paper (Table 1's "
        "protocol: Appendix A's few-shot templates, the model's own generation settings; needs a "
        "worker with the paper's examples file)",
        choice_labels={
            JudgeProtocol.PROJECT.value: "project (zero-shot Italian rubric)",
            JudgeProtocol.PAPER.value: "paper (Table 1: Appendix A, few-shot)",
        },
    )

    @model_validator(mode="before")
    @classmethod
    def _target_means_generations(cls, raw: Any) -> Any:
        if isinstance(raw, dict):
            target = raw.get("judge_target")
            raw = {**raw, "judge_target": target.strip() or None if isinstance(target, str) else target}
            if raw["judge_target"] and raw.get("judge_mode") is None:
                raw["judge_mode"] = JudgeMode.GENERATIONS
        return raw

    @model_validator(mode="after")
    def _target_with_generations(self) -> JudgeOptions:
        wants_target = self.judge_mode is JudgeMode.GENERATIONS
        if wants_target and not self.judge_target:
            raise ValueError("judge_mode 'generations' needs judge_target (the results path to judge)")
        if self.judge_target is not None and not wants_target:
            raise ValueError("judge_target is only used with judge_mode 'generations'")
        return self

    @field_validator("judge_protocol")
    @classmethod
    def _project_is_the_default(cls, value: JudgeProtocol | None) -> JudgeProtocol | None:
        # One request file per measurement: "project" written out is the same request as none.
        return None if value is JudgeProtocol.PROJECT else value

    @property
    def mode(self) -> JudgeMode:
        return self.judge_mode or JudgeMode.META

    @property
    def protocol(self) -> JudgeProtocol:
        return self.judge_protocol or JudgeProtocol.PROJECT

    def variant(self) -> str | None:
        return judge_variant(self.mode, self.judge_target, self.protocol)


class UnknownCriterionError(EvalitaError, LookupError):
    """A criterion name that is not in the rubric; the message suggests the closest one."""


def parse_criterion(value: str) -> Criterion:
    """``"coherence"`` → :attr:`Criterion.COHERENCE`; an unknown name fails with a suggestion."""
    try:
        return Criterion(value)
    except ValueError:
        raise UnknownCriterionError(unknown_name("criterion", value, [c.value for c in Criterion])) from None


@dataclass(frozen=True)
class SubCriterion:
    """One aspect the judge must weigh (Appendix A "Evaluation Criteria")."""

    name: str
    text: str


@dataclass(frozen=True)
class Guideline:
    """The human annotators' guideline for one criterion (Appendix B), shown on the About page.

    ``scale`` holds one short description per score, 1 to 5.
    """

    task: str
    definition: str
    subcriteria: tuple[SubCriterion, ...]
    scale: tuple[str, str, str, str, str]


@dataclass(frozen=True)
class CriterionSpec:
    """One criterion: its labels, the Italian prompt parts and the English guideline.

    ``levels`` holds the prompt's description of each score, 1 to 5.  ``compares_source``
    is false for fluency, which judges the summary's language alone (the document is
    still shown to the judge, as in the paper's template).
    """

    criterion: Criterion
    label: str
    label_it: str
    task_it: str
    definition_it: str
    subcriteria_it: tuple[SubCriterion, ...]
    procedure_it: tuple[str, ...]
    levels_it: tuple[str, str, str, str, str]
    guideline: Guideline
    compares_source: bool = True


_READ_SOURCE = (
    "Leggi con attenzione il testo originale e individuane i fatti, gli eventi e i dettagli principali."
)
_COMPARE = (
    "Esamina il riassunto confrontandolo con il testo originale alla luce dei sottocriteri elencati sopra."
)


def _assign(name: str) -> str:
    return f"Assegna un punteggio di {name} da 1 a 5 secondo la scala seguente e spiega la tua scelta."


_COHERENCE = CriterionSpec(
    criterion=Criterion.COHERENCE,
    label="Coherence",
    label_it="Coerenza",
    task_it=(
        "la coerenza di un riassunto rispetto al testo da cui è tratto, cioè quanto il riassunto è "
        "organizzato e presenta le informazioni del testo in modo logico e strutturato"
    ),
    definition_it=(
        "La coerenza indica quanto le frasi del riassunto si legano tra loro fino a formare un discorso "
        "unitario. Un riassunto coerente sviluppa le idee principali seguendo un filo logico chiaro, senza "
        "salti improvvisi e senza fatti accostati l'uno all'altro senza collegamento, così che il lettore "
        "possa seguire il ragionamento o la narrazione senza fatica."
    ),
    subcriteria_it=(
        SubCriterion(
            "Struttura e organizzazione logica",
            "le idee si susseguono in una progressione riconoscibile (apertura, sviluppo, chiusura) che "
            "rispecchia quella del testo originale.",
        ),
        SubCriterion(
            "Transizioni",
            "il passaggio da una frase all'altra e da un paragrafo all'altro è accompagnato da connettivi e "
            "collegamenti che aiutano la comprensione.",
        ),
        SubCriterion(
            "Chiarezza e concisione",
            "il linguaggio è preciso e privo di ambiguità e trasmette i concetti essenziali senza "
            "complicazioni inutili.",
        ),
    ),
    procedure_it=(_READ_SOURCE, _COMPARE, _assign("coerenza")),
    levels_it=(
        "Il riassunto è disordinato e procede per salti bruschi; il filo logico manca quasi del tutto ed è "
        "difficile capire come i concetti siano collegati.",
        "Si nota un tentativo di organizzazione, ma il testo resta frammentato: i cambi di argomento sono "
        "improvvisi, i punti chiave non sono amalgamati in un discorso scorrevole e la lettura risulta "
        "spezzata.",
        "Il riassunto è organizzato in modo accettabile e la progressione è nel complesso logica; le "
        "transizioni ci sono, ma non sempre sono fluide.",
        "Il riassunto è ben strutturato, con un ordine delle idee chiaro e transizioni scorrevoli; i "
        "collegamenti tra i concetti sono evidenti e il testo si segue facilmente.",
        "La coerenza è esemplare: ogni passaggio è raccordato perfettamente e il contenuto del testo "
        "originale è presentato in modo chiaro e unitario.",
    ),
    guideline=Guideline(
        task="Judge how logically and clearly the summary lays out the information of the text.",
        definition="How well the sentences connect into one unified text, without abrupt jumps or breaks.",
        subcriteria=(
            SubCriterion("Logical progression", "ideas follow a natural, recognisable thread."),
            SubCriterion("Clarity and concision", "sentences say what they mean, briefly."),
            SubCriterion("Transitions", "connectives tie sentences and paragraphs together."),
        ),
        scale=(
            "disorganised, no transitions, the thread is hard to follow",
            "fragmented, abrupt jumps, the narrative barely flows",
            "mostly logical progression, transitions present but uneven",
            "clear structure, smooth transitions, easy to follow",
            "flawless: every passage connects to the next",
        ),
    ),
)

_CONSISTENCY = CriterionSpec(
    criterion=Criterion.CONSISTENCY,
    label="Consistency",
    label_it="Consistenza",
    task_it=(
        "la consistenza di un riassunto rispetto al testo da cui è tratto, cioè la sua fedeltà ai fatti "
        "riportati nel testo"
    ),
    definition_it=(
        "La consistenza misura quanto il riassunto riporta in modo fedele e accurato il contenuto fattuale "
        "del testo originale, senza contraddizioni, imprecisioni o informazioni che il testo non sostiene. "
        "Ogni affermazione del riassunto deve poter essere verificata nel testo originale."
    ),
    subcriteria_it=(
        SubCriterion(
            "Accuratezza dei fatti",
            "nomi, date, numeri, luoghi e gli altri fatti espliciti sono riportati correttamente; confronta "
            "ogni affermazione del riassunto con il testo originale.",
        ),
        SubCriterion(
            "Assenza di contraddizioni",
            "nessuna parte del riassunto afferma il contrario di quanto dice il testo originale.",
        ),
        SubCriterion(
            "Assenza di informazioni inventate",
            "il riassunto non aggiunge nulla che nel testo originale non compaia; ogni aggiunta non "
            "giustificata va segnalata.",
        ),
        SubCriterion(
            "Inferenze corrette",
            "le deduzioni e le conclusioni del riassunto sono sostenute in modo logico dal testo originale.",
        ),
        SubCriterion(
            "Coerenza terminologica",
            "persone, enti e concetti chiave sono indicati con termini compatibili con quelli del testo "
            "originale; la parafrasi è ammessa se non altera il significato.",
        ),
    ),
    procedure_it=(_READ_SOURCE, _COMPARE, _assign("consistenza")),
    levels_it=(
        "Il riassunto contiene gravi errori fattuali, contraddizioni o dettagli inventati che stravolgono il "
        "testo originale: può descrivere eventi mai avvenuti o alterare informazioni cruciali al punto da "
        "non rappresentarlo più.",
        "Il riassunto presenta più errori e incongruenze: alcuni fatti chiave sono corretti, ma date, nomi o "
        "dettagli sbagliati o aggiunti danno un'immagine fuorviante del testo originale.",
        "Il riassunto è nel complesso accurato, ma contiene piccoli errori, termini vaghi o parafrasi "
        "imprecise che ne riducono la precisione.",
        "Il riassunto è fedele al testo originale; le poche differenze sono trascurabili, riguardano la "
        "forma e non cambiano il significato dei fatti.",
        "Il riassunto è del tutto fedele al testo originale: ogni fatto e ogni dettaglio è riportato "
        "correttamente, senza aggiunte né contraddizioni.",
    ),
    guideline=Guideline(
        task="Check the facts of the summary against the original text.",
        definition=(
            "Faithfulness to the facts: no contradictions, no errors, nothing that the source does not say."
        ),
        subcriteria=(
            SubCriterion("Factual accuracy", "every statement matches a fact of the source."),
            SubCriterion("No contradictions", "nothing in the summary contradicts the source."),
            SubCriterion("No hallucinations", "no invented or added information."),
            SubCriterion("Sound inference", "what the summary infers is supported by the source."),
            SubCriterion("Aligned terminology", "terms agree with the source's, especially technical ones."),
        ),
        scale=(
            "many inaccuracies and invented details",
            "several errors and discrepancies",
            "accurate on the whole, with minor inaccuracies",
            "a very few negligible discrepancies",
            "entirely faithful to the facts of the text",
        ),
    ),
)

_FLUENCY = CriterionSpec(
    criterion=Criterion.FLUENCY,
    label="Fluency",
    label_it="Fluidità",
    task_it="la fluidità di un riassunto, cioè la qualità della sua lingua e la facilità con cui si legge",
    definition_it=(
        "La fluidità riguarda la leggibilità e la qualità della scrittura del riassunto: grammatica, "
        "ortografia, punteggiatura, scelta delle parole e costruzione delle frasi. Un riassunto fluido non "
        "contiene errori che ne rendano difficile la lettura o la comprensione. Per questo criterio conta "
        "soltanto la lingua del riassunto, non la sua fedeltà al testo originale."
    ),
    subcriteria_it=(
        SubCriterion("Grammatica", "concordanze, tempi verbali e sintassi sono corretti e coerenti."),
        SubCriterion("Ortografia", "non ci sono parole scritte in modo errato né refusi."),
        SubCriterion(
            "Punteggiatura", "i segni di punteggiatura sono usati correttamente e aiutano la chiarezza."
        ),
        SubCriterion(
            "Scelta lessicale", "il vocabolario è adatto al contesto, né troppo ricercato né troppo povero."
        ),
        SubCriterion("Struttura delle frasi", "le frasi sono ben costruite, varie e di lunghezza adeguata."),
    ),
    procedure_it=(
        "Leggi con attenzione il riassunto.",
        "Cerca gli errori di grammatica, di ortografia e di punteggiatura, valuta quanto sono frequenti e "
        "gravi e se il lessico è adatto al contesto.",
        _assign("fluidità"),
    ),
    levels_it=(
        "Errori numerosi e gravi di grammatica, ortografia, punteggiatura e costruzione rendono il "
        "riassunto molto difficile da leggere.",
        "Errori frequenti disturbano la comprensione; la costruzione delle frasi e il lessico sono poco "
        "adeguati e la lettura procede a scatti.",
        "Ci sono errori o espressioni goffe, ma non impediscono di capire il riassunto.",
        "Il riassunto è scritto bene, con qualche errore isolato e lieve; la lettura è scorrevole.",
        "Il riassunto è impeccabile: grammatica, ortografia, punteggiatura, lessico e struttura delle frasi "
        "sono curati e la lettura è del tutto naturale.",
    ),
    guideline=Guideline(
        task="Judge the language of the summary: grammar, spelling, punctuation and style.",
        definition="Readability, and the absence of language errors.",
        subcriteria=(
            SubCriterion("Grammar", "no grammatical errors."),
            SubCriterion("Spelling", "every word spelt correctly."),
            SubCriterion("Punctuation", "punctuation used where and as it should be."),
            SubCriterion("Word choice", "vocabulary suited to the context, and varied."),
            SubCriterion("Sentence structure", "well-built sentences of a sensible length."),
        ),
        scale=(
            "many serious errors that stop the reader",
            "frequent errors that get in the way of understanding",
            "minor errors that do not hinder reading",
            "isolated small errors; it reads smoothly",
            "impeccable in every respect",
        ),
    ),
    compares_source=False,
)

_RELEVANCE = CriterionSpec(
    criterion=Criterion.RELEVANCE,
    label="Relevance",
    label_it="Rilevanza",
    task_it=(
        "la rilevanza di un riassunto rispetto al testo da cui è tratto, cioè se il riassunto contiene "
        "soltanto i contenuti essenziali del testo"
    ),
    definition_it=(
        "La rilevanza indica quanto il riassunto si limita ai contenuti più importanti del testo originale. "
        "Un riassunto rilevante si concentra sui punti chiave, non aggiunge dettagli ridondanti, marginali o "
        "inutili e non tralascia nulla di essenziale."
    ),
    subcriteria_it=(
        SubCriterion(
            "Copertura dei contenuti",
            "il riassunto riporta gli argomenti, i dati e le idee principali del testo originale, "
            "rispettandone l'intento.",
        ),
        SubCriterion(
            "Concisione e chiarezza",
            "il contenuto è espresso in modo breve ma completo, senza giri di parole che confondono il lettore.",
        ),
        SubCriterion(
            "Eliminazione del superfluo",
            "il riassunto evita ripetizioni e dettagli di contorno che non servono a capire il testo originale.",
        ),
        SubCriterion(
            "Omissioni critiche",
            "non manca nessun elemento necessario per una comprensione completa e corretta del testo originale.",
        ),
    ),
    procedure_it=(_READ_SOURCE, _COMPARE, _assign("rilevanza")),
    levels_it=(
        "Il riassunto non riporta quasi nessuno dei punti chiave ed è appesantito da dettagli irrilevanti, "
        "ridondanti o errati; le omissioni danno un quadro distorto o incompleto del testo originale.",
        "Il riassunto coglie alcuni punti principali, ma trascura o travisa aspetti importanti; le "
        "informazioni superflue diluiscono il messaggio.",
        "Il riassunto coglie più della metà dei punti chiave; mancano alcuni dettagli secondari e c'è "
        "qualche ripetizione o informazione non necessaria.",
        "Il riassunto include quasi tutti i punti importanti ed è chiaro e sintetico; le rare omissioni non "
        "compromettono la comprensione.",
        "Il riassunto coglie tutti i punti essenziali con le loro sfumature, è molto conciso e non contiene "
        "nulla di superfluo: è una rappresentazione precisa e completa del testo originale.",
    ),
    guideline=Guideline(
        task="Judge whether the summary keeps the essential content of the source, and only that.",
        definition="The key points are in; superfluous or irrelevant details are out.",
        subcriteria=(
            SubCriterion("Main ideas", "the central concepts of the source are present."),
            SubCriterion("Concision", "brief, yet complete."),
            SubCriterion("No redundancy", "nothing repeated without need."),
            SubCriterion("No critical omissions", "no essential concept left out."),
        ),
        scale=(
            "almost every key point missing; much irrelevant information",
            "some main points, important aspects left out; superfluous details",
            "more than half of the key points; some redundancy or minor omissions",
            "almost every essential point; minimal redundancy",
            "every key point, extremely concise",
        ),
    ),
)

_ORDERING = CriterionSpec(
    criterion=Criterion.ORDERING,
    label="Ordering",
    label_it="Ordinamento",
    task_it=(
        "l'ordinamento di un riassunto rispetto al testo da cui è tratto, cioè quanto la sequenza delle "
        "informazioni nel riassunto rispecchia quella del testo originale"
    ),
    definition_it=(
        "L'ordinamento indica quanto la successione delle informazioni nel riassunto segue quella del "
        "testo originale. Un riassunto ben ordinato presenta i punti chiave nella stessa sequenza in cui "
        "compaiono nel testo e ne mantiene la struttura narrativa o argomentativa."
    ),
    subcriteria_it=(
        SubCriterion(
            "Ordine cronologico o logico",
            "se il testo originale procede in ordine di tempo o per passaggi argomentativi, il riassunto "
            "mantiene quella struttura; ogni deviazione va penalizzata in base a quanto altera la progressione.",
        ),
        SubCriterion(
            "Raggruppamento",
            "le informazioni collegate tra loro sono presentate insieme, come nel testo originale.",
        ),
        SubCriterion(
            "Effetto sulla comprensione",
            "valuta quanto spostamenti, omissioni o inserimenti nella sequenza rendono più difficile seguire "
            "il filo del testo originale.",
        ),
    ),
    procedure_it=(
        "Leggi il testo originale facendo attenzione all'ordine in cui presenta fatti, eventi e dettagli.",
        "Confronta l'ordine delle informazioni nel riassunto con quello del testo originale, alla luce dei "
        "sottocriteri elencati sopra.",
        _assign("ordinamento"),
    ),
    levels_it=(
        "La struttura del riassunto è completamente diversa da quella del testo originale: i punti chiave "
        "sono fuori posto, intere parti risultano invertite o mescolate e il lettore fatica a ricostruire "
        "la vicenda.",
        "Gran parte del riassunto non segue l'ordine del testo originale: diversi passaggi sono spostati o "
        "mancano e, anche se si intuisce una struttura, la narrazione risulta sconnessa.",
        "Il riassunto conserva l'ordine del testo originale in alcune parti e lo altera in altre; il filo si "
        "segue, ma con meno facilità che nel testo originale.",
        "Il riassunto segue quasi sempre la sequenza del testo originale; le poche deviazioni sono minime e "
        "non ostacolano la comprensione.",
        "Il riassunto riproduce fedelmente la struttura del testo originale: tutti i passaggi chiave "
        "compaiono nello stesso ordine e il lettore segue senza sforzo la progressione originale.",
    ),
    guideline=Guideline(
        task="Judge whether the order of the information in the summary follows the source.",
        definition="How closely the sequence of information matches the structure of the source.",
        subcriteria=(
            SubCriterion("Chronological or logical order", "events or ideas keep the source's sequence."),
            SubCriterion("Grouping", "related information is presented together."),
            SubCriterion("Effect on comprehension", "the order chosen helps the reader understand."),
        ),
        scale=(
            "an entirely different sequence; confusing",
            "many shifts that disturb the flow",
            "some sequences kept, some deviations",
            "order mostly respected; minimal deviations",
            "the same order as the source",
        ),
    ),
)

#: The rubric, in the paper's order.  The one source of truth for everything judge-related.
RUBRIC: Mapping[Criterion, CriterionSpec] = MappingProxyType(
    {spec.criterion: spec for spec in (_COHERENCE, _CONSISTENCY, _FLUENCY, _RELEVANCE, _ORDERING)}
)
CRITERIA: tuple[Criterion, ...] = tuple(RUBRIC)

# --------------------------------------------------------------------------- prompts


@dataclass(frozen=True)
class FewShotExample:
    """One worked example for the few-shot slot of one criterion's prompt (user-provided file)."""

    criterion: Criterion
    document: str
    summary: str
    score: int
    explanation: str


def answer_json(score: int | str, explanation: str) -> str:
    """The judge's answer as the prompt asks for it: ``{"score": 4, "explanation": "…"}``."""
    return json.dumps({SCORE_KEY: score, EXPLANATION_KEY: explanation}, ensure_ascii=False)


def _input_block(document: str, summary: str) -> str:
    return (
        "<Input>\n"
        f"<Testo_originale>\n{document.strip()}\n</Testo_originale>\n"
        f"<Riassunto>\n{summary.strip()}\n</Riassunto>\n"
        "</Input>"
    )


#: Where the prompt hands over to the judge; the answer is expected right after it.
OUTPUT_OPEN = "<Output>"
OUTPUT_CLOSE = "</Output>"
#: Words that open the item to judge; a judge that writes them again is inventing a new item.
NOW_EVALUATE = "Ora valuta:"
#: Stop sequences for the harness: the closing tag, or the start of another example.
STOP_SEQUENCES: tuple[str, ...] = (OUTPUT_CLOSE, "<Input>", NOW_EVALUATE)
#: Cap on the judge's answer: the score, then an explanation of two or three sentences
#: (about 100–200 tokens in Italian for most tokenizers).  With the score first (the
#: prefill below) a longer explanation cut short still gives its score; a tight cap keeps
#: a small judge that never closes its JSON from decoding for minutes per item.
MAX_ANSWER_TOKENS = 256

#: The start of the judge's answer, written for it (lm-eval's ``gen_prefix``: inside the
#: chat template it opens the assistant's turn).  The paper's output shape is unchanged;
#: only its first characters are given, so a judge — even a small one — answers with the
#: score first instead of drifting into prose.  Part of the answer: :func:`judge_answer`.
ANSWER_PREFIX = f'{{"{SCORE_KEY}":'


def judge_answer(generated: str, prefix: str = ANSWER_PREFIX) -> str:
    """The judge's whole answer: the prefilled start and what the model generated after it."""
    return prefix + generated


def _few_shot_block(examples: Sequence[FewShotExample]) -> str:
    blocks = []
    for number, example in enumerate(examples, start=1):
        blocks.append(
            f"Esempio {number}:\n{_input_block(example.document, example.summary)}\n"
            f"{OUTPUT_OPEN}\n{answer_json(example.score, example.explanation)}\n{OUTPUT_CLOSE}"
        )
    return "Esempi di valutazione:\n\n" + "\n\n".join(blocks) + "\n\n"


def render_prompt(
    criterion: Criterion, document: str, summary: str, few_shot: Sequence[FewShotExample] = ()
) -> str:
    """The whole prompt the judge sees for one (document, summary, criterion).

    Zero-shot unless ``few_shot`` is given; examples of another criterion are an error
    (a mixed-up few-shot file must not silently teach the wrong scale).
    """
    spec = RUBRIC[criterion]
    wrong = [e.criterion.value for e in few_shot if e.criterion is not criterion]
    if wrong:
        raise ValueError(
            f"few-shot examples for {', '.join(sorted(set(wrong)))} given to the {criterion} prompt"
        )
    name = spec.label_it.lower()
    subcriteria = "\n".join(f"- {s.name}: {s.text}" for s in spec.subcriteria_it)
    procedure = "\n".join(f"{i}. {step}" for i, step in enumerate(spec.procedure_it, start=1))
    levels = "\n".join(
        f"- Punteggio {score} ({LEVEL_NAMES_IT[score - 1]}): {text}"
        for score, text in zip(SCORES, spec.levels_it, strict=True)
    )
    # The score is shown unquoted: a quoted placeholder invites answers like "4" (which
    # the parser accepts, but a plain number is what the scale means).
    template = (
        f'{{"{SCORE_KEY}": <numero intero da {SCORE_MIN} a {SCORE_MAX}>, '
        f'"{EXPLANATION_KEY}": "<spiegazione in italiano del punteggio, basata sul criterio di {name}>"}}'
    )
    return (
        f"Sei un valutatore imparziale. Il tuo compito è valutare {spec.task_it}, assegnando un punteggio "
        f"da {SCORE_MIN} a {SCORE_MAX} e giustificandolo con una spiegazione dettagliata in italiano.\n\n"
        f"Definizione del criterio ({spec.label_it}): {spec.definition_it}\n\n"
        f"Sottocriteri da considerare:\n{subcriteria}\n\n"
        f"Procedura di valutazione:\n{procedure}\n\n"
        f"Scala dei punteggi:\n{levels}\n\n"
        "Nella spiegazione, scritta in italiano, motiva il punteggio citando esempi concreti tratti dal "
        "riassunto e, dove serve, dal testo originale.\n\n"
        "Formato della risposta: rispondi soltanto con un oggetto JSON che inizia con { e finisce con }, "
        f'con le chiavi "{SCORE_KEY}" e "{EXPLANATION_KEY}", secondo questo modello (sostituisci i valori '
        f"tra < > e togli le parentesi angolari):\n{template}\n"
        "Non scrivere nulla prima o dopo il JSON.\n\n"
        f"{_few_shot_block(few_shot) if few_shot else ''}"
        f"{NOW_EVALUATE}\n{_input_block(document, summary)}\n{OUTPUT_OPEN}"
    )


# --------------------------------------------------------------------------- About


def about_markdown() -> str:
    """The About text: what the track measures and the annotation guideline of each criterion."""
    lines = [
        "### LLM as judge (Donati et al.)",
        "",
        "A model acts as a **judge** of Italian summaries: for each (article, summary) it scores five "
        f"criteria from {SCORE_MIN} to {SCORE_MAX} and explains each score in Italian, answering "
        f'`{{"{SCORE_KEY}": …, "{EXPLANATION_KEY}": …}}`. Each criterion has its own prompt '
        "(impartial evaluator, definition, sub-criteria, the five score levels, the output format). An "
        "answer whose JSON cannot be read, or whose score is not a whole number from 1 to 5, is counted "
        "as **unparsed**, never as a score; the unparsed rate is shown beside every figure.",
        "",
        "**Judges leaderboard.** Judges are compared with human scores on an annotated set: Spearman's ρ "
        "(with its p-value) and mean absolute error per criterion and over all criteria, the positive bias "
        "(mean judge score − mean human score: the paper found judges too generous, above all on fluency "
        "and coherence), the agreement between judges (Spearman's ρ on the same items) and the score "
        "distributions. With fewer than three scored items, or when the scores do not vary, a figure is "
        "*not enough data*.",
        "",
        "**Judged generations.** A judge scores the summaries that models wrote for the Evalita SUM task; "
        "the mean score per criterion is shown beside ROUGE on the SUM page and on the model's page.",
        "",
        "**Two protocols.** *paper* is the protocol of the paper's Table 1: each criterion's English "
        "prompt from its Appendix A (quoted with attribution; the explanation is asked for in Italian), "
        "few-shot, with the paper's worked examples in its slots, the model's own generation settings (its "
        "`generation_config`, greedy when it has none) and a token budget a reasoning model can think in (8,192 "
        "tokens for a model that thinks in a `<think>` block, 1,024 for any other; the think block is "
        "set aside before the answer is read, and kept in the details).  The paper's "
        "examples are published under a no-derivatives licence and are not part of this project: a worker "
        "whose maintainer holds them serves paper requests with `--judge-examples FILE` (JSONL: "
        "`criterion`, `document`, `summary`, `score`, `explanation`), and each run records the file's "
        "name and digest.  *project* (the default, and what the bundled sample and small models run) is "
        "the project's own Italian rubric (its guidelines below), zero-shot, with the judge's answer started for it with "
        f"`{ANSWER_PREFIX}` so that even a small judge gives the score first, in at most "
        f"{MAX_ANSWER_TOKENS} greedy tokens; `python -m backend.tracks.judge MODEL --few-shot FILE` runs "
        "it with examples.  Only paper runs in full on a real annotated set are comparable with Table 1; "
        "judges are ranked only beside judges of the same set (identified by its SHA-256).",
        "",
        "**Submitting a judge.** `python -m eval_queue submit ORG/MODEL --track judge` (the annotated "
        "set; `--judge-protocol paper` for Table 1's protocol); `--judge-target RESULTS_PATH` scores the "
        "SUM outputs of that Evalita run instead.",
        "",
        "#### Annotation guidelines (after the paper's Appendix B)",
    ]
    for spec in RUBRIC.values():
        g = spec.guideline
        lines += ["", f"**{spec.label}** ({spec.label_it}). {g.task} *{g.definition}*", ""]
        lines += [f"- *{s.name}*: {s.text}" for s in g.subcriteria]
        scale = "; ".join(
            f"{score} {LEVEL_NAMES_EN[score - 1]}: {text}"
            for score, text in zip(SCORES, g.scale, strict=True)
        )
        lines += ["", f"Scale: {scale}."]
    return "\n".join(lines)
