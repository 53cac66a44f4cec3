"""The judge track's rubric: each criterion's Italian prompt parts and English guideline (:data:`RUBRIC`).

Five criteria after Donati et al.: each criterion's prompt has the structure of the paper's
Appendix A templates (role and task, the criterion's definition, its sub-criteria, the
evaluation procedure, the five score levels, the request for an Italian explanation, the JSON
output shape, a few-shot slot, then the document and the summary); the About text follows
Appendix B's annotation guidelines (task, definition, sub-criteria, 1–5 scale).

Licence: the paper's few-shot examples and annotations are published under a
no-derivatives licence, so nothing of them is copied here.  Every text below is the
project's own wording — the ``project`` protocol's prompts; the ``paper`` protocol quotes
Appendix A's own templates, with attribution, in :mod:`leaderboard.tracks.judge.paper` —
and a maintainer can point the judge at the paper's examples through a user-provided
few-shot file (:class:`~leaderboard.tracks.judge.prompts.FewShotExample`, loaded by
:func:`leaderboard.tracks.judge.data.load_few_shot`; the worker's ``--judge-examples``).

Everything else derives from :data:`RUBRIC`: the harness prompts
(:func:`leaderboard.tracks.judge.prompts.render_prompt`), the result columns
(:mod:`leaderboard.tracks.judge.app.tables`) and the About page
(:func:`leaderboard.tracks.judge.app.about.about_markdown`).  Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from leaderboard.tracks.judge.definition import Criterion


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
