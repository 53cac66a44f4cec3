"""The LLM-as-judge track's ids, labels and request options: what a request and a results file name.

The rubric follows Donati et al., "Do Large Language Models understand how to be judges?"
(``shared/seeds/002_…``): five criteria (:class:`Criterion`) — coherence, consistency,
fluency, relevance, ordering — each scored 1–5 by a judge that answers with
``{"score": …, "explanation": …}``.  The modules of the track's definition, by role:

* this module — the track's name, modes and protocols, the criteria's ids, the score scale,
  the harness task names, the request options (:class:`JudgeOptions`);
* :mod:`leaderboard.tracks.judge.rubric` — the rubric's texts (:data:`~leaderboard.tracks.judge.rubric.RUBRIC`,
  the one source of truth for every criterion's prompt parts and guideline);
* :mod:`leaderboard.tracks.judge.prompts` — the ``project`` protocol's prompts rendered from the
  rubric, the answer's shape, the stop sequences;
* :mod:`leaderboard.tracks.judge.paper` — the ``paper`` protocol's prompts (Appendix A, quoted);
* :mod:`leaderboard.tracks.judge.app.about` — the About text.

Pure data and pure functions: no I/O, no torch, no lm-eval.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import field_validator, model_validator

from eval_queue.errors import EvalitaError
from eval_queue.text import unknown_name
from eval_queue.tracks import TrackOptions, option

if TYPE_CHECKING:
    from leaderboard.tracks.judge.rubric import CriterionSpec

#: The track's name in request and results files (its spec: :mod:`.spec`).
TRACK = "judge"


class JudgeMode(StrEnum):
    """Judge track: what the judge model scores."""

    #: The annotated set: the judge's scores are compared with human rubric scores.
    META = "meta"
    #: The generations of another run (``judge_target``, a results path).
    GENERATIONS = "generations"


class JudgeProtocol(StrEnum):
    """Judge track: how the judge is prompted and decodes (docs/TRACKS.md, "Fidelity to the papers")."""

    #: The project's Italian rubric, zero-shot, the answer prefilled with ``{"score":``, 256 greedy
    #: tokens: what even a small judge answers in a readable shape (the default; the bundled sample).
    PROJECT = "project"
    #: Table 1's: Appendix A's English templates (:mod:`~leaderboard.tracks.judge.paper`) with the
    #: worker's examples file in their few-shot slots, no prefill, the model's own generation
    #: settings and a budget a reasoning model can think in.
    PAPER = "paper"


#: Version of the rubric text.  Stored in every results file: figures obtained with
#: different prompts are never put side by side silently.  Bump it when a prompt changes.
#: /2: the judge's answer is prefilled with :data:`~leaderboard.tracks.judge.prompts.ANSWER_PREFIX`
#: (the prompts are /1's).
RUBRIC_VERSION = "evalita-judge-rubric/2"

#: The score scale (paper §3: discrete 1–5 per criterion).
SCORE_MIN = 1
SCORE_MAX = 5
SCORES: tuple[int, ...] = tuple(range(SCORE_MIN, SCORE_MAX + 1))

#: The keys of the judge's answer (Appendix A's output template).
SCORE_KEY = "score"
EXPLANATION_KEY = "explanation"

#: Level names, shared by every criterion (Italian in the prompts, agreeing with "punteggio"; English in the UI).
LEVEL_NAMES_IT: tuple[str, ...] = ("molto scarso", "scarso", "discreto", "buono", "eccellente")
LEVEL_NAMES_EN: tuple[str, ...] = ("very poor", "poor", "fair", "good", "excellent")


class Criterion(StrEnum):
    """The five rubric criteria, in the paper's order."""

    COHERENCE = "coherence"
    CONSISTENCY = "consistency"
    FLUENCY = "fluency"
    RELEVANCE = "relevance"
    ORDERING = "ordering"

    # The rubric's texts live in :mod:`.rubric`, which imports these ids: read on use, not at import.
    @property
    def spec(self) -> CriterionSpec:
        from leaderboard.tracks.judge.rubric import RUBRIC

        return RUBRIC[self]

    @property
    def label(self) -> str:
        return self.spec.label


#: lm-eval task names: one generation task per criterion (``harness/_judge_template_yaml``).
HARNESS_TASK_PREFIX = "evalita-judge"


def harness_task_name(criterion: Criterion) -> str:
    """``evalita-judge_coherence`` …: the one place that builds a judge task's name."""
    return f"{HARNESS_TASK_PREFIX}_{criterion.value}"


def judge_variant(
    mode: JudgeMode, target: str | None = None, protocol: JudgeProtocol = JudgeProtocol.PROJECT
) -> str | None:
    """The ``<variant>`` of a judge request's and results file's name (docs/TRACKS.md).

    None for ``meta``; for ``generations``, ``gen-`` and 12 hex digits of the SHA-1 of the
    target results path, so judging two runs of one model never collides and the name stays
    short and safe whatever the path (the path itself is in the file).  The ``paper``
    protocol appends ``paper`` (``paper`` alone for ``meta``): a model judged both ways has
    two requests, never one taking the place of the other; ``project`` adds nothing, so the
    names of files written before protocols existed are unchanged.
    """
    parts: list[str] = []
    if mode is JudgeMode.GENERATIONS:
        if not target:
            raise ValueError("judging generations needs the results path of the run to judge")
        parts.append("gen-" + hashlib.sha1(target.encode()).hexdigest()[:12])
    if protocol is JudgeProtocol.PAPER:
        parts.append(JudgeProtocol.PAPER.value)
    return "-".join(parts) or None


class JudgeOptions(TrackOptions):
    """What a judge request carries: what the judge scores (a target run implies its generations)."""

    #: ``meta`` (None: the annotated set) or ``generations`` (of the run at ``judge_target``).
    judge_mode: JudgeMode | None = option()
    judge_target: str | None = option(
        flag="--judge-target",
        label="Judge the outputs of run … (optional results path; empty: the annotated set)",
        help="judge: score the generations of this results file (default: the annotated set)",
        placeholder="org/model/results_<timestamp>_<precision>_0shot.json",
    )
    #: None: ``project``.  ``paper`` runs only on a worker with an examples file (``--judge-examples``).
    judge_protocol: JudgeProtocol | None = option(
        flag="--judge-protocol",
        label="Judge protocol",
        help="judge: project (default: the project's zero-shot Italian rubric) or paper (Table 1's "
        "protocol: Appendix A's few-shot templates, the model's own generation settings; needs a "
        "worker with the paper's examples file)",
        choice_labels={
            JudgeProtocol.PROJECT.value: "project (zero-shot Italian rubric)",
            JudgeProtocol.PAPER.value: "paper (Table 1: Appendix A, few-shot)",
        },
    )

    @model_validator(mode="before")
    @classmethod
    def _target_means_generations(cls, raw: Any) -> Any:
        if isinstance(raw, dict):
            target = raw.get("judge_target")
            raw = {**raw, "judge_target": target.strip() or None if isinstance(target, str) else target}
            if raw["judge_target"] and raw.get("judge_mode") is None:
                raw["judge_mode"] = JudgeMode.GENERATIONS
        return raw

    @model_validator(mode="after")
    def _target_with_generations(self) -> JudgeOptions:
        wants_target = self.judge_mode is JudgeMode.GENERATIONS
        if wants_target and not self.judge_target:
            raise ValueError("judge_mode 'generations' needs judge_target (the results path to judge)")
        if self.judge_target is not None and not wants_target:
            raise ValueError("judge_target is only used with judge_mode 'generations'")
        return self

    @field_validator("judge_protocol")
    @classmethod
    def _project_is_the_default(cls, value: JudgeProtocol | None) -> JudgeProtocol | None:
        # One request file per measurement: "project" written out is the same request as none.
        return None if value is JudgeProtocol.PROJECT else value

    @property
    def mode(self) -> JudgeMode:
        return self.judge_mode or JudgeMode.META

    @property
    def protocol(self) -> JudgeProtocol:
        return self.judge_protocol or JudgeProtocol.PROJECT

    def variant(self) -> str | None:
        return judge_variant(self.mode, self.judge_target, self.protocol)


class UnknownCriterionError(EvalitaError, LookupError):
    """A criterion name that is not in the rubric; the message suggests the closest one."""


def parse_criterion(value: str) -> Criterion:
    """``"coherence"`` → :attr:`Criterion.COHERENCE`; an unknown name fails with a suggestion."""
    try:
        return Criterion(value)
    except ValueError:
        raise UnknownCriterionError(unknown_name("criterion", value, [c.value for c in Criterion])) from None
