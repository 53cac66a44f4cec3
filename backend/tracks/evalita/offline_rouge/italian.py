"""An Italian-aware ROUGE tokenizer — opt-in, NOT the leaderboard's metric.

``rouge_score``'s default tokenizer lower-cases and then replaces every character outside
``[a-z0-9]`` with a space, so Italian accented letters split or truncate words:
"città" → ["citt"], "perché" → ["perch"], "è" → [] (dropped).  Upstream Evalita-LLM scores
are computed that way, and the leaderboard keeps it for comparability.  A future metric
version may use this tokenizer instead; such scores must be labelled as a new metric and
never mixed with upstream ROUGE.

Usage: ``rouge_scorer.RougeScorer(["rouge1"], tokenizer=ItalianTokenizer())`` or
``evaluate.load("rouge").compute(..., tokenizer=ItalianTokenizer().tokenize)``.
"""

from __future__ import annotations

import re
import unicodedata

# Runs of letters or digits in any script (accented letters included), no underscores.
_WORD = re.compile(r"[^\W_]+")


class ItalianTokenizer:
    """Lower-case, Unicode NFC, split on anything that is not a letter or digit; no stemming."""

    def tokenize(self, text: str) -> list[str]:
        return _WORD.findall(unicodedata.normalize("NFC", text.lower()))
