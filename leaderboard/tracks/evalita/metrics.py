"""The multi-prompt metrics of paper §5, as pure functions on 0–1 scores.

Model side (a model on a task, over the task's prompts): MaxP (eq. 2), AvgP (eq. 4),
Sat (eq. 6) and CPS (eq. 8), plus the prompt that reached MaxP.  Prompt side (a
prompt over the models shown): MinP (eq. 1), MaxP (eq. 3), AvgP (eq. 5), Sat (eq. 7),
CPS (eq. 9).  The overall score is the mean CPS over the ten tasks.

A missing score never counts as 0: a model lacking any prompt of a task gets ``None``
for every derived value of that task, and a model lacking any task gets no overall
score.  Nothing here rounds except :func:`percent`, the paper's display format (0–100,
two decimals, halves rounded up); CPS is always computed from unrounded MaxP and AvgP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import TypeVar

from leaderboard.core.numbers import Score
from leaderboard.tracks.evalita.definition import SUITE, TaskKind, TaskSpec

#: A score or an array of resampled scores (numpy): the formulas below take either.
T = TypeVar("T")


def min_performance(scores: Sequence[float]) -> Score:
    """MinP (eq. 1): the lowest score, ``None`` when there is none."""
    return min(scores) if scores else None


def max_performance(scores: Sequence[float]) -> Score:
    """MaxP (eq. 2, 3): the highest score, ``None`` when there is none."""
    return max(scores) if scores else None


def avg_performance(scores: Sequence[float]) -> Score:
    """AvgP (eq. 4, 5): the mean score, ``None`` when there is none."""
    return fmean(scores) if scores else None


def saturation(maxp: Score, avgp: Score) -> Score:
    """Sat (eq. 6, 7) = 1 − (MaxP − AvgP): 1 when every prompt (or model) scores alike."""
    if maxp is None or avgp is None:
        return None
    return sat_formula(maxp, avgp)


def sat_formula(maxp: T, avgp: T) -> T:
    """Sat = 1 − (MaxP − AvgP) on numbers or arrays (resampled values): the one formula."""
    return 1.0 - (maxp - avgp)  # type: ignore[return-value, operator]


def cps_formula(maxp: T, avgp: T) -> T:
    """CPS = Sat · MaxP on numbers or arrays (resampled values): the one formula."""
    return sat_formula(maxp, avgp) * maxp  # type: ignore[return-value, operator]


def combined_performance(maxp: Score, avgp: Score) -> Score:
    """CPS (eq. 8, 9) = Sat · MaxP."""
    return None if maxp is None or avgp is None else cps_formula(maxp, avgp)


@dataclass(frozen=True)
class TaskScore:
    """A model on one task: the model-side metrics and the prompt that reached MaxP."""

    maxp: Score
    avgp: Score
    sat: Score
    cps: Score
    best_prompt: str | None

    @classmethod
    def missing(cls) -> TaskScore:
        return cls(None, None, None, None, None)


@dataclass(frozen=True)
class PromptSummary:
    """One prompt of a task across the models shown (the prompt side of Tables 14, 15, 19)."""

    minp: Score
    maxp: Score
    avgp: Score
    sat: Score
    cps: Score
    n_models: int


@dataclass(frozen=True)
class OverallScore:
    """Mean CPS over all ten tasks, and over the multiple-choice and generative ones."""

    avg_cps: Score
    mc_avg_cps: Score
    gen_avg_cps: Score


def task_score(prompt_scores: Mapping[str, Score], prompt_ids: Sequence[str]) -> TaskScore:
    """Model-side metrics over ``prompt_ids`` (eq. 2, 4, 6, 8).

    Every prompt of the task must have a score: with one missing (absent or ``None``),
    MaxP and AvgP would describe a different prompt set from other models', so every
    derived value is ``None``.  Ties for the best prompt go to the first in suite order.
    """
    scores = [prompt_scores.get(prompt_id) for prompt_id in prompt_ids]
    if not prompt_ids or any(score is None for score in scores):
        return TaskScore.missing()
    present = [score for score in scores if score is not None]  # all of them; narrows the type
    maxp = max(present)
    avgp = fmean(present)
    best = next(pid for pid, score in zip(prompt_ids, present, strict=True) if score == maxp)
    return TaskScore(maxp, avgp, saturation(maxp, avgp), combined_performance(maxp, avgp), best)


def score_task(task: TaskSpec, prompt_scores: Mapping[str, Score]) -> TaskScore:
    """:func:`task_score` over the suite's prompts for ``task``."""
    return task_score(prompt_scores, task.prompt_ids)


def prompt_summary(model_scores: Sequence[Score]) -> PromptSummary:
    """Prompt-side metrics over the models that have a score for the prompt (eq. 1, 3, 5, 7, 9).

    A model without a score for this prompt did not run it and is not one of the models
    the prompt is compared over; with no model at all every value is ``None``.
    """
    present = [score for score in model_scores if score is not None]
    maxp = max_performance(present)
    avgp = avg_performance(present)
    return PromptSummary(
        minp=min_performance(present),
        maxp=maxp,
        avgp=avgp,
        sat=saturation(maxp, avgp),
        cps=combined_performance(maxp, avgp),
        n_models=len(present),
    )


def _mean_or_none(values: Sequence[Score]) -> Score:
    if not values or any(value is None for value in values):
        return None
    return fmean(value for value in values if value is not None)


def overall_score(task_cps: Mapping[str, Score], tasks: Sequence[TaskSpec] = SUITE) -> OverallScore:
    """Mean CPS over ``tasks`` (the ranking score) and its multiple-choice/generative parts.

    A task absent from ``task_cps`` or with CPS ``None`` leaves the averages that
    include it empty: a partial average would rank a model on fewer tasks than others.
    """

    def mean_of(kind: TaskKind | None) -> Score:
        return _mean_or_none([task_cps.get(t.id) for t in tasks if kind is None or t.kind is kind])

    return OverallScore(
        avg_cps=mean_of(None),
        mc_avg_cps=mean_of(TaskKind.MULTIPLE_CHOICE),
        gen_avg_cps=mean_of(TaskKind.GENERATIVE),
    )
