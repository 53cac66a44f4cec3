"""leaderboard.tracks.judge.parse: what judges really write is read; anything else is unparsed, never a number."""

from __future__ import annotations

import pytest

from leaderboard.tracks.judge.definition import Criterion
from leaderboard.tracks.judge.parse import JudgeAnswer, ParseStatus, parse_answer, score_value
from leaderboard.tracks.judge.prompts import render_prompt


@pytest.mark.parametrize(
    ("text", "score", "explanation"),
    [
        ('{"score": 4, "explanation": "Chiaro e ordinato."}', 4, "Chiaro e ordinato."),
        ("{'score': 3, 'explanation': 'Qualche salto logico.'}", 3, "Qualche salto logico."),
        ('```json\n{"score": 5, "explanation": "Impeccabile."}\n```', 5, "Impeccabile."),
        ('```\n{"score": 2, "explanation": "Frammentato."}\n```', 2, "Frammentato."),
        ('Ecco la mia valutazione:\n{"score": 4, "explanation": "Buono."}', 4, "Buono."),
        (
            '{"score": 1, "explanation": "Disordinato."}\nSpero che la valutazione sia utile!',
            1,
            "Disordinato.",
        ),
        ('{"score": "4", "explanation": "Buono."}', 4, "Buono."),
        ('{"score": "4/5", "explanation": "Buono."}', 4, "Buono."),
        ('{"score": "4 / 5", "explanation": "Buono."}', 4, "Buono."),
        ('{"score": "4 su 5", "explanation": "Buono."}', 4, "Buono."),
        ('{"score": 4.0, "explanation": "Buono."}', 4, "Buono."),
        ('{"score": "4,0", "explanation": "Buono."}', 4, "Buono."),
        ('{"Score": 3, "Explanation": "Discreto."}', 3, "Discreto."),
        ('{"punteggio": 3, "spiegazione": "Discreto."}', 3, "Discreto."),
        ('{"explanation": "Prima la spiegazione.", "score": 2}', 2, "Prima la spiegazione."),
        ('{"score": 5, "explanation": "Virgola finale.",}', 5, "Virgola finale."),
        (
            "“score”: no; {“score”: 2, “explanation”: “Virgolette tipografiche.”}",
            2,
            "Virgolette tipografiche.",
        ),
        ('{"score": 4}', 4, None),
    ],
)
def test_messy_but_readable_answers_give_the_score_and_explanation(
    text: str, score: int, explanation: str | None
) -> None:
    answer = parse_answer(text)

    assert answer.status is ParseStatus.PARSED
    assert answer.parsed
    assert (answer.score, answer.explanation) == (score, explanation)


def test_apostrophes_inside_single_quoted_italian_are_read_by_the_fallback() -> None:
    # Neither json nor ast.literal_eval takes this: the apostrophes end the string early.
    answer = parse_answer("{'score': 3, 'explanation': 'L'articolo è chiaro, ma l'ordine no.'}")

    assert answer == JudgeAnswer(ParseStatus.PARSED, 3, "L'articolo è chiaro, ma l'ordine no.", repaired=True)


def test_unescaped_inner_quotes_are_read_by_the_fallback() -> None:
    answer = parse_answer('{"score": 2, "explanation": "Il "piano" citato non esiste."}')

    assert (answer.status, answer.score, answer.explanation) == (
        ParseStatus.PARSED,
        2,
        'Il "piano" citato non esiste.',
    )
    assert answer.repaired


def test_an_answer_cut_off_by_the_token_cap_keeps_its_score() -> None:
    answer = parse_answer('{"score": 4, "explanation": "Il riassunto segue bene il testo, ma')

    assert (answer.status, answer.score) == (ParseStatus.PARSED, 4)
    assert answer.explanation == "Il riassunto segue bene il testo, ma"


def test_a_draft_inside_a_think_block_is_not_the_answer() -> None:
    answer = parse_answer('<think>forse {"score": 1}</think>\n{"score": 5, "explanation": "Ottimo."}')

    assert answer.score == 5


def test_the_echoed_output_template_is_skipped_for_the_real_answer() -> None:
    template = render_prompt(Criterion.FLUENCY, "Testo.", "Riassunto.").split("\n{", 1)[1].split("\n", 1)[0]
    answer = parse_answer("{" + template + '\n{"score": 3, "explanation": "Discreto."}')

    assert (answer.status, answer.score) == (ParseStatus.PARSED, 3)


def test_the_first_object_with_a_score_is_the_answer() -> None:
    answer = parse_answer('{"score": 2, "explanation": "a"} {"score": 5, "explanation": "b"}')

    assert (answer.score, answer.explanation) == (2, "a")


def test_a_nested_object_with_the_score_is_found() -> None:
    assert parse_answer('{"valutazione": {"score": 4, "explanation": "ok"}}').score == 4


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("", ParseStatus.NO_JSON),
        ("Il riassunto merita 4 su 5.", ParseStatus.NO_JSON),
        ("Punteggio: 4\nSpiegazione: buono", ParseStatus.NO_JSON),
        ("֮itàl=uera5amp��dio�%", ParseStatus.NO_JSON),
        ("{}", ParseStatus.NO_SCORE),
        ('{"explanation": "Manca il punteggio."}', ParseStatus.NO_SCORE),
        ('{"score": 0, "explanation": "x"}', ParseStatus.OUT_OF_RANGE),
        ('{"score": 6, "explanation": "x"}', ParseStatus.OUT_OF_RANGE),
        ('{"score": -1, "explanation": "x"}', ParseStatus.OUT_OF_RANGE),
        ('{"score": "10/5", "explanation": "x"}', ParseStatus.OUT_OF_RANGE),
        ('{"score": 3.5, "explanation": "x"}', ParseStatus.BAD_SCORE),
        ('{"score": "4/10", "explanation": "x"}', ParseStatus.BAD_SCORE),
        ('{"score": "buono", "explanation": "x"}', ParseStatus.BAD_SCORE),
        ('{"score": true, "explanation": "x"}', ParseStatus.BAD_SCORE),
        ('{"score": null, "explanation": "x"}', ParseStatus.BAD_SCORE),
        ('{"score": [4], "explanation": "x"}', ParseStatus.BAD_SCORE),
        ('{"score": <numero intero da 1 a 5>, "explanation": "<spiegazione>"}', ParseStatus.NO_SCORE),
    ],
)
def test_unreadable_or_off_scale_answers_are_unparsed_never_a_number(text: str, status: ParseStatus) -> None:
    answer = parse_answer(text)

    assert answer.status is status
    assert answer.score is None
    assert not answer.parsed


def test_an_unparsed_answer_keeps_its_explanation_for_the_details() -> None:
    answer = parse_answer('{"score": 7, "explanation": "Fuori scala."}')

    assert (answer.status, answer.explanation) == (ParseStatus.OUT_OF_RANGE, "Fuori scala.")


@pytest.mark.parametrize("value", [1, 5, 2.0, "3", " 4 ", "5/5", "2 out of 5", "'4'"])
def test_every_way_of_writing_a_level_of_the_scale_is_that_level(value: object) -> None:
    status, score = score_value(value)

    assert status is ParseStatus.PARSED
    assert score in {1, 2, 3, 4, 5}


def test_huge_or_hostile_text_never_raises() -> None:
    hostile = "{" * 5000 + '"score": 4' + "}" * 10 + "{'a': " * 3000
    assert parse_answer(hostile).status in set(ParseStatus)
    assert parse_answer("{" + "[" * 10000 + "}").status is ParseStatus.NO_JSON
