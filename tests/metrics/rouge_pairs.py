"""(reference, prediction) pairs for checking a ROUGE implementation against ``rouge_score``.

Built from every summary of the bundled SUM sample (``leaderboard/tracks/evalita/sample_data/sum/*.jsonl``) and of
the judge track's annotated sample, their articles and the articles' leads, perturbed copies
(accents stripped, upper case, typographic apostrophes, a word dropped, words shuffled), and
adversarial strings (accents, apostrophes, numbers, punctuation, other scripts, empty and
very long texts).  Deterministic: the same list on every machine.
"""

from __future__ import annotations

import json
import random
import unicodedata
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SUM_FILES = (
    REPO_ROOT / "leaderboard/tracks/evalita/sample_data/sum/test.jsonl",
    REPO_ROOT / "leaderboard/tracks/evalita/sample_data/sum/dev.jsonl",
)
JUDGE_FILE = REPO_ROOT / "leaderboard/tracks/judge/sample_data/annotated.jsonl"

ADVERSARIAL: tuple[str, ...] = (
    "",
    " ",
    "\n\n",
    "...!?",
    "città",
    "citt",
    "citta",
    "CITTÀ",
    "perché",
    "perch",
    "perche",
    "perche\u0301",  # "perché" with a combining acute accent (NFD)
    "è",
    "e",
    "È vero: è così.",
    "l'anno",
    "l’anno",  # typographic apostrophe
    "dell'anno",
    "anno",
    "un'estate, quest'anno, all'università",
    "po' di più",
    "3,5%",
    "3.5",
    "1.000.000 di euro",
    "2024",
    "n° 12",
    "L'8% delle città è più grande",
    "ﬁne ﬁnale",  # ligature
    "ＣＩＴＴÀ",  # full-width
    "Москва и Рим",
    "東京",
    "emoji 🇮🇹 ok",
    "#hashtag @user https://example.com/pagina?x=1",
    "snake_case_word",
    "a a a a a",
    "a b a b a b",
    "Tab\tseparated\ttext",
    "Ünïcödé ñ ç ß",
    "İstanbul",
    "Ⅻ ² ½",
)


@dataclass(frozen=True)
class PairSet:
    """Labelled (reference, prediction) pairs; ``label`` names where each came from."""

    pairs: tuple[tuple[str, str], ...]
    labels: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.pairs)


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _lead(article: str) -> str:
    head, dot, _ = article.partition(". ")
    return head + dot


def _strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def _perturbations(text: str, rng: random.Random) -> list[str]:
    words = text.split()
    dropped = [w for i, w in enumerate(words) if i != rng.randrange(len(words))] if words else []
    shuffled = words[:]
    rng.shuffle(shuffled)
    return [
        _strip_accents(text),
        text.upper(),
        text.replace("'", "’"),
        " ".join(dropped),
        " ".join(shuffled),
        text.replace(". ", ".\n"),  # sentences on lines (rougeLsum)
    ]


def sample_texts() -> tuple[list[str], list[str]]:
    """(summaries, articles): the SUM sample's targets and sources, then the judge sample's."""
    summaries, articles = [], []
    for path in SUM_FILES:
        for row in _read(path):
            summaries.append(row["target"])
            articles.append(row["source"])
    for row in _read(JUDGE_FILE):
        summaries.append(row["summary"])
        if row["document"] not in articles:
            articles.append(row["document"])
    return summaries, articles


def sample_pairs() -> PairSet:
    """Pairs from the sample data only (what a SUM run scores: summary-sized texts)."""
    summaries, articles = sample_texts()
    sum_rows = [row for path in SUM_FILES for row in _read(path)]
    pairs: list[tuple[str, str]] = []
    labels: list[str] = []

    def add(label: str, reference: str, prediction: str) -> None:
        pairs.append((reference, prediction))
        labels.append(label)

    for i, reference in enumerate(summaries):
        for j, prediction in enumerate(summaries):
            add(f"summary{i}×summary{j}", reference, prediction)
    for i, row in enumerate(sum_rows):
        lead = _lead(row["source"])
        add(f"summary{i}×lead", row["target"], lead)
        add(f"lead×summary{i}", lead, row["target"])
        add(f"summary{i}×article", row["target"], row["source"])
        add(f"article×summary{i}", row["source"], row["target"])
    rng = random.Random(20)
    for i, summary in enumerate(summaries):
        for k, changed in enumerate(_perturbations(summary, rng)):
            add(f"summary{i}×perturbed{k}", summary, changed)
            add(f"perturbed{k}×summary{i}", changed, summary)
    for i, reference in enumerate(articles):
        for j, prediction in enumerate(articles):
            if i != j:
                add(f"article{i}×article{j}", reference, prediction)
    return PairSet(tuple(pairs), tuple(labels))


def adversarial_pairs() -> PairSet:
    """Every ordered pair of adversarial strings, each against a summary, and very long texts."""
    summaries, articles = sample_texts()
    pairs: list[tuple[str, str]] = []
    labels: list[str] = []
    for i, reference in enumerate(ADVERSARIAL):
        for j, prediction in enumerate(ADVERSARIAL):
            pairs.append((reference, prediction))
            labels.append(f"adversarial{i}×adversarial{j}")
        pairs.append((summaries[0], reference))
        labels.append(f"summary0×adversarial{i}")
        pairs.append((reference, summaries[0]))
        labels.append(f"adversarial{i}×summary0")
    # Very long texts: every article joined (thousands of tokens), shuffled, against short ones.
    long_text = "\n".join(articles)
    words = long_text.split()
    random.Random(7).shuffle(words)
    shuffled = " ".join(words)
    for label, reference, prediction in (
        ("long×long", long_text, long_text),
        ("long×shuffled", long_text, shuffled),
        ("shuffled×long", shuffled, long_text),
        ("long×summary", long_text, summaries[0]),
        ("summary×long", summaries[0], long_text),
        ("long×empty", long_text, ""),
        ("empty×long", "", long_text),
        ("long×accentless", long_text, _strip_accents(long_text)),
    ):
        pairs.append((reference, prediction))
        labels.append(label)
    return PairSet(tuple(pairs), tuple(labels))


def all_pairs() -> PairSet:
    sample, adversarial = sample_pairs(), adversarial_pairs()
    return PairSet(sample.pairs + adversarial.pairs, sample.labels + adversarial.labels)
