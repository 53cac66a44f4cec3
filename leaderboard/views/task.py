"""The task drill-down: models × prompts, the prompt side (paper Table 14), the task's text."""

from __future__ import annotations

import pandas as pd

from leaderboard.suite import TASKS
from leaderboard.tables import Aggregate, task_column
from leaderboard.views.common import KEY, MODEL, NOTE, RankingFilters, _frame, _note, _num, html_text, md_text
from leaderboard.views.ranking import Board, _select_rows


def _prompt_scores(board: Board, task_id: str, num_fewshot: int) -> pd.DataFrame:
    """Tidy prompt scores (0–100) of one task and setting: KEY + ``prompt`` + ``score``."""
    scores = board.scores
    if scores.empty:
        return pd.DataFrame(columns=[*KEY, "prompt", "score"])
    scores = scores[(scores["task"] == task_id) & (scores["num_fewshot"] == num_fewshot)]
    return scores[[*KEY, "prompt", "score"]].assign(score=scores["score"] * 100.0)


def task_models_view(
    board: Board, task_id: str, num_fewshot: int, show_noncomparable: bool = False
) -> pd.DataFrame:
    """Models × prompts for one task: each prompt's score, then MaxP, AvgP, CPS, best prompt."""
    task = TASKS[task_id]
    prompt_ids = [p.id for p in task.prompts]
    rows, _, _ = _select_rows(board, num_fewshot, RankingFilters(show_noncomparable=show_noncomparable))
    headers = [MODEL, *prompt_ids, "MaxP", "AvgP", "CPS", "Best prompt", NOTE]
    if rows.empty:
        return pd.DataFrame(columns=headers)
    scores = _prompt_scores(board, task_id, num_fewshot)
    wide = scores.pivot_table(index=[*KEY], columns="prompt", values="score", aggfunc="first").reset_index()
    rows = rows.merge(wide, on=[*KEY], how="left")
    cps = task_column(task_id, Aggregate.CPS)
    rows = rows.sort_values([cps, "model"], ascending=[False, True], na_position="last")
    table = pd.DataFrame({MODEL: rows["model"].to_numpy()})
    for prompt_id in prompt_ids:
        table[prompt_id] = rows[prompt_id].astype(float).round(2).to_numpy() if prompt_id in rows else None
    table["MaxP"] = rows[task_column(task_id, Aggregate.MAXP)].astype(float).to_numpy()
    table["AvgP"] = rows[task_column(task_id, Aggregate.AVGP)].astype(float).to_numpy()
    table["CPS"] = rows[cps].astype(float).to_numpy()
    table["Best prompt"] = rows[task_column(task_id, Aggregate.BEST_PROMPT)].fillna("").astype(str).to_numpy()
    table[NOTE] = [
        _note(d, lim, c) for d, lim, c in zip(rows["data"], rows["limit"], rows["comparable"], strict=True)
    ]
    return table


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
    headers = ["Prompt", "Paper id", "Pattern", "MinP", "MaxP", "AvgP", "CPS"]
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
                **{label: _num(row.get(label.lower())) for label in ("MinP", "MaxP", "AvgP", "CPS")},
            }
        )
    return _frame(records, headers)


def task_info_markdown(task_id: str) -> str:
    """Description, metric and the paper's baselines of a task (suite text, escaped)."""
    task = TASKS[task_id]
    lines = [
        f"### {md_text(task.abbrev)} — {md_text(task.name)}",
        md_text(task.description) if task.description else "",
        "",
        f"**Competence:** {md_text(task.competence)} · **Domain:** {md_text(task.domain)} · "
        f"**Evaluation:** {md_text(task.kind)} · **Metric:** {md_text(task.metric_label)} "
        f"({md_text(task.metric)}) · **Dataset:** {md_text(task.dataset.path)}",
    ]
    if task.baselines:
        lines += ["", "**Paper baselines (0–100):**"]
        for base in task.baselines:
            note = f" — {md_text(base.note)}" if base.note else ""
            lines.append(f"- {md_text(base.label)}: {base.score:.2f}{note}")
    return "\n".join(lines)


def prompts_html(task_id: str) -> str:
    """Every prompt's Italian text and answer options as an HTML table (all text escaped)."""
    task = TASKS[task_id]
    rows = []
    for prompt in task.prompts:
        options = (
            " · ".join(html_text(c) for c in prompt.choices)
            if prompt.choices
            else "<em>(generated text)</em>"
        )
        rows.append(
            f"<tr><td><b>{html_text(prompt.id)}</b><br><small>paper {html_text(prompt.paper_id)}</small></td>"
            f"<td>{html_text(prompt.pattern)}</td>"
            f'<td class="prompt-text">{html_text(prompt.template)}</td><td>{options}</td></tr>'
        )
    return (
        '<table class="prompts"><thead><tr><th>Prompt</th><th>Pattern</th><th>Text (Italian)</th>'
        f"<th>Answer options</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
