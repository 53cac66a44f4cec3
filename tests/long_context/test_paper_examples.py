"""Every example the INDAQA2 paper prints with its score (Tables 3 and 4), pinned.

Each row: the paper's question, references, answer and printed figure; what this project's
scoring gives (NLTK 3.x ``meteor_score``, α 0.9, β 3, γ 0.5, English WordNet 3.0, Porter
stems; EM and the letter as :mod:`leaderboard.tracks.long_context.metrics` computes them).

Reproduced: Table 3's ANITA-8B (0.31) and Llama-8B (0.13) rows, Table 4's MC answer
(letter B, wrong).  The paper's two-decimal METEORs are NLTK's cut, not rounded: ANITA's is
0.3178 (rounded 0.32, printed 0.31).

Not reproducible with NLTK, documented beside what NLTK gives:

* Table 3, Minerva-7B_L, "La marchesa stava andando a Bologna." — printed 0.89, NLTK 0.75:
  2 of the answer's 7 tokens match the best reference "A Bologna" (the final "." is a
  token): P = 2/7, R = 1, Fmean = PR / (0.9 P + 0.1 R) = 0.80, one chunk of 2 matches, penalty
  0.5 · (1/2)³ = 0.0625.  Without the "." it is 0.78, without the penalty 0.83: with α 0.9 no
  tokenisation of that answer reaches 0.89 (it needs P ≈ 2/3, a three-token answer).
* Table 4, OE answer "Da Torino" — printed 1.00, NLTK 0.9375 with "Da Torino" as a reference
  (the correct option, which the caption says is one of the references; the others are not
  printed).  NLTK never gives 1: a perfect match of m tokens in one chunk keeps the
  fragmentation penalty 0.5 / m³, which is 0.0625 for two tokens; a score that shows as 1.00
  needs m ≥ 5 (0.996).  The paper used another METEOR implementation or other parameters for
  these two rows, or printed other strings.
"""

from __future__ import annotations

import math

import pytest

from leaderboard.tracks.long_context import metrics as m

TABLE3_QUESTION = "Dove stava andando la marchesa?"
TABLE3_REFERENCES = ("A Bologna", "Verso la città di Bologna")
TABLE4_QUESTION = "Da quale città provenivano le commissioni per estirpare l'eresia valdese?"
TABLE4_CHOICES = ("A. Da Carignano", "B. Da Ginevra", "C. Dalla Francia", "D. Da Torino")
TABLE4_GOLD = "D"  # in bold in the paper
#: The caption: the correct option "corresponds to one of the reference answers in the OE task".
TABLE4_REFERENCES = ("Da Torino",)


def cut_to_two_decimals(score: float) -> float:
    """How the paper prints a METEOR: cut (not rounded) to two decimals."""
    return math.floor(score * 100) / 100


# (model, answer, METEOR printed, METEOR from NLTK, EM)
TABLE3 = [
    ("ANITA-8B", "Non andava da nessuna parte, stava seduta in un salotto di Bologna.", 0.31, 0.3178, 0.0),
    (
        "Llama-8B",
        "La marchesa stava andando a pranzo da Giorgio, il conte De Vinci, e poi avrebbe "
        "accompagnato Mimy, la moglie di Carlo, a pranzo da lei.",
        0.13,
        0.1333,
        0.0,
    ),
    ("Minerva-7B_L", "La marchesa stava andando a Bologna.", 0.89, 0.75, 1.0),
]
#: Printed figures NLTK does not give (see the module docstring); every other one it does.
IRREPRODUCIBLE = {("Table 3", "Minerva-7B_L"): (0.89, 0.75), ("Table 4", "OE"): (1.00, 0.9375)}


@pytest.fixture(scope="module")
def wordnet():
    from leaderboard.tracks.long_context.wordnet import load_wordnet

    return load_wordnet()


@pytest.mark.parametrize(("model", "answer", "printed", "nltk", "em"), TABLE3, ids=[r[0] for r in TABLE3])
def test_table_3(wordnet, model, answer, printed, nltk, em):
    score = m.meteor_paper(answer, TABLE3_REFERENCES, wordnet)
    assert score == pytest.approx(nltk, abs=5e-5)
    if ("Table 3", model) in IRREPRODUCIBLE:
        assert IRREPRODUCIBLE["Table 3", model] == (printed, nltk)
        assert cut_to_two_decimals(score) != printed and round(score, 2) != printed
    else:
        assert cut_to_two_decimals(score) == printed
    # EM (not printed in Table 3): only Minerva's answer holds a reference, "a Bologna",
    # the paper's "more general but correct response".
    assert m.exact_match(answer, TABLE3_REFERENCES) == em


def test_table_3_ranks_the_answers_as_the_paper_does(wordnet):
    scores = {model: m.meteor_paper(answer, TABLE3_REFERENCES, wordnet) for model, answer, *_ in TABLE3}
    assert scores["Minerva-7B_L"] > scores["ANITA-8B"] > scores["Llama-8B"]


def test_table_4_open_ended(wordnet):
    score = m.meteor_paper("Da Torino", TABLE4_REFERENCES, wordnet)
    printed, nltk = IRREPRODUCIBLE["Table 4", "OE"]
    assert (printed, score) == (1.00, nltk)
    # The fragmentation penalty of a perfect m-token match: 1.00 shown needs m >= 5.
    assert [round(1 - 0.5 / tokens**3, 4) for tokens in (2, 4, 5)] == [0.9375, 0.9922, 0.996]
    assert m.exact_match("Da Torino", TABLE4_REFERENCES) == 1.0  # "the model correctly responds"


def test_table_4_multiple_choice():
    found = m.extract_letter("B. Da Ginevra")
    assert found == m.Extraction("B", 14)  # Appendix E's 14th pattern: "B. "
    scored = m.score_multiple_choice("B. Da Ginevra", TABLE4_GOLD)
    assert (scored.letter, scored.acc, scored.unparsed) == ("B", 0.0, 0.0)  # "Correct: False"
    assert TABLE4_CHOICES[ord(TABLE4_GOLD) - ord("A")].endswith(TABLE4_REFERENCES[0])
    # As the model would answer after "Risposta:" (a leading space).
    assert m.score_multiple_choice(" B. Da Ginevra", TABLE4_GOLD).letter == "B"


def test_a_shorter_answer_is_what_0_89_would_need(wordnet):
    """No tokenisation of Minerva's answer reaches 0.89; a three-token one does."""
    answer = "La marchesa stava andando a Bologna"
    assert m.meteor_paper(answer, TABLE3_REFERENCES, wordnet) == pytest.approx(0.78, abs=0.005)
    assert m.meteor_paper("A Bologna.", TABLE3_REFERENCES, wordnet) > 0.89
