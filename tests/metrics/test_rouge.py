"""SUM's ROUGE-1: the upstream column through rouge_score_rs, and the as-specified Italian tokenizer.

Bit-identity is checked on every sample pair here (ROUGE-1, what the leaderboard scores);
``bench/bench_rouge.py`` checks all four ROUGE types on the adversarial and very long pairs too.
"""

from __future__ import annotations

import pytest
from rouge_score import rouge_scorer, scoring, tokenize

from leaderboard.tracks.evalita.specified import (
    ItalianTokenizer,
    italian_tokens,
    mean,
    rouge1_italian,
    rouge1_italian_batch,
    rouge1_lm_eval,
    rouge1_lm_eval_batch,
)
from tests.metrics.rouge_pairs import ADVERSARIAL, adversarial_pairs, sample_pairs, sample_texts


def _reference_rouge1(reference: str, prediction: str, tokenizer: object | None = None) -> float:
    """rouge_score itself, with the settings of the harness's ROUGE (no stemming)."""
    return (
        rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False, tokenizer=tokenizer)
        .score(reference, prediction)["rouge1"]
        .fmeasure
    )


@pytest.fixture(scope="module")
def pairs() -> list[tuple[str, str]]:
    """Every sample pair and every adversarial one but the very long (rouge_score's pure-Python cost)."""
    return list(sample_pairs().pairs) + [
        (r, p) for r, p in adversarial_pairs().pairs if len(r) + len(p) < 20_000
    ]


# --------------------------------------------------------------------------- tokenizer


def test_italian_tokens_keep_accented_letters() -> None:
    assert italian_tokens("La città è più bella, perché sì!") == [
        "la",
        "città",
        "è",
        "più",
        "bella",
        "perché",
        "sì",
    ]
    assert tokenize.tokenize("La città è più bella, perché sì!", None) == [
        "la",
        "citt",
        "pi",
        "bella",
        "perch",
        "s",
    ]


def test_italian_tokens_split_elisions_like_upstream() -> None:
    assert italian_tokens("dell'anno l’anno un'estate po'") == [
        "dell",
        "anno",
        "l",
        "anno",
        "un",
        "estate",
        "po",
    ]
    assert tokenize.tokenize("dell'anno l’anno un'estate po'", None) == [
        "dell",
        "anno",
        "l",
        "anno",
        "un",
        "estate",
        "po",
    ]


def test_italian_tokens_normalise_unicode() -> None:
    assert italian_tokens("perche\u0301") == ["perché"]  # combining accent composed
    assert italian_tokens("CITTÀ ＣＩＴＴÀ ﬁne") == ["città", "città", "fine"]
    assert italian_tokens("3,5% 1.000 n° 12 snake_case") == ["3", "5", "1", "000", "n", "12", "snake", "case"]


def test_italian_tokens_equal_rouge_score_tokens_on_ascii_text() -> None:
    summaries, articles = sample_texts()
    texts = [t for t in ADVERSARIAL if t.isascii()]
    texts += [t.encode("ascii", "ignore").decode() for t in summaries + articles]
    for text in texts:
        assert italian_tokens(text) == tokenize.tokenize(text, None), text
    assert len(texts) > 80


# --------------------------------------------------------------------------- ROUGE-1 values


def test_citta_and_perche_are_matched_as_whole_words() -> None:
    reference = "La città è più bella perché è pulita"
    prediction = "perché la città è più bella"
    # As specified: la città è più bella perché match (6 of 6 predicted, 6 of 8 reference tokens).
    assert rouge1_italian(reference, prediction) == pytest.approx(2 * 6 / (8 + 6))
    # Upstream: [la citt pi bella perch pulita] against [perch la citt pi bella]; "è" is no token.
    assert rouge1_lm_eval(reference, prediction) == pytest.approx(2 * 5 / (6 + 5))


def test_accents_distinguish_words_as_specified() -> None:
    # "però" (but) is "per" (for) upstream; "è" (is) is dropped, "e" (and) kept.
    assert rouge1_lm_eval("per la città", "però la città") == 1.0
    assert rouge1_italian("per la città", "però la città") == pytest.approx(2 / 3)
    assert rouge1_lm_eval("Roma è bella", "Roma e bella") == pytest.approx(0.8)
    assert rouge1_italian("Roma è bella", "Roma e bella") == pytest.approx(2 / 3)


def test_the_upstream_column_is_rouge_score_bit_for_bit(pairs: list[tuple[str, str]]) -> None:
    checked = 0
    for reference, prediction in pairs:
        assert rouge1_lm_eval(reference, prediction).hex() == _reference_rouge1(reference, prediction).hex()
        checked += 1
    assert checked > 4000


def test_the_as_specified_column_is_rouge_score_with_the_italian_tokenizer(
    pairs: list[tuple[str, str]],
) -> None:
    checked = 0
    for reference, prediction in pairs:
        want = _reference_rouge1(reference, prediction, ItalianTokenizer())
        assert rouge1_italian(reference, prediction).hex() == want.hex()
        checked += 1
    assert checked > 4000


def test_the_columns_differ_only_where_letters_outside_a_z_are(pairs: list[tuple[str, str]]) -> None:
    differ = 0
    for reference, prediction in pairs:
        if (reference + prediction).isascii():
            assert rouge1_italian(reference, prediction) == rouge1_lm_eval(reference, prediction)
        elif rouge1_italian(reference, prediction) != rouge1_lm_eval(reference, prediction):
            differ += 1
    assert differ > 1000


def test_batches_equal_pairs(pairs: list[tuple[str, str]]) -> None:
    refs, preds = [r for r, _ in pairs], [p for _, p in pairs]
    assert rouge1_lm_eval_batch(refs, preds) == [rouge1_lm_eval(r, p) for r, p in pairs]
    assert rouge1_italian_batch(refs, preds) == [rouge1_italian(r, p) for r, p in pairs]


def test_the_harness_single_sample_aggregate_is_the_sample_value(pairs: list[tuple[str, str]]) -> None:
    """lm-eval calls ROUGE per sample through ``evaluate`` (BootstrapAggregator of one score, mid):
    that is the score itself, so the per-sample value is plain ROUGE-1 F, and the prompt's is
    lm-eval's ``mean`` of them."""
    # evaluate's ROUGE scores four types; each is bootstrapped on its own (1,000 draws), and only
    # ROUGE-1 is compared: the other three took three quarters of this test's time.
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
    chosen = pairs[::97]
    values = []
    for reference, prediction in chosen:
        aggregator = scoring.BootstrapAggregator()
        aggregator.add_scores(scorer.score(reference, prediction))
        harness = float(aggregator.aggregate()["rouge1"].mid.fmeasure)
        assert harness.hex() == rouge1_lm_eval(reference, prediction).hex()
        values.append(harness)
    assert len(chosen) > 40
    assert mean(values) == sum(values) / len(values)
