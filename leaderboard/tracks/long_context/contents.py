"""The long-context track's part of the contents table (:mod:`leaderboard.core.contents`).

One row per context setting of a run (``setting``: ``10k``, ``50k``, ``full``), laid out like
the paper's Table 5: per question set its OE means (``<set>_em``, ``<set>_meteor``,
``<set>_meteor_it``, over ``<set>_n_oe`` items) and, for the sets with multiple-choice items,
accuracy and unparsed rate (over ``<set>_n_mc``), each score's 95 % interval from the run's
``uncertainty`` block (``<set>_<figure>_low``/``_high``; null for a run without per-item data);
then how much of the books the model saw.  Scores on the 0–1 scale; null where a figure does
not exist (Entity has no MC items).
"""

from __future__ import annotations

import pyarrow as pa

from leaderboard.core.contents import Row, TrackContents, column
from leaderboard.core.schema import ResultsEnvelope
from leaderboard.tracks.long_context.definition import QuestionSet
from leaderboard.tracks.long_context.schema import LongContextResults
from leaderboard.tracks.long_context.uncertainty import metric_figure

#: Per question set: (field of its scores, type, what it is).
SET_FIGURES: tuple[tuple[str, pa.DataType, str], ...] = (
    ("em", pa.float64(), "exact match, open-ended items"),
    ("meteor", pa.float64(), "METEOR (paper-compatible), open-ended items"),
    ("meteor_it", pa.float64(), "METEOR (Italian), open-ended items"),
    ("n_oe", pa.int64(), "open-ended items"),
    ("acc", pa.float64(), "accuracy, multiple-choice items"),
    ("unparsed", pa.float64(), "share of multiple-choice answers with no readable letter"),
    ("n_mc", pa.int64(), "multiple-choice items"),
)
#: The figures whose 95 % interval has its columns.
INTERVAL_FIGURES: tuple[str, ...] = ("em", "meteor", "meteor_it", "acc")
#: Per setting: (field of its truncation statistics, type, what it is).
TRUNCATION_FIGURES: tuple[tuple[str, pa.DataType, str], ...] = (
    ("words_cut", pa.int64(), "items whose book was cut to the setting's words"),
    ("window_cut", pa.int64(), "items whose context was cut further to the model's window"),
    ("seen_tokens_mean", pa.float64(), "mean tokens of the book the model saw"),
    ("seen_fraction_mean", pa.float64(), "mean share of the offered context the model saw"),
)


def _columns() -> tuple[pa.Field, ...]:
    fields = [
        column(f"{qs.value}_{name}", kind, f"long-context: {qs.value}, {what}")
        for qs in QuestionSet
        for name, kind, what in SET_FIGURES
    ]
    fields += [
        column(
            f"{qs.value}_{name}_{end}",
            pa.float64(),
            f"long-context: {qs.value}, {end} end of {name}'s 95 % interval",
        )
        for qs in QuestionSet
        for name in INTERVAL_FIGURES
        for end in ("low", "high")
    ]
    fields += [column(name, kind, f"long-context: {what}") for name, kind, what in TRUNCATION_FIGURES]
    return tuple(fields)


def rows(results: ResultsEnvelope) -> list[Row]:
    """One row per context setting the run covered, in the run's order."""
    assert isinstance(results, LongContextResults)
    out = []
    intervals = results.uncertainty.intervals if results.uncertainty is not None else {}
    for setting in results.run.context_settings:
        scores = results.settings[setting]
        row: Row = {"setting": setting.value}
        for question_set, figures in scores.sets.items():
            row |= {f"{question_set.value}_{name}": getattr(figures, name) for name, _, _ in SET_FIGURES}
            for name in INTERVAL_FIGURES:
                figure = metric_figure(setting.value, question_set.value, name)
                if figure in intervals:
                    low, high = intervals[figure]
                    row |= {
                        f"{question_set.value}_{name}_low": low,
                        f"{question_set.value}_{name}_high": high,
                    }
        row |= {name: getattr(scores.truncation, name) for name, _, _ in TRUNCATION_FIGURES}
        out.append(row)
    return out


CONTENTS = TrackContents(columns=_columns(), rows=rows)
