"""The Evalita track's vocabulary: its few-shot settings and the multi-prompt aggregates of paper §5.

The few-shot counts a request of the track may ask for are :data:`FEWSHOT_SETTINGS` (its
spec's ``fewshot``); the views and links name a setting by :class:`Setting` and a table
column by :class:`Aggregate`.
"""

from __future__ import annotations

from enum import StrEnum

from eval_queue.vocabulary import fewshot_label


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
