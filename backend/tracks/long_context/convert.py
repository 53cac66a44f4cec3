"""Harness output of a long-context run → the track's results body and details.  Pure: no I/O.

Inputs as ``lm_eval.simple_evaluate`` and :class:`BookCacheHFLM.run_report` give them:

* ``results``: ``{task: {"em,none": float, "meteor,none": …, "acc,none": …, "unparsed,none": …}}``
* ``samples``: ``{task: [{"doc_id", "doc": {question row}, "filtered_resps": [answer], "em", …}]}``
* ``windows``: ``[{"task", "doc_id", "prefix_tokens", "seen_tokens"}]`` (one per request);
  ``kept_side``: which end of a prompt longer than the window the model kept

Every task the run named must be there with its scores in [0, 1], else
:class:`IncompleteRunError` (a partial run is never published as FINISHED).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from backend.tracks import IncompleteRunError
from leaderboard.tracks.long_context.definition import (
    CONTEXT_SETTING_SPECS,
    AnswerKind,
    ContextHarnessTask,
    ContextSetting,
    KeptSide,
    Metric,
    QuestionSet,
    metrics_for,
)
from leaderboard.tracks.long_context.metrics import extract_letter
from leaderboard.tracks.long_context.schema import (
    LongContextDetail,
    SetScores,
    SettingResult,
    TruncationStats,
)

WindowKey = tuple[str, int]


def _score(results: Mapping[str, Mapping[str, Any]], task: str, metric: Metric) -> float:
    value = results.get(task, {}).get(f"{metric.value},none")
    if not isinstance(value, int | float) or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise IncompleteRunError(f"task {task}: no usable {metric.value} score ({value!r})")
    return float(value)


def _count(samples: Mapping[str, Sequence[Any]], task: str) -> int:
    n = len(samples.get(task, ()))
    if n == 0:
        raise IncompleteRunError(f"task {task}: no answered question in the harness output")
    return n


def set_scores(
    question_set: QuestionSet,
    tasks: Sequence[ContextHarnessTask],
    results: Mapping[str, Mapping[str, Any]],
    samples: Mapping[str, Sequence[Any]],
) -> SetScores:
    """The scores of one question set under one setting, from its OE task and its MC task if any."""
    by_kind = {t.kind: t.name for t in tasks if t.question_set is question_set}
    oe = by_kind.get(AnswerKind.OPEN_ENDED)
    if oe is None:
        raise IncompleteRunError(f"no open-ended task for {question_set.value}")
    fields: dict[str, Any] = {"n_oe": _count(samples, oe)}
    fields |= {m.value: _score(results, oe, m) for m in metrics_for(AnswerKind.OPEN_ENDED)}
    mc = by_kind.get(AnswerKind.MULTIPLE_CHOICE)
    if mc is not None:
        fields["n_mc"] = _count(samples, mc)
        fields |= {m.value: _score(results, mc, m) for m in metrics_for(AnswerKind.MULTIPLE_CHOICE)}
    return SetScores(**fields)


def window_index(windows: Sequence[Mapping[str, Any]]) -> dict[WindowKey, Mapping[str, Any]]:
    return {(str(w["task"]), int(w["doc_id"])): w for w in windows}


def truncation_stats(
    setting: ContextSetting,
    tasks: Sequence[ContextHarnessTask],
    samples: Mapping[str, Sequence[Mapping[str, Any]]],
    windows: Mapping[WindowKey, Mapping[str, Any]],
    book_words: Mapping[str, int],
    window_tokens: int | None,
    kept_side: KeptSide | None = None,
) -> TruncationStats:
    """Cut counts and tokens seen over every item (OE and MC) of one setting, and the side kept."""
    max_words = CONTEXT_SETTING_SPECS[setting].max_words
    offered, context, seen, fractions = [], [], [], []
    words_cut = window_cut = 0
    for task in tasks:
        for sample in samples.get(task.name, ()):
            key = (task.name, int(sample["doc_id"]))
            if key not in windows:
                raise IncompleteRunError(f"task {task.name} doc {key[1]}: the model reported no window")
            words = book_words[sample["doc"]["book_id"]]
            offered.append(words if max_words is None else min(words, max_words))
            words_cut += max_words is not None and words > max_words
            prefix, shown = int(windows[key]["prefix_tokens"]), int(windows[key]["seen_tokens"])
            window_cut += shown < prefix
            context.append(prefix)
            seen.append(shown)
            fractions.append(shown / prefix if prefix else 1.0)
    if not seen:
        raise IncompleteRunError(f"setting {setting.value}: no item was evaluated")
    return TruncationStats(
        items=len(seen),
        words_cut=words_cut,
        window_cut=window_cut,
        offered_words_mean=sum(offered) / len(offered),
        context_tokens_mean=sum(context) / len(context),
        seen_tokens_mean=sum(seen) / len(seen),
        seen_tokens_min=min(seen),
        seen_fraction_mean=sum(fractions) / len(fractions),
        window_tokens=window_tokens,
        kept_side=kept_side,
    )


def settings_body(
    tasks: Sequence[ContextHarnessTask],
    results: Mapping[str, Mapping[str, Any]],
    samples: Mapping[str, Sequence[Mapping[str, Any]]],
    windows: Sequence[Mapping[str, Any]],
    book_words: Mapping[str, int],
    window_tokens: int | None = None,
    kept_side: KeptSide | None = None,
) -> dict[ContextSetting, SettingResult]:
    """The ``settings`` body: per setting the four question sets and the truncation statistics."""
    index = window_index(windows)
    body: dict[ContextSetting, SettingResult] = {}
    for setting in dict.fromkeys(t.setting for t in tasks):
        of_setting = [t for t in tasks if t.setting is setting]
        body[setting] = SettingResult(
            sets={qs: set_scores(qs, of_setting, results, samples) for qs in QuestionSet},
            truncation=truncation_stats(
                setting, of_setting, samples, index, book_words, window_tokens, kept_side
            ),
        )
    return body


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def detail_record(
    task: ContextHarnessTask, sample: Mapping[str, Any], window: Mapping[str, Any] | None
) -> LongContextDetail:
    """One details line: the question, its references, the answer and its scores."""
    doc = sample["doc"]
    responses = sample.get("filtered_resps") or [""]
    answer = responses[0] if isinstance(responses[0], str) else str(responses[0])
    is_mc = task.kind is AnswerKind.MULTIPLE_CHOICE
    return LongContextDetail(
        doc_id=int(sample["doc_id"]),
        question_id=str(doc["question_id"]),
        book_id=str(doc["book_id"]),
        question=doc["question"],
        references=list(doc["answers"]),
        answer=answer,
        choices=list(doc["choices"]) if is_mc else None,
        label=doc["label"] if is_mc else None,
        letter=extract_letter(answer).letter if is_mc else None,
        em=_float(sample.get(Metric.EM.value)),
        meteor=_float(sample.get(Metric.METEOR.value)),
        meteor_it=_float(sample.get(Metric.METEOR_IT.value)),
        acc=_float(sample.get(Metric.ACC.value)),
        context_tokens=int(window["prefix_tokens"]) if window else None,
        seen_tokens=int(window["seen_tokens"]) if window else None,
    )


def detail_records(
    tasks: Sequence[ContextHarnessTask],
    samples: Mapping[str, Sequence[Mapping[str, Any]]],
    windows: Sequence[Mapping[str, Any]],
) -> dict[str, list[LongContextDetail]]:
    """``{harness task: [detail, …]}`` in document order."""
    index = window_index(windows)
    return {
        task.name: [
            detail_record(task, s, index.get((task.name, int(s["doc_id"]))))
            for s in sorted(samples.get(task.name, ()), key=lambda s: int(s["doc_id"]))
        ]
        for task in tasks
    }
