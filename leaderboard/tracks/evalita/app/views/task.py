"""The task drill-down: models × prompts, the prompt side (paper Table 14), the task's text."""

from __future__ import annotations

import re

import pandas as pd

from eval_queue.vocabulary import RunRef
from leaderboard.core.numbers import percent
from leaderboard.tracks.evalita.app.tables import high_column, low_column, task_column
from leaderboard.tracks.evalita.app.views.board import Board
from leaderboard.tracks.evalita.app.views.labels import RankingFilters, heading
from leaderboard.tracks.evalita.app.views.ranking import _select_rows
from leaderboard.tracks.evalita.definition import TASKS
from leaderboard.tracks.evalita.metric_sets import (
    DEFAULT_METRIC_SET,
    MetricSet,
    expected_metric,
    metric_label,
)
from leaderboard.tracks.evalita.vocabulary import PROMPT_AGGREGATES, Aggregate
from leaderboard.views.common import (
    CI,
    KEY_COLUMN,
    MODEL,
    NOTE,
    _frame,
    _keys,
    _notes,
    _num,
    html_text,
    interval_text,
    md_text,
)

#: The model-side columns of the models × prompts table, after the prompts.
TASK_TABLE_AGGREGATES: tuple[Aggregate, ...] = (
    Aggregate.MAXP,
    Aggregate.AVGP,
    Aggregate.CPS,
    Aggregate.BEST_PROMPT,
)


def prompt_interval_column(prompt_id: str) -> str:
    """``p1 95% CI``: the column of a prompt score's interval on the task page."""
    return f"{prompt_id} {CI}"


def _percent_column(values: pd.Series) -> pd.Series:
    # A plain float list: iterating an Arrow-backed column value by value is several times slower.
    shown = [None if value != value else percent(value) for value in values.to_numpy(dtype=float).tolist()]
    return pd.Series(shown, index=values.index, dtype=float)


def _prompt_scores(board: Board, task_id: str, num_fewshot: int) -> pd.DataFrame:
    """Tidy prompt scores of one task and setting: the run reference + ``prompt`` + ``score`` and
    its interval ``low``/``high`` (0–100, rounded by :func:`leaderboard.core.numbers.percent`,
    the one display rounding; NaN without)."""
    columns = [*RunRef.COLUMNS, "prompt", "score", "low", "high"]
    scores = board.scores
    if scores.empty:
        return pd.DataFrame(columns=columns)
    scores = scores[(scores["task"] == task_id) & (scores["num_fewshot"] == num_fewshot)]
    return scores[columns].assign(**{c: _percent_column(scores[c]) for c in ("score", "low", "high")})


def task_models_view(
    board: Board, task_id: str, num_fewshot: int, show_noncomparable: bool = False
) -> pd.DataFrame:
    """Models × prompts for one task, best CPS first: each prompt's score and its 95 % interval,
    then MaxP, AvgP, CPS and its interval, the best prompt, the note and the hidden run key
    (computed once per snapshot).  A run without per-item data shows ``—`` for the intervals."""
    key = ("task_models", task_id, num_fewshot, show_noncomparable)
    return board.memo(key, lambda: _task_models(board, task_id, num_fewshot, show_noncomparable))


def _task_models(board: Board, task_id: str, num_fewshot: int, show_noncomparable: bool) -> pd.DataFrame:
    task = TASKS[task_id]
    prompt_ids = list(task.prompt_ids)
    rows, _, _, _ = _select_rows(board, num_fewshot, RankingFilters(show_noncomparable=show_noncomparable))
    cps_ci = f"{heading(Aggregate.CPS)} {CI}"
    headers = [
        MODEL,
        *(c for p in prompt_ids for c in (p, prompt_interval_column(p))),
        *(heading(a) for a in TASK_TABLE_AGGREGATES[:-1]),
        cps_ci,
        heading(TASK_TABLE_AGGREGATES[-1]),
        NOTE,
        KEY_COLUMN,
    ]
    if rows.empty:
        return pd.DataFrame(columns=headers)
    cps = task_column(task_id, Aggregate.CPS)
    rows = rows.sort_values([cps, "model"], ascending=[False, True], na_position="last", kind="stable")
    table = pd.DataFrame({MODEL: rows["model"].to_numpy()})
    # Each run's (score, low, high) per prompt, looked up by run key: a dict, not a pivot and a
    # merge (ten times slower at 1,000 runs).
    scores = _prompt_scores(board, task_id, num_fewshot)
    columns = [scores[c].tolist() for c in scores.columns]
    cells = {
        (RunRef(str(m), str(r), str(p)).key, prompt): (score, low, high)
        for m, r, p, prompt, score, low, high in zip(*columns, strict=True)
    }
    keys = _keys(rows)
    nothing = (None, None, None)
    for prompt_id in prompt_ids:
        shown = [cells.get((key, prompt_id), nothing) for key in keys]
        table[prompt_id] = pd.array([s for s, _, _ in shown], dtype=float) if shown else None
        table[prompt_interval_column(prompt_id)] = [interval_text(lo, hi) for _, lo, hi in shown]
    for aggregate in TASK_TABLE_AGGREGATES:
        values = rows[task_column(task_id, aggregate)]
        table[heading(aggregate)] = (
            values.astype(float).to_numpy()
            if aggregate.is_score
            else values.fillna("").astype(str).to_numpy()
        )
    table.insert(
        table.columns.get_loc(heading(Aggregate.CPS)) + 1,
        cps_ci,
        [
            interval_text(low, high)
            for low, high in zip(rows[low_column(cps)], rows[high_column(cps)], strict=True)
        ],
    )
    table[NOTE] = _notes(rows)
    table[KEY_COLUMN] = keys
    return table


def detectable_gaps_markdown(board: Board, task_id: str, num_fewshot: int) -> str:
    """The smallest CPS gap the data can detect, for this task and for the mean CPS (80 % power).

    Miller 2024 ("Adding error bars to evals"): a two-sided test at α = 0.05 detects a true
    difference with 80 % power from 2.80 × its standard error.  The standard error of one run's
    figure is its 95 % interval's width / 3.92 (median over the comparable runs of the setting);
    two runs' difference is taken as independent (× √2): paired runs on the same items usually
    do better, so this is the gap a comparison can be trusted to find, not the least it may.
    """
    from leaderboard.core.uncertainty import minimum_detectable_effect

    rows = board.rows(num_fewshot)
    if "comparable" in rows and bool(rows["comparable"].any()):
        rows = rows[rows["comparable"].astype(bool)]
    parts = []
    for label, column in (
        (f"{TASKS[task_id].abbrev} CPS", task_column(task_id, Aggregate.CPS)),
        ("mean CPS", "avg_cps"),
    ):
        if low_column(column) not in rows or rows.empty:
            continue
        widths = (rows[high_column(column)].astype(float) - rows[low_column(column)].astype(float)).dropna()
        if widths.empty:
            continue
        se = float(widths.median()) / 3.92
        gap = minimum_detectable_effect(se * 2**0.5)
        parts.append(
            f"{md_text(label)}: **{gap:.1f} points** (median interval ±{float(widths.median()) / 2:.1f})"
        )
    if not parts:
        return ""
    return (
        "**Smallest gap the data can detect** (80 % power, α = 0.05; Miller 2024): "
        + "; ".join(parts)
        + ". A smaller difference between two models may be real, but these test sets cannot show it."
    )


def prompt_side_view(
    board: Board, task_id: str, num_fewshot: int, show_noncomparable: bool = False
) -> pd.DataFrame:
    """Each prompt across the models shown (paper Table 14, right side): MinP, MaxP, AvgP, CPS.

    The models are those the task's models table shows: comparable runs, plus the others when
    asked for or when there is no comparable run at all.
    """
    rows = board.rows(num_fewshot)
    include = show_noncomparable or not bool(rows["comparable"].any())
    table = board.prompt_rows(task_id, num_fewshot, include)
    headers = ["Prompt", "Paper id", "Pattern", *(a.label for a in PROMPT_AGGREGATES)]
    if table.empty:
        return pd.DataFrame(columns=headers)
    task = TASKS[task_id]
    records = []
    for _, row in table.iterrows():
        spec = task.prompt(row["prompt"])
        records.append(
            {
                "Prompt": spec.id,
                "Paper id": spec.paper_id,
                "Pattern": str(spec.pattern),
                **{a.label: _num(row.get(a.value)) for a in PROMPT_AGGREGATES},
            }
        )
    return _frame(records, headers)


def task_info_markdown(task_id: str, metrics: MetricSet | str = DEFAULT_METRIC_SET) -> str:
    """Description, metric (in metric set ``metrics``) and the paper's baselines of a task (suite text, escaped)."""
    task = TASKS[task_id]
    label, metric = metric_label(task, metrics), expected_metric(task, metrics)
    lines = [
        f"### {md_text(task.abbrev)} — {md_text(task.name)}",
        md_text(task.description) if task.description else "",
        "",
        f"**Competence:** {md_text(task.competence)} · **Domain:** {md_text(task.domain)} · "
        f"**Evaluation:** {md_text(task.kind)} · **Metric:** {md_text(label)} "
        f"({md_text(metric)}) · **Dataset:** {md_text(task.dataset.path)}",
    ]
    if task.baselines:
        lines += ["", "**Paper baselines (0–100):**"]
        for base in task.baselines:
            note = f" — {md_text(base.note)}" if base.note else ""
            lines.append(f"- {md_text(base.label)}: {base.score:.2f}{note}")
    return "\n".join(lines)


# A Jinja expression of the harness templates: ``{{text1}}``, ``{{sentence1[start1:end1]}}``.
_SLOT = re.compile(r"\{\{\s*(.*?)\s*\}\}")
_SPAN = re.compile(r"^(\w+)\[\w+:\w+\]$")
_OPTION = re.compile(r"^[A-E]$")


def slot_label(expression: str) -> str:
    """What a template slot holds, in words: ``text1``, ``word in sentence1``, ``option A``."""
    if span := _SPAN.match(expression):
        return f"word in {span.group(1)}"
    if _OPTION.match(expression):
        return f"option {expression}"
    return expression


def prompt_text_html(template: str) -> str:
    """A prompt as the model sees it: the Italian text, each slot a marked ``[field]`` (escaped)."""
    parts: list[str] = []
    position = 0
    for match in _SLOT.finditer(template):
        parts.append(html_text(template[position : match.start()]))
        parts.append(f'<span class="slot">[{html_text(slot_label(match.group(1)))}]</span>')
        position = match.end()
    parts.append(html_text(template[position:]))
    return "".join(parts)


def prompts_html(task_id: str) -> str:
    """Every prompt's Italian text (slots marked) and answer options as an HTML table (all text escaped)."""
    task = TASKS[task_id]
    rows = []
    for prompt in task.prompts:
        options = (
            " · ".join(prompt_text_html(c) for c in prompt.choices)
            if prompt.choices
            else "<em>(generated text)</em>"
        )
        rows.append(
            f"<tr><td><b>{html_text(prompt.id)}</b><br><small>paper {html_text(prompt.paper_id)}</small></td>"
            f"<td>{html_text(prompt.pattern)}</td>"
            f'<td class="prompt-text">{prompt_text_html(prompt.template)}</td><td>{options}</td></tr>'
        )
    return (
        '<p class="prompt-legend">Each prompt as the model reads it; <span class="slot">[field]</span> '
        "marks where the item's own text goes.</p>"
        '<table class="prompts"><thead><tr><th>Prompt</th><th>Pattern</th><th>Text (Italian)</th>'
        f"<th>Answer options</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
