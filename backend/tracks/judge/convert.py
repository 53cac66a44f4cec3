"""Harness output of a judge run → answers, results body and details lines.  Pure: no I/O, no torch.

``samples`` is ``HarnessOutput.samples``: ``{evalita-judge_<criterion>: [sample, …]}``, each
sample with ``doc`` (the dataset row: ``item``, ``criterion``, ``human``, ``prompt``),
``filtered_resps`` (the answer; the task has no filter, so the raw generation) and the
task's per-sample metrics ``parsed``/``score`` (from ``harness/hooks.py``).  Every answer
is read again here with the same :func:`~leaderboard.tracks.judge.parse.parse_answer`
to get the explanation; :func:`check_harness_agreement` makes sure the harness's own
``parsed`` figure says the same, so the two readings can never drift apart unnoticed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eval_queue.errors import EvalitaError
from leaderboard.tracks.judge.definition import RUBRIC_VERSION, Criterion, JudgeProtocol, harness_task_name
from leaderboard.tracks.judge.items import ANSWER_PREFIX_FIELD, parse_generation_item
from leaderboard.tracks.judge.metrics import JudgedScore, meta_evaluation
from leaderboard.tracks.judge.paper import PAPER_RUBRIC_VERSION
from leaderboard.tracks.judge.parse import JudgeAnswer, parse_answer
from leaderboard.tracks.judge.prompts import judge_answer
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.schema import (
    AnnotatedSetInfo,
    FewShotInfo,
    GeneratedItem,
    GenerationsBody,
    GenerationSettings,
    JudgeDetail,
    JudgedRun,
    MeanBlock,
    MetaBody,
    MetaItem,
    PaperDataPins,
    StatBlock,
)


class JudgeRunError(EvalitaError):
    """A judge run cannot be published: answers missing, or the harness and the parser disagree."""


def rubric_version(protocol: JudgeProtocol) -> str:
    """The version of the prompts a protocol renders (the results file's ``rubric``)."""
    return PAPER_RUBRIC_VERSION if protocol is JudgeProtocol.PAPER else RUBRIC_VERSION


@dataclass(frozen=True)
class JudgeRunSetup:
    """How a judge run was set up, as its results record it beside the figures: protocol, examples
    file, decoding, annotated set, the paper pins."""

    protocol: JudgeProtocol = JudgeProtocol.PROJECT
    few_shot: FewShotInfo | None = None
    generation: GenerationSettings | None = None
    annotated: AnnotatedSetInfo | None = None
    #: The digests the worker's maintainer pinned as the paper's data (meta runs record them).
    paper_pins: PaperDataPins | None = None

    @property
    def fields(self) -> dict[str, object]:
        return {
            "rubric": rubric_version(self.protocol),
            "protocol": self.protocol,
            "few_shot": self.few_shot,
            "generation": self.generation,
        }


@dataclass(frozen=True)
class JudgedAnswer:
    """One answer of the judge, mapped back to its unit and read."""

    item: str
    criterion: Criterion
    human: int | None
    raw: str
    answer: JudgeAnswer


def _response_text(sample: Mapping[str, Any]) -> str:
    response: Any = sample.get("filtered_resps")
    while isinstance(response, list | tuple):
        if not response:
            return ""
        response = response[0]
    return "" if response is None else str(response)


def answers_from_samples(
    samples: Mapping[str, Sequence[Mapping[str, Any]]], criteria: Sequence[Criterion] = CRITERIA
) -> list[JudgedAnswer]:
    """Every answer of the run, criterion by criterion in rubric order, in the harness's doc order."""
    answers: list[JudgedAnswer] = []
    for criterion in criteria:
        name = harness_task_name(criterion)
        rows = sorted(samples.get(name, ()), key=lambda s: int(s.get("doc_id", 0)))
        for sample in rows:
            doc = sample.get("doc") or {}
            if doc.get("criterion") != criterion.value or not doc.get("item"):
                raise JudgeRunError(f"task {name}: sample {sample.get('doc_id')} is not a {criterion} item")
            # The prefilled start (lm-eval's gen_prefix) is part of the answer the judge gave.
            raw = judge_answer(_response_text(sample), doc.get(ANSWER_PREFIX_FIELD) or "")
            human = doc.get("human")
            answers.append(
                JudgedAnswer(
                    item=str(doc["item"]),
                    criterion=criterion,
                    human=int(human) if human is not None else None,
                    raw=raw,
                    answer=parse_answer(raw),
                )
            )
    if not answers:
        raise JudgeRunError("the harness returned no answers from the judge")
    return answers


def check_harness_agreement(
    results: Mapping[str, Mapping[str, Any]], answers: Sequence[JudgedAnswer]
) -> None:
    """The harness's ``parsed`` per task must equal the share of answers read here."""
    for criterion in {a.criterion for a in answers}:
        name = harness_task_name(criterion)
        ours = [a.answer.parsed for a in answers if a.criterion is criterion]
        theirs = results.get(name, {}).get("parsed,none")
        if not isinstance(theirs, int | float) or not math.isclose(
            theirs, sum(ours) / len(ours), abs_tol=1e-9
        ):
            raise JudgeRunError(
                f"task {name}: the harness reports parsed = {theirs!r}, the answers give "
                f"{sum(ours)}/{len(ours)}; the harness hook and the parser disagree"
            )


def detail_lines(answers: Iterable[JudgedAnswer]) -> dict[Criterion, bytes]:
    """``{criterion: JSONL bytes}``: one :class:`JudgeDetail` per answer."""
    lines: dict[Criterion, list[str]] = {}
    for a in answers:
        detail = JudgeDetail(
            item=a.item,
            criterion=a.criterion,
            raw=a.raw,
            status=a.answer.status,
            score=a.answer.score,
            explanation=a.answer.explanation,
            repaired=a.answer.repaired,
            human=a.human,
            thinking=a.answer.thinking,
        )
        lines.setdefault(a.criterion, []).append(
            json.dumps(detail.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
        )
    return {c: ("\n".join(rows) + "\n").encode() for c, rows in lines.items()}


def meta_body(answers: Sequence[JudgedAnswer], setup: JudgeRunSetup | None = None) -> MetaBody:
    """The judges-leaderboard body: Table 1 figures per criterion and overall, and the item scores."""
    annotated = [(a, a.human) for a in answers if a.human is not None]
    if len(annotated) != len(answers):
        missing = [a.item for a in answers if a.human is None]
        raise JudgeRunError(f"meta-evaluation answers without a human score: {', '.join(missing[:5])}")
    evaluation = meta_evaluation(
        JudgedScore(a.item, a.criterion, human, a.answer.score) for a, human in annotated
    )
    setup = setup or JudgeRunSetup()
    return MetaBody(
        **setup.fields,
        annotated=setup.annotated,
        paper_pins=setup.paper_pins,
        criteria={c: StatBlock.from_agreement(agg) for c, agg in evaluation.criteria.items()},
        overall=StatBlock.from_agreement(evaluation.overall),
        items=[
            MetaItem(
                item=a.item, criterion=a.criterion, human=human, judge=a.answer.score, status=a.answer.status
            )
            for a, human in annotated
        ],
    )


def mean_block(scores: Sequence[int | None]) -> MeanBlock:
    """Mean of the parsed scores with the unparsed rate; null mean when nothing parsed."""
    scored = [s for s in scores if s is not None]
    return MeanBlock(
        n_items=len(scores),
        n_scored=len(scored),
        unparsed_rate=(len(scores) - len(scored)) / len(scores) if scores else None,
        mean=sum(scored) / len(scored) if scored else None,
    )


def generations_body(
    answers: Sequence[JudgedAnswer], target: JudgedRun, setup: JudgeRunSetup | None = None
) -> GenerationsBody:
    """The judged-generations body: means per criterion (pooled and per prompt) and every item."""
    items = []
    for a in answers:
        task, prompt, doc_id = parse_generation_item(a.item)
        items.append(
            GeneratedItem(
                item=a.item,
                task=task,
                prompt=prompt,
                doc_id=doc_id,
                criterion=a.criterion,
                score=a.answer.score,
                status=a.answer.status,
                explanation=a.answer.explanation,
            )
        )
    tasks = sorted({i.task for i in items})
    if len(tasks) != 1:
        raise JudgeRunError(f"one judged task per run, found {', '.join(tasks)}")
    criteria = [c for c in CRITERIA if any(i.criterion is c for i in items)]
    prompts = sorted({i.prompt for i in items})
    return GenerationsBody(
        **(setup or JudgeRunSetup()).fields,
        target=target,
        task=tasks[0],
        criteria={c: mean_block([i.score for i in items if i.criterion is c]) for c in criteria},
        overall=mean_block([i.score for i in items]),
        by_prompt={
            p: {
                c: mean_block([i.score for i in items if i.criterion is c and i.prompt == p])
                for c in criteria
            }
            for p in prompts
        },
        items=items,
    )
