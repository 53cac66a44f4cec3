"""The long-context metrics on hand-made cases (INDAQA2 §4, Appendix E); the paper's own examples
(Tables 3 and 4) are pinned in ``test_paper_examples.py``."""

from __future__ import annotations

import pytest
from nltk.stem.porter import PorterStemmer
from nltk.stem.snowball import SnowballStemmer
from nltk.translate.meteor_score import meteor_score

from leaderboard.tracks.long_context import metrics as m
from leaderboard.tracks.long_context.wordnet import (
    LEXNAMES,
    index_cache_file,
    lexnames_text,
    load_wordnet,
    wordnet_dir,
)


@pytest.fixture(scope="module")
def wordnet():
    return load_wordnet()


# --------------------------------------------------------------------------- EM


@pytest.mark.parametrize(
    ("answer", "references", "expected"),
    [
        ("È la sua amante.", ["è la sua amante"], 1.0),  # case and punctuation
        ("Carla è l'amante di Zeno", ["L'amante"], 1.0),  # elided article dropped on both sides
        ("Un'amica di sua moglie", ["amica di sua moglie"], 1.0),  # un'
        ("Sì, a Bologna!", ["Bologna"], 1.0),
        ("Andava a Bologna", ["Verso la città di Bologna", "A Bologna"], 1.0),  # max over references
        ("Andava a Bologna", ["Verso la città di Bologna"], 0.0),
        ("È la città", ["è la cittá"], 0.0),  # accents are kept: à and á differ
        ("Perché no", ["perche"], 0.0),  # é is not e
        ("la Romagna", ["Roma"], 0.0),  # whole words only
        ("i capelli erano biondi", ["Erano biondi"], 1.0),
        ("Il  Conte   Ugolino", ["conte ugolino"], 1.0),  # whitespace and article
        ("Giacometta", ["La"], None),  # nothing left of the reference
    ],
)
def test_exact_match_normalises_italian_answers(answer, references, expected):
    assert m.exact_match(answer, references) == expected


def test_normalisation_keeps_accents_and_drops_articles_and_punctuation():
    assert (
        m.normalize_answer("L’amante, di Zeno: è Carla! Gli amici; uno zio.")
        == "amante di zeno è carla amici zio"
    )


def test_articulated_prepositions_are_not_articles():
    assert m.normalize_tokens("dell'uomo all'alba") == ("dell", "uomo", "all", "alba")


# --------------------------------------------------------------------------- METEOR


NLTK_DOCTEST_HYPOTHESIS = (
    "It is a guide to action which ensures that the military always obeys the commands of the party"
)
NLTK_DOCTEST_REFERENCE = (
    "It is a guide to action that ensures that the military will forever heed Party commands"
)


def test_meteor_paper_equals_nltk_on_its_own_example(wordnet):
    got = m.meteor_paper(NLTK_DOCTEST_HYPOTHESIS, [NLTK_DOCTEST_REFERENCE], wordnet)
    expected = meteor_score(
        [NLTK_DOCTEST_REFERENCE.split()],
        NLTK_DOCTEST_HYPOTHESIS.split(),
        stemmer=PorterStemmer(),
        wordnet=wordnet,
    )
    assert got == pytest.approx(expected)
    assert round(got, 4) == 0.6944  # the value NLTK's docstring documents


@pytest.mark.parametrize(
    ("answer", "references"),
    [
        ("La marchesa stava andando a Bologna.", ["A Bologna", "Verso la città di Bologna"]),
        ("Da Torino", ["Da Torino", "Torino"]),
        ("Racconta storie strane agli ospiti", ["Racconta storie strane."]),
        ("nessuna corrispondenza qui", ["parole completamente diverse"]),
    ],
)
def test_meteor_paper_is_nltk_meteor_over_the_same_tokens(wordnet, answer, references):
    expected = meteor_score(
        [m.paper_tokenize(r) for r in references],
        m.paper_tokenize(answer),
        stemmer=PorterStemmer(),
        wordnet=wordnet,
    )
    assert m.meteor_paper(answer, references, wordnet) == pytest.approx(expected)


def test_meteor_paper_uses_wordnet_synonyms(wordnet):
    with_synonyms = m.meteor_paper("the hound sat", ["the dog sat"], wordnet)
    without = m.meteor_paper("the hound sat", ["the dog sat"], m.NoSynonyms())
    assert with_synonyms > without


def test_meteor_is_the_maximum_over_references(wordnet):
    both = m.meteor_paper("Giacometta Maldi", ["Giacometta Maldi", "la ragazza"], wordnet)
    best = m.meteor_paper("Giacometta Maldi", ["Giacometta Maldi"], wordnet)
    assert both == best > m.meteor_paper("Giacometta Maldi", ["la ragazza"], wordnet)


def test_meteor_italian_matches_italian_stems_that_porter_misses(wordnet):
    stem = SnowballStemmer("italian")
    assert stem.stem("raccontava") == stem.stem("raccontavano")
    italian = m.meteor_italian("raccontavano storie", ["raccontava storie"])
    expected = meteor_score(
        [["raccontava", "storie"]], ["raccontavano", "storie"], stemmer=stem, wordnet=m.NoSynonyms()
    )
    assert italian == pytest.approx(expected)
    assert italian > m.meteor_paper("raccontavano storie", ["raccontava storie"], wordnet)


def test_italian_tokenisation_splits_elisions_and_drops_punctuation():
    assert m.italian_tokenize("L’amante dell'uomo, è Carla.") == [
        "L'",
        "amante",
        "dell'",
        "uomo",
        "è",
        "Carla",
    ]


def test_meteor_without_a_usable_reference_is_none_and_an_empty_answer_zero(wordnet):
    assert m.meteor_paper("qualcosa", ["", "  "], wordnet) is None
    assert m.meteor_italian("", ["Bologna"]) == 0.0


def test_debian_wordnet_reader_serves_the_lexnames_file():
    assert len(LEXNAMES) == 45
    assert lexnames_text().splitlines()[3] == "03\tnoun.Tops\t1"


def test_the_lemma_map_is_cached_read_back_the_same_and_parsed_again_when_unreadable(
    tmp_path, monkeypatch: pytest.MonkeyPatch, wordnet
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = wordnet_dir().resolve()
    cache_file = index_cache_file(root)
    assert cache_file.parent == tmp_path / "cache" / "wordnet-index"
    assert not cache_file.exists()

    parsed = load_wordnet.__wrapped__()  # a new reader: parses the index files, writes the cache
    assert cache_file.is_file()
    written = cache_file.stat().st_mtime_ns
    cached = load_wordnet.__wrapped__()  # reads the cache, writes nothing
    assert cache_file.stat().st_mtime_ns == written
    assert cached._lemma_pos_offset_map == parsed._lemma_pos_offset_map == wordnet._lemma_pos_offset_map
    assert cached.synsets("hound") == wordnet.synsets("hound") != []
    assert m.meteor_paper("the hound sat", ["the dog sat"], cached) == m.meteor_paper(
        "the hound sat", ["the dog sat"], wordnet
    )

    cache_file.write_bytes(b"not a marshalled map")
    again = load_wordnet.__wrapped__()  # parsed again, and the cache rewritten
    assert again._lemma_pos_offset_map == wordnet._lemma_pos_offset_map
    assert cache_file.read_bytes() != b"not a marshalled map"


def test_another_wordnet_folder_or_a_changed_index_file_has_another_cache_file(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        (folder / "index.noun").write_text("x\n")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert index_cache_file(first, env) != index_cache_file(second, env)
    before = index_cache_file(first, env)
    (first / "index.noun").write_text("xy\n")
    assert index_cache_file(first, env) != before


# --------------------------------------------------------------------------- MC


# For each Appendix E pattern, an answer it matches and no earlier pattern does.
# Patterns 1–11, 14 and 15 are the *only* pattern matching theirs; 12 and 13 can never
# be alone (whatever they match, pattern 14 matches too), so order decides them.
FIRST_MATCH = [
    (1, "Risposta (B)", "B"),
    (2, "Direi che la risposta corretta è la C", "C"),
    (3, "la risposta corretta è: D", "D"),
    (4, "la risposta corretta è A", "A"),
    (5, "la mia risposta B", "B"),
    (6, "Risposta: C", "C"),
    (7, "la risposta: D", "D"),
    (8, "Risposta è A", "A"),
    (9, "la risposta è B", "B"),
    (10, "Risposta è la C", "C"),
    (11, "secondo me la risposta è la D", "D"),
    (12, "Ci ho pensato.\nA. Carolina", "A"),
    (13, "Ci ho pensato.\n(B) Elena", "B"),
    (14, "C. Giacometta", "C"),
    (15, "D", "D"),
]
ALONE = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15}


@pytest.mark.parametrize(("pattern", "answer", "letter"), FIRST_MATCH)
def test_each_appendix_e_pattern_extracts_its_letter(pattern, answer, letter):
    assert m.extract_letter(answer) == m.Extraction(letter, pattern)
    matching = {i for i, p in enumerate(m.MC_PATTERNS, start=1) if p.search(answer.strip())}
    assert min(matching) == pattern
    if pattern in ALONE:
        assert matching == {pattern}


def test_there_are_fifteen_patterns_in_the_papers_order():
    assert len(m.MC_PATTERNS) == 15
    assert m.MC_PATTERNS[0].pattern == r"Risposta \(?([ABCD])\)?"
    assert m.MC_PATTERNS[14].pattern == r"^[ABCD]\.?$"


def test_an_earlier_pattern_wins_over_a_later_one():
    # Pattern 6 ("Risposta: C") comes before 12 ("\nA. ") and 14 ("A. ").
    assert m.extract_letter("Risposta: C\nA. Carolina").letter == "C"
    # Pattern 12 comes before 14, which alone would pick the first "X. " (B).
    assert m.extract_letter("Forse B. Oppure\nA. Carolina").letter == "A"


def test_an_answer_no_pattern_matches_is_unparsed_and_wrong():
    scored = m.score_multiple_choice("Non saprei proprio.", "A")
    assert (scored.acc, scored.unparsed, scored.letter) == (0.0, 1.0, None)
    assert m.extract_letter("la risposta giusta è la b").pattern is None


def test_a_bare_letter_after_the_cue_space_is_parsed():
    assert m.score_multiple_choice(" C\n", "C").acc == 1.0


def test_mean_ignores_missing_scores():
    assert m.mean([1.0, None, 0.0]) == 0.5
    assert m.mean([None]) is None
