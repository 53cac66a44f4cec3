"""Tables of the long-context track, from loaded results files (no gradio: the tab renders them).

* :func:`table5` — the paper's Table 5 layout: a row per model and context setting;
  Summary EM/METEOR, Local EM/METEOR/ACC, Local-alt EM/METEOR/ACC, Entity METEOR;
  the best value of each column within each setting marked.
* :func:`plot_frame` — score against context setting, one line per model and column.
* :func:`export_table` — every number of every run: all metrics (both METEORs, the
  unparsed rate) with their 95 % intervals (``<column>_low``/``_high``, empty for a run
  without per-item data), counts and truncation statistics (the side of the window kept), and
  what makes a run a variant of the paper's measurement, one row per run and setting.

Scores are shown as the paper does, 0–100 with two decimals
(:func:`leaderboard.core.numbers.percent`); a missing value is NaN, never 0.  Column names
are derived here once, from the definition: ``<question set>_<metric>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from leaderboard.core.numbers import percent
from leaderboard.tracks.long_context.definition import (
    CONTEXT_SETTING_SPECS,
    METRIC_SPECS,
    QUESTION_SET_SPECS,
    TABLE5_COLUMNS,
    ContextSetting,
    KeptSide,
    Metric,
    QuestionSet,
)
from leaderboard.tracks.long_context.schema import LongContextResults, SetScores
from leaderboard.tracks.long_context.uncertainty import metric_figure

#: The columns identifying a row of every table.
KEY_COLUMNS = ("model", "revision", "precision", "setting")
SCORE_METRICS = (Metric.EM, Metric.METEOR, Metric.METEOR_IT, Metric.ACC, Metric.UNPARSED)


def column(question_set: QuestionSet, metric: Metric) -> str:
    """``local_acc``, ``summary_meteor`` …: the one spelling of a score column."""
    return f"{question_set.value}_{metric.value}"


def interval_columns(name: str) -> tuple[str, str]:
    """``local_acc_low``, ``local_acc_high``: a score column's 95 % interval (0–100)."""
    return f"{name}_low", f"{name}_high"


def column_label(name: str) -> str:
    """``local_alt_acc`` → ``Local alt. ACC`` (labels from the definition)."""
    for question_set in QuestionSet:
        for metric in Metric:
            if column(question_set, metric) == name:
                return f"{QUESTION_SET_SPECS[question_set].label} {METRIC_SPECS[metric].label}"
    raise KeyError(f"not a score column: {name!r}")


TABLE5_COLUMN_NAMES: tuple[str, ...] = tuple(column(qs, m) for qs, m in TABLE5_COLUMNS)


def _score(scores: SetScores, metric: Metric) -> float | None:
    return getattr(scores, metric.value)


def _selected(runs: Sequence[LongContextResults], include_noncomparable: bool) -> list[LongContextResults]:
    return [r for r in runs if include_noncomparable or r.comparable]


def _key(run: LongContextResults, setting: ContextSetting) -> dict[str, object]:
    return {
        "model": run.model.id,
        "revision": run.model.revision,
        "precision": run.model.precision,
        "setting": setting.value,
    }


def _rows(
    runs: Sequence[LongContextResults], include_noncomparable: bool
) -> list[tuple[LongContextResults, ContextSetting]]:
    """(run, setting) pairs, settings in the paper's order, models in the given order."""
    chosen = _selected(runs, include_noncomparable)
    return [
        (run, spec.id) for spec in CONTEXT_SETTING_SPECS.values() for run in chosen if spec.id in run.settings
    ]


@dataclass(frozen=True)
class Table5:
    """The Table 5 frame (0–100) and, cell by cell, whether it is its setting's best."""

    frame: pd.DataFrame
    best: pd.DataFrame  # same index, Table 5 columns, booleans

    def settings(self) -> list[str]:
        return list(dict.fromkeys(self.frame["setting"]))


def table5(runs: Sequence[LongContextResults], *, include_noncomparable: bool = False) -> Table5:
    """Table 5: per setting, a row per run; the best of each column per setting marked (ties too).

    Runs are ranked only beside runs of the same measurement: comparable runs among
    themselves, and a variant (the window's start kept, a chat template) or a run on other
    data among its own kind, never beside the paper's.
    """
    records, groups = [], []
    for run, setting in _rows(runs, include_noncomparable):
        sets = run.settings[setting].sets
        records.append(
            _key(run, setting) | {column(qs, m): percent(_score(sets[qs], m)) for qs, m in TABLE5_COLUMNS}
        )
        # The data revision too: two versions of the dataset are never ranked together.
        groups.append((setting.value, run.comparable, run.run.variants, run.run.data_sha256))
    frame = pd.DataFrame.from_records(records, columns=[*KEY_COLUMNS, *TABLE5_COLUMN_NAMES])
    scores = frame[list(TABLE5_COLUMN_NAMES)].astype(float)
    best = pd.DataFrame(False, index=frame.index, columns=list(TABLE5_COLUMN_NAMES))
    for group in dict.fromkeys(groups):
        rows = frame.index[[g == group for g in groups]]
        block = scores.loc[rows]
        best.loc[rows] = block.eq(block.max()) & block.notna()
    return Table5(frame=frame, best=best)


def plot_frame(runs: Sequence[LongContextResults], *, include_noncomparable: bool = False) -> pd.DataFrame:
    """Long format for a score-vs-setting plot: model, setting (in order), column, label, value (0–100)."""
    records = []
    for run, setting in _rows(runs, include_noncomparable):
        sets = run.settings[setting].sets
        for qs, metric in TABLE5_COLUMNS:
            value = percent(_score(sets[qs], metric))
            if value is not None:
                records.append(
                    {
                        "model": run.model.id,
                        "revision": run.model.revision,
                        "setting": setting.value,
                        "setting_label": CONTEXT_SETTING_SPECS[setting].label,
                        "column": column(qs, metric),
                        "label": column_label(column(qs, metric)),
                        "value": value,
                    }
                )
    return pd.DataFrame.from_records(
        records, columns=["model", "revision", "setting", "setting_label", "column", "label", "value"]
    )


def export_table(runs: Sequence[LongContextResults], *, include_noncomparable: bool = False) -> pd.DataFrame:
    """Every score (0–100), count and truncation statistic, one row per run and setting."""
    records = []
    for run, setting in _rows(runs, include_noncomparable):
        result = run.settings[setting]
        row = _key(run, setting) | {
            "data": run.run.data,
            "limit": run.run.limit,
            "variant": ", ".join(run.run.variants) or None,
            "comparable": run.comparable,
            "data_sha256": run.run.data_sha256,
            "data_problems": "; ".join(run.run.data_problems) or None,
        }
        for qs in QuestionSet:
            scores = result.sets[qs]
            row |= {column(qs, m): percent(_score(scores, m)) for m in SCORE_METRICS}
            for m in SCORE_METRICS:
                interval = (
                    run.uncertainty.interval(metric_figure(setting.value, qs.value, m.value))
                    if run.uncertainty
                    else None
                )
                low, high = interval_columns(column(qs, m))
                row |= {
                    low: percent(interval.low) if interval else None,
                    high: percent(interval.high) if interval else None,
                }
            row |= {f"{qs.value}_n_oe": scores.n_oe, f"{qs.value}_n_mc": scores.n_mc}
        cut = result.truncation
        row |= {
            "items": cut.items,
            "words_cut": cut.words_cut,
            "window_cut": cut.window_cut,
            "offered_words_mean": round(cut.offered_words_mean, 1),
            "context_tokens_mean": round(cut.context_tokens_mean, 1),
            "seen_tokens_mean": round(cut.seen_tokens_mean, 1),
            "seen_tokens_min": cut.seen_tokens_min,
            "seen_fraction_mean": round(cut.seen_fraction_mean, 4),
            "window_tokens": cut.window_tokens,
            "kept_side": (cut.kept_side or run.run.kept_side or KeptSide.START).value,
        }
        records.append(row)
    return pd.DataFrame.from_records(records)
