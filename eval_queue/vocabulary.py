"""The project's shared vocabulary: each fixed value set or format defined once.

Both :mod:`leaderboard` and :mod:`eval_queue` (and :mod:`backend`) import from here;
this module imports nothing of the project, so it can never take part in a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

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


def fewshot_label(num_fewshot: int) -> str:
    """How a few-shot count is shown: ``0-shot``, ``5-shot``."""
    return f"{num_fewshot}-shot"


class Setting(StrEnum):
    """A view's few-shot setting: one of the two the leaderboard runs, or both side by side.

    The value is what links and controls carry (``?setting=5``); :attr:`num_fewshot` is
    the harness's ``num_fewshot`` (``None`` for :attr:`BOTH`, which is not a run setting).
    """

    ZERO = "0"
    FIVE = "5"
    BOTH = "both"

    @property
    def num_fewshot(self) -> int | None:
        match self:
            case Setting.ZERO:
                return 0
            case Setting.FIVE:
                return 5
            case Setting.BOTH:
                return None
            case _:
                raise AssertionError(f"unhandled setting {self!r}")

    @property
    def fewshots(self) -> tuple[int, ...]:
        """The run settings this view shows: ``(0,)``, ``(5,)`` or ``(0, 5)``."""
        return FEWSHOT_SETTINGS if self.num_fewshot is None else (self.num_fewshot,)

    @property
    def label(self) -> str:
        if self.num_fewshot is None:
            return f"both ({fewshot_label(5)} − {fewshot_label(0)})"
        return fewshot_label(self.num_fewshot)

    @classmethod
    def of_fewshot(cls, num_fewshot: int) -> Setting:
        """The single setting of a run's ``num_fewshot``; a value the leaderboard does not run is an error."""
        for setting in RUN_SETTINGS:
            if setting.num_fewshot == num_fewshot:
                return setting
        raise ValueError(f"num_fewshot must be one of {list(FEWSHOT_SETTINGS)}, got {num_fewshot!r}")


#: The settings a run can have (every view but the ranking's "both" is one of these).
RUN_SETTINGS: tuple[Setting, ...] = (Setting.ZERO, Setting.FIVE)
#: The few-shot counts the leaderboard runs (paper: zero-shot and 5-shot).
FEWSHOT_SETTINGS: tuple[int, ...] = (0, 5)


class Aggregate(StrEnum):
    """The multi-prompt metrics of paper §5 as the tables name and label them.

    The model side (a model on a task, over its prompts) has MaxP, AvgP, CPS, the best
    prompt and the spread MaxP − AvgP; the prompt side (a prompt over the models) has
    MinP, MaxP, AvgP and CPS.  The value is the column suffix (``te_cps``), the label what
    a header shows.
    """

    MINP = "minp"
    MAXP = "maxp"
    AVGP = "avgp"
    CPS = "cps"
    BEST_PROMPT = "best_prompt"
    #: MaxP − AvgP (= 1 − Sat, eq. 6) in points: how much the prompt matters (0 = not at all).
    SPREAD = "spread"

    @property
    def label(self) -> str:
        match self:
            case Aggregate.MINP:
                return "MinP"
            case Aggregate.MAXP:
                return "MaxP"
            case Aggregate.AVGP:
                return "AvgP"
            case Aggregate.CPS:
                return "CPS"
            case Aggregate.BEST_PROMPT:
                return "best prompt"
            case Aggregate.SPREAD:
                return "MaxP − AvgP"
            case _:
                raise AssertionError(f"unhandled aggregate {self!r}")

    @property
    def is_score(self) -> bool:
        """A 0–100 number (every aggregate but the best prompt's id)."""
        return self is not Aggregate.BEST_PROMPT


#: The per-task columns of the ranking table, in column order (model side).
MODEL_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate.MAXP,
    Aggregate.AVGP,
    Aggregate.CPS,
    Aggregate.BEST_PROMPT,
    Aggregate.SPREAD,
)
#: The columns of the prompt side (one prompt over the models shown), in column order.
PROMPT_AGGREGATES: tuple[Aggregate, ...] = (Aggregate.MINP, Aggregate.MAXP, Aggregate.AVGP, Aggregate.CPS)
#: The per-task columns a reader can add to the ranking view, in the chooser's order.
RANKING_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate.CPS,
    Aggregate.MAXP,
    Aggregate.AVGP,
    Aggregate.BEST_PROMPT,
)


@dataclass(frozen=True, order=True)
class RunRef:
    """One evaluated (model, revision, precision): what a model page, a link or a row click names.

    Its settings (0- and 5-shot) are separate runs of the same reference.  :attr:`key` is
    the one string form (dropdown values, links, the tables' hidden key column).
    """

    model: str
    revision: str
    precision: str

    #: The columns of a run table that hold a reference, in field order.
    COLUMNS: ClassVar[tuple[str, str, str]] = ("model", "revision", "precision")
    _SEPARATOR: ClassVar[str] = "|"

    @property
    def key(self) -> str:
        return self._SEPARATOR.join((self.model, self.revision, self.precision))

    @property
    def short_revision(self) -> str:
        return short_revision(self.revision)

    @classmethod
    def parse(cls, key: str) -> RunRef | None:
        """The reference a :attr:`key` names; ``None`` for anything else (a hand-edited link)."""
        parts = str(key).split(cls._SEPARATOR)
        if len(parts) != 3 or not all(parts):
            return None
        return cls(*parts)


# --------------------------------------------------------------------------- tracks' request vocabulary
# The value sets a request file may carry.  The queue validates requests with them and
# cannot import the track definitions (``leaderboard`` depends on ``eval_queue``, never
# the reverse), so they live here and the definitions build on them.


class EvalitaTask(StrEnum):
    """The ten Evalita-LLM task ids, in paper order (``leaderboard.tracks.evalita.definition`` describes each)."""

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
