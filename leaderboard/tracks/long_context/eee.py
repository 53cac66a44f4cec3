"""The long-context track's part of the Every Eval Ever export (:mod:`leaderboard.eee`).

Figures: per context setting and question set, Table 5's EM, METEOR (paper-compatible), METEOR
(Italian), accuracy and the unparsed rate (lower is better), 0–1, with the run's 95 % intervals.
Items: each details file ``indaqa2_<set>_<oe|mc>_<setting>.jsonl`` is the items of one figure —
METEOR for the open-ended questions, accuracy for the multiple-choice ones (one instance per
question: the EEE format wants one record per aggregate it joins).
"""

from __future__ import annotations

from collections.abc import Iterable

from leaderboard.core.schema import ResultsEnvelope
from leaderboard.eee.model import Figure, Item, TrackEee
from leaderboard.tracks.long_context.definition import HUB_DATASET, TASK_PREFIX, AnswerKind
from leaderboard.tracks.long_context.schema import LongContextResults, parse_details
from leaderboard.tracks.long_context.uncertainty import metric_figure

BENCHMARK = "evalita-llm-long-context"
#: (metric, name, answer kind whose details hold its items, lower is better)
METRICS = (
    ("em", "exact match", AnswerKind.OPEN_ENDED, False),
    ("meteor", "METEOR (paper-compatible, NLTK)", AnswerKind.OPEN_ENDED, False),
    ("meteor_it", "METEOR (Italian variant)", AnswerKind.OPEN_ENDED, False),
    ("acc", "accuracy", AnswerKind.MULTIPLE_CHOICE, False),
    ("unparsed", "share of answers with no readable letter", AnswerKind.MULTIPLE_CHOICE, True),
)
#: The figure whose items a details file of each kind holds.
ITEM_METRIC = {AnswerKind.OPEN_ENDED: "meteor", AnswerKind.MULTIPLE_CHOICE: "acc"}


def figures(results: ResultsEnvelope) -> list[Figure]:
    assert isinstance(results, LongContextResults)
    intervals = results.uncertainty.intervals if results.uncertainty is not None else {}
    out = []
    for setting, result in results.settings.items():
        for question_set, scores in result.sets.items():
            for metric, label, kind, lower in METRICS:
                value = getattr(scores, metric)
                if value is None:
                    continue
                low, high = intervals.get(
                    metric_figure(setting.value, question_set.value, metric), (None, None)
                )
                details = None
                if ITEM_METRIC[kind] == metric:
                    details = f"{TASK_PREFIX}_{question_set.value}_{kind.value}_{setting.value}.jsonl"
                out.append(
                    Figure(
                        result_id=f"{setting.value}/{question_set.value}/{metric}",
                        name=f"INDAQA2 {question_set.value} {metric} ({setting.value})",
                        value=value,
                        metric_id=f"indaqa2.{metric}",
                        metric_name=metric,
                        description=f"INDAQA2, {question_set.value} questions, book cut to {setting.value}: {label}",
                        lower_is_better=lower,
                        low=low,
                        high=high,
                        interval_method="paired item bootstrap",
                        num_samples=scores.n_oe if kind is AnswerKind.OPEN_ENDED else scores.n_mc,
                        details_file=details,
                    )
                )
    return out


def items(results: ResultsEnvelope, file_name: str, data: bytes) -> Iterable[Item]:
    multiple_choice = "_mc_" in file_name
    for line in parse_details(data, file_name):
        score = line.acc if multiple_choice else line.meteor
        if score is None:
            continue
        yield Item(
            sample_id=line.question_id,
            raw_input=line.question,
            references=tuple(line.references),
            outputs=(line.answer,),
            score=float(score),
            correct=bool(score) if multiple_choice else None,
            choices=tuple(line.choices) if line.choices else None,
            extracted=line.letter if multiple_choice else None,
            extraction_method="Appendix E regexes" if multiple_choice else "lm-eval filter",
            metadata={"book_id": line.book_id, "doc_id": str(line.doc_id)},
        )


EEE = TrackEee(benchmark=BENCHMARK, dataset=("INDAQA2", HUB_DATASET), figures=figures, items=items)
