"""Harness output → the results file (DESIGN.md) and per-sample details.  Pure: no I/O.

Inputs are plain dicts as ``lm_eval.simple_evaluate`` returns them:

* ``results``: ``{harness task: {"<metric>,none": float, "<metric>_stderr,none": float | "N/A", …}}``
* ``n_samples``: ``{harness task: {"original": int, "effective": int}}``
* ``samples``: ``{harness task: [{"doc_id", "arguments", "filtered_resps", "target", <metric>…}, …]}``

Every task and prompt of the suite (:mod:`leaderboard.tracks.evalita.definition`) must be present with a
finite score in [0, 1], else :class:`IncompleteRunError`: a partial run is never
published as FINISHED.

NER: each prompt runs on three domains (``adg``, ``fic``, ``wn``); the prompt's score is
their F1 weighted by the number of documents, exactly like the upstream group
``evalita-mp_ner_group`` (``aggregate_metric_list: f1, weight_by_size: true``); the three
domain scores are kept under ``parts``.  SUM: the suite's metric, ``rouge1`` (what the
upstream task reports).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from backend.tracks import IncompleteRunError
from leaderboard.tracks.evalita.definition import SUITE, HarnessTask, PromptSpec, TaskKind, TaskSpec
from leaderboard.tracks.evalita.metric_sets import weighted_by_size
from leaderboard.tracks.evalita.schema import (
    DetailRecord,
    PromptScore,
    TaskResult,
    details_file_name,
)
from leaderboard.tracks.evalita.specified import mc_prediction


@dataclass(frozen=True)
class HarnessScore:
    score: float
    stderr: float | None
    n: int


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def harness_score(
    results: Mapping[str, Mapping[str, Any]],
    n_samples: Mapping[str, Mapping[str, int]],
    name: str,
    metric: str,
) -> HarnessScore:
    """The score of one harness task; :class:`IncompleteRunError` says what is wrong."""
    entry = results.get(name)
    if entry is None:
        raise IncompleteRunError(f"harness task {name} is missing from the output")
    key = f"{metric},none"
    if key not in entry:
        found = ", ".join(sorted(k for k in entry if "," in k)) or "none"
        raise IncompleteRunError(f"harness task {name} has no {key!r} (metrics found: {found})")
    score = _number(entry[key])
    if score is None or not 0.0 <= score <= 1.0:
        raise IncompleteRunError(f"harness task {name}: {metric} = {entry[key]!r} is not a number in [0, 1]")
    stderr = _number(entry.get(f"{metric}_stderr,none"))
    counts = n_samples.get(name, {})
    n = counts.get("effective", counts.get("original"))
    if n is None:
        n = entry.get("sample_len")
    if not isinstance(n, int) or n <= 0:
        raise IncompleteRunError(f"harness task {name} evaluated no documents")
    return HarnessScore(score, stderr, n)


def prompt_score(
    task: TaskSpec,
    prompt: PromptSpec,
    results: Mapping[str, Mapping[str, Any]],
    n_samples: Mapping[str, Mapping[str, int]],
) -> PromptScore:
    """One prompt's score; several harness tasks (NER domains) are weighted by size."""
    parts = [(h, harness_score(results, n_samples, h.name, task.metric)) for h in prompt.harness_tasks]
    if len(parts) == 1 and parts[0][0].part is None:
        only = parts[0][1]
        return PromptScore(score=only.score, stderr=only.stderr, n=only.n)
    return weighted_by_size([(h.part or h.name, s.score, s.n) for h, s in parts])


def task_results(
    results: Mapping[str, Mapping[str, Any]],
    n_samples: Mapping[str, Mapping[str, int]],
    suite: Sequence[TaskSpec] = SUITE,
) -> dict[str, TaskResult]:
    """All tasks of the suite; raises :class:`IncompleteRunError` listing everything missing."""
    tasks: dict[str, TaskResult] = {}
    problems: list[str] = []
    for task in suite:
        prompts: dict[str, PromptScore] = {}
        for prompt in task.prompts:
            try:
                prompts[prompt.id] = prompt_score(task, prompt, results, n_samples)
            except IncompleteRunError as exc:
                problems.append(f"{task.id}/{prompt.id}: {exc}")
        tasks[task.id] = TaskResult(metric=task.metric, prompts=prompts)
    if problems:
        shown = "; ".join(problems[:8]) + (f"; … and {len(problems) - 8} more" if len(problems) > 8 else "")
        raise IncompleteRunError(f"the run did not produce every task and prompt: {shown}")
    return tasks


# --------------------------------------------------------------------------- details


def _mc_record(sample: Mapping[str, Any]) -> DetailRecord:
    arguments = sample.get("arguments") or []
    choices = [str(arg[1]).strip() for arg in arguments]
    lls = [float(resp[0]) for resp in sample.get("filtered_resps") or []]
    # The harness's own pick (np.argmax: the first NaN, else the first highest), so the answer
    # shown and the per-sample score agree with ``acc`` and with ``rescore``.
    picked = mc_prediction(lls) if lls else None
    target = sample.get("target")
    gold = target if isinstance(target, int) and 0 <= target < len(choices) else None
    return DetailRecord(
        doc_id=int(sample["doc_id"]),
        input=str(arguments[0][0]) if arguments else "",
        answer=choices[picked] if picked is not None and picked < len(choices) else "",
        target=choices[gold] if gold is not None else str(target),
        score=float(picked == gold) if picked is not None and gold is not None else None,
        choices=choices,
        loglikelihoods=lls,
        gold=gold,
    )


# The dataset field holding each generative task's gold, and the two fields of each of its items:
# what the metrics read besides the joined ``target`` (which loses LS's annotator counts, and is
# ambiguous for a NER or RE text holding a separator).
_GOLD_FIELDS: dict[str, tuple[str, tuple[str | int, str | int]]] = {
    "ner": ("entities", ("entity_text", "type")),
    "ls": ("answers", ("word", "count")),
    "re": ("relations", (0, 1)),
}


def structured_gold(task_id: str, doc: Any) -> list[list[str | int]] | None:
    """The gold items of a generative document as ``[[a, b], …]`` (None: no such task or field)."""
    if task_id not in _GOLD_FIELDS or not isinstance(doc, Mapping):
        return None
    name, (first, second) = _GOLD_FIELDS[task_id]
    items = doc.get(name)
    if not isinstance(items, list):
        return None
    try:
        return [[_gold_value(item[first]), _gold_value(item[second])] for item in items]
    except (KeyError, IndexError, TypeError):
        return None


def _gold_value(value: Any) -> str | int:
    return value if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _gen_record(sample: Mapping[str, Any], task: TaskSpec) -> DetailRecord:
    arguments = sample.get("arguments") or []
    responses = sample.get("filtered_resps") or [""]
    answer = responses[0] if isinstance(responses, list | tuple) else responses
    while isinstance(answer, list | tuple) and answer:
        answer = answer[0]
    return DetailRecord(
        doc_id=int(sample["doc_id"]),
        input=str(arguments[0][0]) if arguments else "",
        answer=str(answer),
        target=str(sample.get("target")),
        score=_number(sample.get(task.metric)),
        gold=structured_gold(task.id, sample.get("doc")),
    )


def detail_records(
    task: TaskSpec, harness: HarnessTask, samples: Iterable[Mapping[str, Any]]
) -> list[DetailRecord]:
    """Per-sample records of one harness task (NER records carry their ``part``)."""
    records = []
    for sample in samples:
        record = _mc_record(sample) if task.kind is TaskKind.MULTIPLE_CHOICE else _gen_record(sample, task)
        if harness.part is not None:
            record = record.model_copy(update={"part": harness.part})
        records.append(record)
    return records


def details_files(
    samples: Mapping[str, Sequence[Mapping[str, Any]]], suite: Sequence[TaskSpec] = SUITE
) -> dict[str, bytes]:
    """``{file name: JSONL bytes}``: one ``<task>_<prompt>.jsonl`` per prompt (inside the run's details
    folder, which the worker names); a prompt without outputs raises :class:`IncompleteRunError`."""
    files: dict[str, bytes] = {}
    for task in suite:
        for prompt in task.prompts:
            lines: list[str] = []
            for harness in prompt.harness_tasks:
                for record in detail_records(task, harness, samples.get(harness.name, ())):
                    lines.append(
                        json.dumps(record.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
                    )
            if not lines:
                raise IncompleteRunError(f"no per-sample outputs for {task.id}/{prompt.id}")
            files[details_file_name(task.id, prompt.id)] = ("\n".join(lines) + "\n").encode()
    return files
