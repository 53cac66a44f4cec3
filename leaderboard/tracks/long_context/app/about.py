"""The long-context track's About text (the spec's ``about``): the data, the context settings, the metrics."""

from __future__ import annotations

from leaderboard.tracks.long_context.definition import CONTEXT_SETTINGS

_ABOUT_TEMPLATE = """\
### Long context: INDAQA2

Narrative question answering over whole Italian books (INDAQA2, CALAMITA 2026): 461 novels
and plays written in Italian, questions written from Wikipedia summaries (*Summary* set) or
from passages (*Local*, *Local alternative* and *Entity* sets). The model reads the book,
then `Domanda: …` (and, for multiple choice, the options `A.`–`D.`) and `Risposta:`,
zero-shot, greedy decoding.

**Context settings.** {settings} (words are split on whitespace, as in the paper). When the prompt does not fit the
model's context window, its last tokens are kept, as the paper's evaluation harness
(lm-evaluation-harness) does: the question, the options and the end of the book are read, the
beginning of the book is cut. So a model with a small window reads different pages in the 10K,
50K and full settings. Each run records how many items were cut, how many tokens of the book
the model saw and which side was kept; a run that kept the beginning instead is a labelled
variant, never ranked beside these. Prompts are plain text, without the model's chat template
(lm-eval's default, as in the paper's runs).

**Metrics** (0–100, mean over questions).
* **EM**: a reference answer appears word for word in the model's answer, after lower-casing
  (accents kept), removing punctuation and the Italian articles (including `l'` and `un'`);
  the best of the 1–5 references.
* **METEOR**: NLTK's `meteor_score`, the best over references, as the paper's community
  computes it: English WordNet 3.0 synonyms and English Porter stems. This is the METEOR of
  the Table 5 layout.
* **METEOR (it)**: an Italian variant: Italian tokenisation (elided articles split off),
  Snowball Italian stems, and **no synonym stage**: no Italian synonym resource installs
  offline with the project, so only exact and stem matches count.
* **ACC**: multiple-choice accuracy; the letter is extracted with the paper's 15 regular
  expressions (Appendix E), tried in order. An answer none of them matches is wrong and is
  counted as *unparsed*; the unparsed rate is shown beside the accuracy.

Results on the bundled sample books (`data: sample`) or with a limit are not comparable with
full runs on the official data. This track is not part of the Evalita-LLM CPS ranking.
"""


def _settings_sentence() -> str:
    """``the first 10,000 words of the book (`10k`), … or the whole book (`full`)``, from the specs."""
    parts = [
        f"the first {spec.max_words:,} words of the book (`{spec.id.value}`)"
        if spec.max_words is not None
        else f"the whole book (`{spec.id.value}`)"
        for spec in CONTEXT_SETTINGS
    ]
    return (", ".join(parts[:-1]) + ", or " + parts[-1]).capitalize()


#: The About page's section for the track (settings from :data:`CONTEXT_SETTINGS`).
ABOUT_MARKDOWN = _ABOUT_TEMPLATE.format(settings=_settings_sentence())


def about_markdown() -> str:
    """The About page's section for this track (the spec's ``about``)."""
    return ABOUT_MARKDOWN
