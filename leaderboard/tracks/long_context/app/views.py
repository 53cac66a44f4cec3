"""What the "Long context" tab shows, from loaded results and details (no gradio; all text escaped).

* :func:`table5_html` — the paper's Table 5 layout as an HTML table: per setting, a row per run;
  Summary EM/METEOR, Local EM/METEOR/ACC, Local-alt EM/METEOR/ACC, Entity METEOR, each with its
  95 % interval under it, the best of each column within its setting in bold (as the paper),
  the unparsed rate beside each ACC and what the setting cut (items cut, share of the book seen).
* :func:`score_plot` — one column's score against the context setting, a line per run.
* :func:`run_choices`, :func:`answer_choices`, :func:`read_answers`, :func:`answers_view` — the
  drill-down to each question's answer of one run, setting and question set.

Runs are keyed by their results path (what the store calls them).  Every run is listed, those
not comparable with full runs on the official data labelled (``data``/``limit`` columns, and a
variant of the paper's measurement named there: the window's start kept, a chat template).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

from eval_queue.safe_json import DETAILS_FILE_MAX_BYTES
from eval_queue.storage import Storage
from leaderboard.core.numbers import percent
from leaderboard.tracks.long_context.app.tables import (
    TABLE5_COLUMN_NAMES,
    column,
    column_label,
    export_table,
    interval_columns,
    plot_frame,
    table5,
)
from leaderboard.tracks.long_context.definition import (
    CONTEXT_SETTING_SPECS,
    METRIC_SPECS,
    QUESTION_SET_SPECS,
    QUESTION_SETS,
    TABLE5_COLUMNS,
    AnswerKind,
    ContextHarnessTask,
    ContextSetting,
    Metric,
    QuestionSet,
)
from leaderboard.tracks.long_context.schema import LongContextDetail, LongContextResults, parse_details
from leaderboard.views.common import interval_text

#: Which METEOR the Table 5 layout shows, said under the table.
METEOR_NOTE = (
    f"{METRIC_SPECS[Metric.METEOR].label}: {METRIC_SPECS[Metric.METEOR].description}. "
    f"{METRIC_SPECS[Metric.METEOR_IT].label} ({METRIC_SPECS[Metric.METEOR_IT].description}) is in the "
    "answers below and in `python -m leaderboard export --track long-context`."
)
#: The question sets asked as MC: their unparsed rate is shown beside the accuracy.
MC_SETS = tuple(s.id for s in QUESTION_SETS if AnswerKind.MULTIPLE_CHOICE in s.kinds)
DEFAULT_PLOT_COLUMN = column(QuestionSet.SUMMARY, Metric.METEOR)
PLOT_CHOICES: tuple[tuple[str, str], ...] = tuple((column_label(c), c) for c in TABLE5_COLUMN_NAMES)
#: Drill-down: a question set asked one way (``local_mc``), labelled for the dropdown.
ANSWER_SETS: tuple[tuple[str, str], ...] = tuple(
    (
        f"{spec.label} ({'multiple choice' if kind is AnswerKind.MULTIPLE_CHOICE else 'open-ended'})",
        f"{spec.id.value}_{kind.value}",
    )
    for spec in QUESTION_SETS
    for kind in spec.kinds
)
ANSWER_COLUMNS = [
    "#",
    "Question",
    "References",
    "Answer",
    "Letter",
    "EM",
    "METEOR",
    "METEOR (it)",
    "Book seen",
]


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.2f}"
    return html.escape(str(value), quote=True)


def run_label(path: str, run: LongContextResults) -> str:
    """``org/model · bfloat16 · sample, limit 10 · 2026-11-23T10:00:00Z`` (plain text)."""
    data = run.run.data or "?"
    if run.run.limit:
        data += f", limit {run.run.limit}"
    data += "".join(f", {variant}" for variant in run.run.variants)
    return " · ".join((run.model.id, run.model.precision, data, run.run.finished_at or path))


def run_choices(records: Mapping[str, LongContextResults]) -> tuple[tuple[str, str], ...]:
    """``(label, results path)`` of every run, newest first."""
    ordered = sorted(records.items(), key=lambda item: item[1].run.finished_at or "", reverse=True)
    return tuple((run_label(path, run), path) for path, run in ordered)


def table5_html(records: Mapping[str, LongContextResults]) -> str:
    """The Table 5 layout (0–100), best per column and setting in bold; every text cell escaped."""
    runs = list(records.values())
    if not runs:
        return "<p>No long-context results yet.</p>"
    scores = table5(runs, include_noncomparable=True)
    extra = export_table(runs, include_noncomparable=True)
    groups = [(QUESTION_SET_SPECS[qs].label, [m for q, m in TABLE5_COLUMNS if q is qs]) for qs in QuestionSet]
    head1 = '<th rowspan="2">Model</th><th rowspan="2">Data</th>'
    head2 = ""
    for (label, metrics), qs in zip(groups, QuestionSet, strict=True):
        names = [METRIC_SPECS[m].label for m in metrics] + (["unparsed"] if qs in MC_SETS else [])
        head1 += f'<th colspan="{len(names)}">{html.escape(label)}</th>'
        head2 += "".join(f"<th>{html.escape(n)}</th>" for n in names)
    head1 += '<th rowspan="2">Items cut (words / window)</th><th rowspan="2">Book seen</th>'
    body = []
    for setting in scores.settings():
        label = CONTEXT_SETTING_SPECS[ContextSetting(setting)].label
        body.append(f'<tr class="lc-setting"><th colspan="99">{html.escape(label)}</th></tr>')
        for index in scores.frame.index[scores.frame["setting"] == setting]:
            row, more = scores.frame.loc[index], extra.loc[index]
            cells = [_cell(row["model"]), _cell(_data_label(more))]
            for qs in QuestionSet:
                for metric in (m for q, m in TABLE5_COLUMNS if q is qs):
                    name = column(qs, metric)
                    text = _cell(row[name])
                    text = f"<b>{text}</b>" if scores.best.loc[index, name] else text
                    cells.append(text + _interval_line(more, name) if row[name] is not None else text)
                if qs in MC_SETS:
                    cells.append(_cell(more[column(qs, Metric.UNPARSED)]))
            cells.append(f"{more['words_cut']} / {more['window_cut']} of {more['items']}")
            cells.append(f"{100 * more['seen_fraction_mean']:.0f}%")
            body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        '<table class="plain-table lc-table5"><thead>'
        f"<tr>{head1}</tr><tr>{head2}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _interval_line(row: pd.Series, name: str) -> str:
    """The score's 95 % interval under it (``—`` for a run without per-item data)."""
    low, high = interval_columns(name)
    return f'<br><small class="ci">{html.escape(interval_text(row.get(low), row.get(high)))}</small>'


def _data_label(row: pd.Series) -> str:
    data = str(row.get("data") or "?")
    limit = row.get("limit")
    if isinstance(limit, int | float) and not pd.isna(limit):
        data += f", limit {int(limit)}"
    variant = row.get("variant")
    return f"{data}, {variant}" if isinstance(variant, str) and variant else data


def score_plot(
    records: Mapping[str, LongContextResults], name: str = DEFAULT_PLOT_COLUMN
) -> go.Figure | None:
    """``name``'s score (0–100) against the context setting, a line per run; None: nothing to draw."""
    frame = plot_frame(list(records.values()), include_noncomparable=True)
    frame = frame[frame["column"] == name]
    if frame.empty:
        return None
    figure = go.Figure()
    for (model, revision), rows in frame.groupby(["model", "revision"], sort=False):
        figure.add_trace(
            go.Scatter(
                x=list(rows["setting_label"]),
                y=list(rows["value"]),
                mode="lines+markers",
                name=f"{model} ({str(revision)[:7]})",
            )
        )
    figure.update_layout(
        title=f"{column_label(name)} by context setting",
        xaxis_title="context",
        yaxis_title=column_label(name),
        yaxis_range=[0, 100],
        xaxis={"categoryorder": "array", "categoryarray": [s.label for s in CONTEXT_SETTING_SPECS.values()]},
        height=380,
        margin={"l": 40, "r": 20, "t": 50, "b": 40},
    )
    return figure


def answer_task(answer_set: str, setting: str) -> ContextHarnessTask:
    """The harness task of a drill-down choice (``local_mc``, ``10k``)."""
    question_set, _, kind = answer_set.rpartition("_")
    return ContextHarnessTask(QuestionSet(question_set), AnswerKind(kind), ContextSetting(setting))


def read_answers(
    storage: Storage, run: LongContextResults, answer_set: str, setting: str
) -> list[LongContextDetail]:
    """The details of one run's setting and question set, through the safe reader (size-capped).

    Raises :class:`~eval_queue.errors.NotFoundError` when the run kept none,
    :class:`~eval_queue.errors.MalformedFileError` naming the file and line.
    """
    path = f"{run.run.details_path}/{answer_task(answer_set, setting).name}.jsonl"
    return parse_details(storage.read(path, max_bytes=DETAILS_FILE_MAX_BYTES), path)


def _letter(record: LongContextDetail) -> str:
    """MC: the extracted letter and whether it is right (``B ✓``, ``unparsed ✗ (correct: C)``)."""
    if not record.choices:
        return ""
    letter = record.letter or "unparsed"
    return f"{letter} ✓" if record.acc else f"{letter} ✗ (correct: {record.label})"


def answers_view(records: Sequence[LongContextDetail], limit: int = 500) -> pd.DataFrame:
    """One row per question: question, references, answer, letter (MC), EM (OE), both METEORs (0–100),
    tokens of the book seen; plain text (the table renders it as text)."""

    rows = [
        {
            "#": r.doc_id,
            "Question": r.question,
            "References": " | ".join(r.references),
            "Answer": r.answer,
            "Letter": _letter(r),
            "EM": None if r.choices else percent(r.em),
            "METEOR": percent(r.meteor),
            "METEOR (it)": percent(r.meteor_it),
            "Book seen": f"{r.seen_tokens} / {r.context_tokens} tokens" if r.context_tokens else "",
        }
        for r in list(records)[:limit]
    ]
    return pd.DataFrame(rows, columns=ANSWER_COLUMNS)
