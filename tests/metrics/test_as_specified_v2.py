"""As specified, version 2 (issue 29): RE relation-level, NER every wrong span a false positive,
LS each substitute once — each pinned on the hand-made example that showed the flaw, with the
number the flawed metric gave beside the number it gives now.
"""

from __future__ import annotations

import random

import pytest

from leaderboard.tracks.evalita.metric_sets import METRIC_SETS, MetricSet
from leaderboard.tracks.evalita.specified import (
    NO_RELATIONS,
    PRF,
    lm_eval_ls_f1,
    lm_eval_ner_f1,
    lm_eval_rel_f1,
    ls_f1_distinct,
    ner_f1_macro,
    ner_invalid,
    parse_ner_answer,
    parse_rel_answer,
    rel_f1,
    rel_prf,
)

AS_SPECIFIED = METRIC_SETS[MetricSet.AS_SPECIFIED]

# --------------------------------------------------------------------------- RE

TSH = ("5 mg", "TSH")


def test_re_all_norel_on_a_set_with_one_relation_in_four_documents_scores_zero() -> None:
    golds = [[TSH], [], [], []]
    answers = [NO_RELATIONS] * 4

    assert lm_eval_rel_f1(golds, answers) == pytest.approx(3 / 7)  # 0.43: the "no relation" slots
    assert rel_prf(golds, answers) == PRF(tp=0, fp=0, fn=1)
    assert rel_f1(golds, answers) == 0.0


def test_re_as_specified_does_not_depend_on_the_order_of_the_relations() -> None:
    golds = [[TSH]]
    first, last = "5 mg$TSH%1$X%2$Y", "1$X%2$Y%5 mg$TSH"

    assert lm_eval_rel_f1(golds, [first]) != lm_eval_rel_f1(golds, [last])  # 0.33 vs 0.25 upstream
    assert rel_prf(golds, [first]) == rel_prf(golds, [last]) == PRF(tp=1, fp=2, fn=0)
    assert rel_f1(golds, [first]) == rel_f1(golds, [last]) == 0.5  # 2·1 / (2·1 + 2 + 0)


def test_re_order_invariance_holds_on_random_answers() -> None:
    rng = random.Random(29)
    vocabulary = [TSH, ("<1.5 Mmol/L", "ipokaliemia"), ("negativi", "BK"), ("44.9 ng/L", "FT4"), ("1", "X")]
    checked = 0
    for _ in range(300):
        golds = [rng.sample(vocabulary, rng.randint(0, 3)) for _ in range(rng.randint(1, 4))]
        named = [rng.sample(vocabulary, rng.randint(0, 4)) for _ in golds]
        shuffled = [rng.sample(pairs, len(pairs)) for pairs in named]
        join = lambda pairs: "%".join(f"{r}${t}" for r, t in pairs) or NO_RELATIONS  # noqa: E731
        assert rel_f1(golds, [join(p) for p in named]) == rel_f1(golds, [join(p) for p in shuffled])
        checked += 1
    assert checked == 300


def test_re_a_document_without_gold_relations_counts_only_its_false_positives() -> None:
    golds = [[TSH], []]

    assert rel_prf(golds, ["5 mg$TSH", NO_RELATIONS]) == PRF(tp=1, fp=0, fn=0)
    assert rel_prf(golds, ["5 mg$TSH", "1$X%2$Y"]) == PRF(tp=1, fp=2, fn=0)
    assert rel_f1(golds, ["5 mg$TSH", "1$X%2$Y"]) == 0.5


def test_re_counts_are_micro_over_the_test_set() -> None:
    golds = [[TSH, ("1", "X")], [("2", "Y")]]
    answers = ["5 mg$TSH", "2$Y%3$Z"]

    prf = rel_prf(golds, answers)
    assert prf == PRF(tp=2, fp=1, fn=1)
    assert (prf.precision, prf.recall, prf.f1) == (2 / 3, 2 / 3, 2 / 3)


def test_re_answer_parsing() -> None:
    assert parse_rel_answer("") == []
    assert parse_rel_answer(f"5 mg$TSH%{NO_RELATIONS}") == []  # as upstream
    assert parse_rel_answer(" 5 mg $ TSH %% 7.5%$HbA1c% negativi") == [
        TSH,
        ("7.5%", "HbA1c"),
        ("negativi", ""),  # named without a test: a false positive
    ]
    assert rel_prf([[TSH]], ["5 mg$TSH%5 mg$TSH"]) == PRF(tp=1, fp=1, fn=0)  # named twice, found once


def test_re_nothing_to_find_and_nothing_named_scores_one() -> None:
    assert rel_f1([[], []], [NO_RELATIONS, ""]) == 1.0


# --------------------------------------------------------------------------- NER

ROMA, MARIO = ("Roma", "LOC"), ("Mario Rossi", "PER")


def test_ner_untyped_spans_are_false_positives() -> None:
    golds = [[ROMA, MARIO]]
    padded = "Roma$LOC, Mario Rossi$PER, la città, il sindaco, ieri, domani"

    assert ner_invalid(parse_ner_answer(padded)) == 4
    assert ner_f1_macro(golds, ["Roma$LOC, Mario Rossi$PER"]) == 1.0
    # Each of the four untyped spans is a false positive of LOC and of PER: 2·1 / (1 + 1 + 4).
    assert ner_f1_macro(golds, [padded]) == pytest.approx(1 / 3)
    assert ner_f1_macro(golds, [padded]) < 1  # version 1 gave 1.000
    assert lm_eval_ner_f1(golds, [padded]) == pytest.approx(2 / 3)  # upstream, unchanged


def test_ner_spans_of_an_invalid_type_are_false_positives() -> None:
    golds = [[ROMA, MARIO]]
    answer = "Roma$LOC, Mario Rossi$PER, Milano$LUOGO, Pippo$PERSONA"

    assert ner_invalid(parse_ner_answer(answer)) == 2
    assert ner_f1_macro(golds, [answer]) == pytest.approx(1 / 2)  # LOC and PER: 2 / (1 + 1 + 2)


def test_ner_an_invalid_span_costs_every_averaged_type_but_adds_none() -> None:
    # Only LOC occurs: the untyped span is a LOC false positive, and PER and ORG stay out.
    assert ner_f1_macro([[ROMA]], ["Roma$LOC, ieri"]) == pytest.approx(2 / 3)
    # No gold entity and only invalid spans: nothing right was named.
    assert ner_f1_macro([[]], ["ieri, domani$TEMPO"]) == 0.0
    assert ner_f1_macro([[]], ["&&NOENT&&"]) == 1.0


# --------------------------------------------------------------------------- LS

PIENO = [("pieno", 3), ("colmo", 1)]


def test_ls_a_repeated_substitute_is_credited_once() -> None:
    golds = [PIENO, PIENO]

    assert lm_eval_ls_f1(golds, ["pieno", "colmo"]) == pytest.approx(0.5)
    assert lm_eval_ls_f1(golds, ["pieno, pieno", "colmo"]) == pytest.approx(0.875)  # upstream's loophole
    assert ls_f1_distinct(golds, ["pieno", "colmo"]) == pytest.approx(0.5)
    assert ls_f1_distinct(golds, ["pieno, pieno", "colmo"]) == pytest.approx(0.5)


def test_ls_distinct_equals_upstream_when_no_word_repeats() -> None:
    rng = random.Random(7)
    words = ["pieno", "colmo", "zeppo", "saturo", "vuoto", "ricco"]
    checked = 0
    for _ in range(300):
        golds = [[(w, rng.randint(1, 4)) for w in rng.sample(words, rng.randint(1, 4))] for _ in range(3)]
        answers = [", ".join(rng.sample(words, rng.randint(0, 5))) for _ in golds]
        assert ls_f1_distinct(golds, answers) == pytest.approx(lm_eval_ls_f1(golds, answers), abs=1e-15)
        checked += 1
    assert checked == 300


def test_ls_distinct_never_passes_one() -> None:
    rng = random.Random(8)
    words = ["pieno", "colmo", "zeppo"]
    for _ in range(300):
        golds = [[(w, rng.randint(1, 4)) for w in words]]
        answers = [", ".join(rng.choice(words) for _ in range(rng.randint(1, 10)))]
        assert 0.0 <= ls_f1_distinct(golds, answers) <= 1.0


# --------------------------------------------------------------------------- the set


def test_as_specified_version_2_scores_ls_ner_and_re_itself() -> None:
    assert AS_SPECIFIED.version == 2
    assert {t: m.name for t, m in AS_SPECIFIED.metrics.items()} == {
        "wic": "f1_macro",
        "hs": "f1_macro",
        "ls": "f1_oot_distinct",
        "ner": "f1_entity_macro",
        "re": "f1_relations",
        "sum": "rouge1_italian",
    }
