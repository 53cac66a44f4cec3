"""The project's shared vocabulary: each fixed value set or format defined once.

Both :mod:`leaderboard` and :mod:`eval_queue` (and :mod:`backend`) import from here;
this module imports nothing of the project, so it can never take part in a cycle.
"""

from __future__ import annotations

from enum import StrEnum

#: How many characters of a revision (a commit sha or a branch name) are shown and
#: used in file names.  Twelve hex digits of a sha are unique in any real repository.
SHORT_REVISION_LEN = 12


def short_revision(revision: str) -> str:
    """The revision as shown and as written in file names (first :data:`SHORT_REVISION_LEN` characters)."""
    return str(revision)[:SHORT_REVISION_LEN]


class Track(StrEnum):
    """A benchmark the leaderboard hosts side by side; tracks never mix into each other's scores.

    A request or results file without a ``track`` is an :attr:`EVALITA` one (the files
    written before tracks existed stay valid).
    """

    EVALITA = "evalita"
    LONG_CONTEXT = "long-context"
    JUDGE = "judge"

    @property
    def label(self) -> str:
        match self:
            case Track.EVALITA:
                return "Evalita-LLM"
            case Track.LONG_CONTEXT:
                return "Long context (INDAQA2)"
            case Track.JUDGE:
                return "LLM as judge"
            case _:
                raise AssertionError(f"unhandled track {self!r}")


# --------------------------------------------------------------------------- tracks' request vocabulary
# The value sets a request file may carry.  The queue validates requests with them and
# cannot import the track definitions (``leaderboard`` depends on ``eval_queue``, never
# the reverse), so they live here and the definitions build on them.

#: The few-shot settings the Evalita track runs (paper: zero-shot and 5-shot).  A track
#: without a few-shot setting stores ``num_fewshot: 0``.
FEWSHOT_SETTINGS: tuple[int, ...] = (0, 5)


class EvalitaTask(StrEnum):
    """The ten Evalita-LLM task ids, in paper order (``leaderboard.suite`` describes each)."""

    WIC = "wic"
    TE = "te"
    SA = "sa"
    HS = "hs"
    FAQ = "faq"
    AT = "at"
    LS = "ls"
    NER = "ner"
    RE = "re"
    SUM = "sum"


class ContextSetting(StrEnum):
    """Long-context track: how much of the book the model reads (first 10,000 / 50,000 words, or all)."""

    K10 = "10k"
    K50 = "50k"
    FULL = "full"


class JudgeMode(StrEnum):
    """Judge track: what the judge model scores."""

    #: The annotated set: the judge's scores are compared with human rubric scores.
    META = "meta"
    #: The generations of another run (``judge_target``, a results path).
    GENERATIONS = "generations"
