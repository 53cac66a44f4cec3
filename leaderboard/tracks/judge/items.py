"""What a judge is asked: one :class:`JudgeUnit` per (document, summary, criterion).  Pure.

Two uses build the units:

* **meta** (:func:`meta_units`): every item of the annotated set, for each criterion it
  has a human score for; the human score travels with the unit.
* **generations** (:func:`generation_units`): the per-sample details a run published
  for a generative Evalita task (``details/<org>/<model>/<run>/<task>_<prompt>.jsonl``,
  :class:`~leaderboard.tracks.judge.judged.DetailRecord`): the model's ``answer`` is the text judged, and
  the document is recovered from the ``input`` (the prompt the model saw) by matching the
  prompt's template (:func:`~leaderboard.tracks.judge.judged.get_task`) — for SUM the article between the quotes;
  with few-shot prompts the *last* match, i.e. the article the model was asked about.
  A task with no document field listed in :data:`DOCUMENT_FIELDS`, or an input the
  template does not match, is judged against the whole input.

:func:`harness_row` turns a unit into one line of the local dataset the harness reads
(``doc_to_text: prompt`` in ``harness/_judge_template_yaml``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from leaderboard.tracks.judge.data import AnnotatedSet, FewShotSet
from leaderboard.tracks.judge.definition import Criterion, JudgeProtocol
from leaderboard.tracks.judge.judged import DetailRecord, TaskKind, get_task
from leaderboard.tracks.judge.paper import render_paper_prompt
from leaderboard.tracks.judge.prompts import ANSWER_PREFIX, render_prompt
from leaderboard.tracks.judge.rubric import CRITERIA

#: For each generative task that can be judged against a document: the template field
#: holding it.  Other generative tasks are judged against the whole prompt.
DOCUMENT_FIELDS: Mapping[str, str] = MappingProxyType({"sum": "source"})
#: The harness row's column holding the prefilled start of the answer (the template's ``gen_prefix``).
ANSWER_PREFIX_FIELD = "answer_prefix"

_PLACEHOLDER = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)


@dataclass(frozen=True)
class JudgeUnit:
    """One question to the judge.

    ``item`` identifies the (document, summary) in results and details: ``<doc_id>/<summary_id>``
    for meta, ``<task>/<prompt>/<doc_id>`` for generations.  ``human`` is the annotated
    score (meta only).
    """

    item: str
    criterion: Criterion
    document: str
    summary: str
    human: int | None = None


def generation_item_id(task_id: str, prompt_id: str, doc_id: int) -> str:
    """``sum/p1/7``: a judged output's id (task, prompt and document of the judged run)."""
    return f"{task_id}/{prompt_id}/{doc_id}"


def parse_generation_item(item: str) -> tuple[str, str, int]:
    """``"sum/p1/7"`` → ``("sum", "p1", 7)``; anything else is a ``ValueError``."""
    task_id, prompt_id, doc_id = item.split("/")
    return task_id, prompt_id, int(doc_id)


def meta_units(annotated: AnnotatedSet, criteria: Sequence[Criterion] = CRITERIA) -> list[JudgeUnit]:
    """Every (item, criterion) of the annotated set that has a human score, criterion by criterion."""
    return [
        JudgeUnit(item.key, criterion, item.document, item.summary, human=item.scores[criterion])
        for criterion in criteria
        for item in annotated.items
        if criterion in item.scores
    ]


def template_pattern(template: str, field: str) -> re.Pattern[str] | None:
    """A regex matching a rendered ``template``, capturing ``field`` as group ``document``.

    Other placeholders match anything (lazily).  None when the template does not use ``field``.
    """
    parts: list[str] = []
    found = False
    position = 0
    for placeholder in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[position : placeholder.start()]))
        inner = placeholder.group(0).strip("{}% ").strip()
        if inner == field and not found:
            parts.append(r"(?P<document>.*?)")
            found = True
        else:
            parts.append(r".*?")
        position = placeholder.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts), re.DOTALL) if found else None


def document_from_input(text: str, patterns: Sequence[re.Pattern[str]]) -> str | None:
    """The document inside a prompt: the last match of the first pattern that matches, or None."""
    for pattern in patterns:
        matches = list(pattern.finditer(text))
        if matches:
            return matches[-1].group("document").strip()
    return None


def generation_units(
    task_id: str,
    prompt_id: str,
    records: Iterable[DetailRecord],
    criteria: Sequence[Criterion] = CRITERIA,
) -> list[JudgeUnit]:
    """Units for a run's outputs on one prompt of a generative task (any criterion subset)."""
    task = get_task(task_id)
    if task.kind is not TaskKind.GENERATIVE:
        raise ValueError(f"task {task_id!r} is not generative: there is no generated text to judge")
    field = DOCUMENT_FIELDS.get(task.id)
    # Every prompt of the task: a details file is matched against its own template first.
    ordered = sorted(task.prompts, key=lambda p: p.id != prompt_id)
    patterns = [p for p in (template_pattern(q.template, field) for q in ordered) if p] if field else []
    records = list(records)
    units = []
    for criterion in criteria:
        for record in records:
            document = document_from_input(record.input, patterns) if patterns else None
            units.append(
                JudgeUnit(
                    item=generation_item_id(task.id, prompt_id, record.doc_id),
                    criterion=criterion,
                    document=document or record.input,
                    summary=record.answer,
                )
            )
    return units


def answer_prefix(protocol: JudgeProtocol) -> str:
    """The start of the answer written for the judge: ``{"score":`` (project), nothing (paper)."""
    return ANSWER_PREFIX if protocol is JudgeProtocol.PROJECT else ""


def render_unit(
    unit: JudgeUnit, few_shot: FewShotSet | None = None, protocol: JudgeProtocol = JudgeProtocol.PROJECT
) -> str:
    """The prompt of one unit under ``protocol``, its criterion's examples (if any) in it."""
    examples = (few_shot or {}).get(unit.criterion, ())
    if protocol is JudgeProtocol.PAPER:
        return render_paper_prompt(unit.criterion, unit.document, unit.summary, examples)
    return render_prompt(unit.criterion, unit.document, unit.summary, examples)


def harness_row(
    unit: JudgeUnit, few_shot: FewShotSet | None = None, protocol: JudgeProtocol = JudgeProtocol.PROJECT
) -> dict[str, Any]:
    """One line of the harness dataset: the rendered prompt plus what maps the answer back."""
    return {
        "item": unit.item,
        "criterion": unit.criterion.value,
        "human": unit.human,
        "target": "" if unit.human is None else str(unit.human),
        "prompt": render_unit(unit, few_shot, protocol),
        # lm-eval's gen_prefix (the template names this column; empty: no prefill); the answer starts with it.
        ANSWER_PREFIX_FIELD: answer_prefix(protocol),
    }
