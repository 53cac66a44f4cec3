"""Scoring of the long-context track: pure functions, one answer at a time (paper §4, App. E).

* :func:`exact_match` — EM: some reference appears verbatim in the answer after
  :func:`normalize_answer` (Italian-suited); the maximum over references.
* :func:`meteor_paper` — METEOR as the paper's community computes it: NLTK's
  ``meteor_score`` over ``word_tokenize``-style tokens, English WordNet synonyms, Porter
  stems; the maximum over references.
* :func:`meteor_italian` — the Italian variant: Italian tokenisation, Snowball Italian
  stems, no synonyms (:class:`NoSynonyms`).
* :func:`extract_letter` — the MC letter by Appendix E's 15 regexes, in order, or ``None``.

The paper's printed examples (Tables 3 and 4) are pinned in
``tests/long_context/test_paper_examples.py``: Table 3's 0.31 and 0.13 are reproduced (the
paper cuts its METEORs to two decimals: 0.3178 is printed 0.31); two printed figures are not
— Table 3's 0.89 ("La marchesa stava andando a Bologna.", NLTK 0.75: 2 of 7 tokens match,
fragmentation penalty 0.0625) and Table 4's 1.00 ("Da Torino", NLTK 0.9375 against the same
string: NLTK's penalty of a two-token match is never 0).  That test's docstring gives the arithmetic.

Scores are on the 0–1 scale.  A score that cannot be computed (no usable reference) is
``None``, never 0.  The WordNet reader is passed in (``leaderboard.tracks.long_context.wordnet``
loads it); nothing here reads files.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

# --------------------------------------------------------------------------- EM

#: Italian definite and indefinite articles (whole words after punctuation is removed).
ARTICLES = frozenset({"il", "lo", "la", "i", "gli", "le", "un", "uno", "una"})
#: Elided articles glued to the next word by an apostrophe: ``l'amante``, ``un'amica``.
_ELIDED_ARTICLE = re.compile(r"\b(?:l|un)'(?=\w)")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'", "´": "'"})


def _strip_punctuation(text: str) -> str:
    return "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)


def normalize_tokens(text: str) -> tuple[str, ...]:
    """Lower-case (accents kept, NFC), elided and full articles removed, punctuation → space.

    ``"L'amante di Zeno, è Carla!"`` → ``("amante", "di", "zeno", "è", "carla")``.
    """
    text = unicodedata.normalize("NFC", text).lower().translate(_APOSTROPHES)
    text = _ELIDED_ARTICLE.sub(" ", text)
    return tuple(token for token in _strip_punctuation(text).split() if token not in ARTICLES)


def normalize_answer(text: str) -> str:
    """:func:`normalize_tokens` joined by single spaces."""
    return " ".join(normalize_tokens(text))


def _contains(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    """Whether ``needle`` occurs as a contiguous run of whole tokens in ``haystack``."""
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def exact_match(answer: str, references: Sequence[str]) -> float | None:
    """1.0 if a normalised reference appears verbatim (whole words) in the normalised answer.

    References that normalise to nothing (e.g. ``"La"``) are ignored; with none left the
    score is ``None``.
    """
    refs = [tokens for tokens in map(normalize_tokens, references) if tokens]
    if not refs:
        return None
    said = normalize_tokens(answer)
    return 1.0 if any(_contains(said, ref) for ref in refs) else 0.0


# --------------------------------------------------------------------------- METEOR


class WordNetLike(Protocol):
    """What NLTK's METEOR asks of a WordNet: ``synsets(word)`` with ``.lemmas()``."""

    def synsets(self, lemma: str) -> Sequence[Any]: ...


class NoSynonyms:
    """A WordNet with no entries: METEOR's synonym stage matches nothing."""

    def synsets(self, lemma: str) -> Sequence[Any]:
        del lemma
        return ()


@cache
def _sentence_splitter() -> Any:
    # ``nltk.word_tokenize`` splits sentences with the *trained* English Punkt model
    # (``punkt_tab``), which ``nltk.download`` cannot fetch offline.  The untrained
    # splitter applies the same rules without the English abbreviation list; the words
    # are then split by the same Treebank-style tokenizer ``word_tokenize`` uses.
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    return PunktSentenceTokenizer()


@cache
def _word_tokenizer() -> Any:
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def paper_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize`` without its trained English sentence model (see above)."""
    words = _word_tokenizer()
    return [token for sentence in _sentence_splitter().tokenize(text) for token in words.tokenize(sentence)]


#: Italian words: elided forms keep their apostrophe (``l'``, ``dell'``, ``un'``), then
#: words; punctuation is dropped (it carries no answer content).
_ITALIAN_TOKEN = re.compile(r"\w+'|\w+")


def italian_tokenize(text: str) -> list[str]:
    """``"L'amante dell'uomo."`` → ``["l'", "amante", "dell'", "uomo"]`` (case kept)."""
    text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
    return _ITALIAN_TOKEN.findall(text)


@cache
def _porter() -> Any:
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@cache
def _snowball_italian() -> Any:
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("italian")


def _meteor(
    answer_tokens: list[str], references: list[list[str]], *, stemmer: Any, wordnet: WordNetLike
) -> float | None:
    from nltk.translate.meteor_score import meteor_score

    refs = [ref for ref in references if ref]
    if not refs:
        return None
    if not answer_tokens:
        return 0.0
    return float(meteor_score(refs, answer_tokens, stemmer=stemmer, wordnet=wordnet))


def meteor_paper(answer: str, references: Sequence[str], wordnet: WordNetLike) -> float | None:
    """NLTK ``meteor_score`` (α 0.9, β 3, γ 0.5), max over references; ``wordnet``: English WordNet 3.0."""
    return _meteor(
        paper_tokenize(answer), [paper_tokenize(r) for r in references], stemmer=_porter(), wordnet=wordnet
    )


def meteor_italian(answer: str, references: Sequence[str]) -> float | None:
    """METEOR with Italian tokens and Snowball Italian stems; exact and stem matches only."""
    return _meteor(
        italian_tokenize(answer),
        [italian_tokenize(r) for r in references],
        stemmer=_snowball_italian(),
        wordnet=NoSynonyms(),
    )


# --------------------------------------------------------------------------- MC (Appendix E)

#: Appendix E, Table 8, in the paper's order.  Two entries are printed with LaTeX escapes
#: in the paper: #14 as ``\.\?`` (an optional dot: with a literal "?" it could never match
#: Table 4's ``B. Da Ginevra``) and #15 as ``\.?\$`` (end of string).  #15 has no group:
#: its whole match, less the dot, is the letter.
MC_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"Risposta \(?([ABCD])\)?",
        r"risposta corretta è la \(?([ABCD])\)?",
        r"risposta corretta è: \(?([ABCD])\)?",
        r"risposta corretta è \(?([ABCD])\)?",
        r"risposta \(?([ABCD])\)?",
        r"Risposta: \(?([ABCD])\)?",
        r"risposta: \(?([ABCD])\)?",
        r"Risposta è \(?([ABCD])\)?",
        r"risposta è \(?([ABCD])\)?",
        r"Risposta è la \(?([ABCD])\)?",
        r"risposta è la \(?([ABCD])\)?",
        r"\n\(?([ABCD])\)?\. ",
        r"\n\(?([ABCD])\)? ",
        r"\(?([ABCD])\)?\.? ",
        r"^[ABCD]\.?$",
    )
)


@dataclass(frozen=True)
class Extraction:
    letter: str | None
    pattern: int | None  # 1-based index in Appendix E's table; None: unparsed


def extract_letter(answer: str) -> Extraction:
    """The first of Appendix E's patterns that matches decides the letter.

    The answer is stripped of surrounding whitespace first: generations usually begin
    with the space after ``Risposta:``, which would keep pattern 15 (a bare ``B``) from
    ever matching.
    """
    text = answer.strip()
    for index, pattern in enumerate(MC_PATTERNS, start=1):
        found = pattern.search(text)
        if found:
            letter = found.group(1) if pattern.groups else found.group(0).rstrip(".")
            return Extraction(letter, index)
    return Extraction(None, None)


@dataclass(frozen=True)
class McScore:
    acc: float  # 1.0 right, 0.0 wrong (unparsed answers are wrong)
    unparsed: float  # 1.0 if no pattern matched
    letter: str | None


def score_multiple_choice(answer: str, gold: str) -> McScore:
    found = extract_letter(answer)
    return McScore(
        acc=1.0 if found.letter is not None and found.letter == gold.strip().upper() else 0.0,
        unparsed=1.0 if found.letter is None else 0.0,
        letter=found.letter,
    )


def mean(values: Sequence[float | None]) -> float | None:
    """Mean of the scores that exist; ``None`` if none does."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
