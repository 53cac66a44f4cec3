"""The judge track's ``project`` protocol prompts, rendered from the rubric, and the answer's shape.

:func:`render_prompt` builds the whole prompt the judge sees for one (document, summary,
criterion) from :data:`~leaderboard.tracks.judge.rubric.RUBRIC`; the ``paper`` protocol's
prompts are :mod:`leaderboard.tracks.judge.paper`'s.  Pure functions: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from leaderboard.tracks.judge.definition import (
    EXPLANATION_KEY,
    LEVEL_NAMES_IT,
    SCORE_KEY,
    SCORE_MAX,
    SCORE_MIN,
    SCORES,
    Criterion,
)
from leaderboard.tracks.judge.rubric import RUBRIC


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
