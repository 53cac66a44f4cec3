"""The model page: the model against the field, both settings, how it was run, its answers."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from leaderboard.suite import SUITE
from leaderboard.tables import MAIN_SCORE_COLUMN, Aggregate, task_column
from leaderboard.views.common import (
    _diff,
    _frame,
    _num,
    _of_run,
    _plain,
    _run_row,
    _spread,
    md_text,
    model_link,
    task_label,
)
from leaderboard.views.ranking import Board, setting_rows


def model_vs_field(board: Board, run: tuple[str, str, str], num_fewshot: int) -> pd.DataFrame:
    """Per task: the model's CPS, the median and best CPS of the comparable field, its position."""
    rows = setting_rows(board, num_fewshot)
    field_rows = rows[rows["comparable"]]
    if field_rows.empty:
        field_rows = rows
    mine = _run_row(rows, run)
    headers = ["Task", "CPS", "Field median", "Field best", "Best model", "Position"]
    records = []
    for task in SUITE:
        column = task_column(task.id, Aggregate.CPS)
        field_scores = field_rows[column].dropna() if column in field_rows.columns else pd.Series(dtype=float)
        value = _num(mine.get(column)) if mine is not None else None
        best_model = field_rows.loc[field_scores.idxmax(), "model"] if not field_scores.empty else ""
        position = (
            f"{int((field_scores > value).sum()) + 1} / {len(field_scores)}"
            if value is not None and not field_scores.empty
            else ""
        )
        records.append(
            {
                "Task": task.abbrev,
                "CPS": value,
                "Field median": _num(field_scores.median()) if not field_scores.empty else None,
                "Field best": _num(field_scores.max()) if not field_scores.empty else None,
                "Best model": best_model,
                "Position": position,
            }
        )
    return _frame(records, headers)


def model_prompt_scores(board: Board, run: tuple[str, str, str], num_fewshot: int) -> pd.DataFrame:
    """Tidy ``task``, ``prompt``, ``score`` (0–100) of one run: the prompt-sensitivity data."""
    scores = board.scores
    if scores.empty:
        return pd.DataFrame(columns=["task", "prompt", "score"])
    picked = _of_run(scores, run, num_fewshot)[["task", "prompt", "score"]]
    return picked.assign(score=picked["score"] * 100.0, task=picked["task"].map(task_label))


def model_settings_view(board: Board, run: tuple[str, str, str]) -> pd.DataFrame:
    """Per task: CPS 0-shot, CPS 5-shot, and the difference; then the averages."""
    zero, five = _run_row(setting_rows(board, 0), run), _run_row(setting_rows(board, 5), run)
    records = []
    for task in SUITE:
        cps = task_column(task.id, Aggregate.CPS)
        a = _num(zero.get(cps)) if zero is not None else None
        b = _num(five.get(cps)) if five is not None else None
        spread0 = _spread(zero, task.id)
        spread5 = _spread(five, task.id)
        records.append(
            {
                "Task": task.abbrev,
                "CPS 0-shot": a,
                "CPS 5-shot": b,
                "Δ (5 − 0)": _diff(a, b),
                "MaxP − AvgP 0-shot": spread0,
                "MaxP − AvgP 5-shot": spread5,
            }
        )
    a = _num(zero.get(MAIN_SCORE_COLUMN)) if zero is not None else None
    b = _num(five.get(MAIN_SCORE_COLUMN)) if five is not None else None
    records.append({"Task": "Average CPS", "CPS 0-shot": a, "CPS 5-shot": b, "Δ (5 − 0)": _diff(a, b)})
    return pd.DataFrame.from_records(records)


RUN_FIELDS = (
    ("data", "Data"),
    ("limit", "Limit"),
    ("harness", "Harness"),
    ("backend", "Backend"),
    ("hardware", "Hardware"),
    ("duration_s", "Duration (s)"),
    ("batch_size", "Batch size"),
    ("started_at", "Started"),
    ("finished_at", "Finished"),
    ("request_id", "Request"),
    ("results_path", "Results file"),
)


def run_metadata_view(board: Board, run: tuple[str, str, str] | None) -> pd.DataFrame:
    """How each setting of a model was run (field × setting): the ``run`` block of its results
    files, as loaded into ``board.runs``; with no ``run``, the field names alone."""
    runs_info: dict[int, dict[str, object]] = {}
    if run is not None:
        mine = _of_run(board.runs, run)
        columns = ["num_fewshot", *(key for key, _ in RUN_FIELDS)]
        runs_info = {int(info["num_fewshot"]): info for info in mine[columns].to_dict("records")}
    settings = sorted(runs_info)
    records = []
    for key, label in RUN_FIELDS:
        record: dict[str, object] = {"Field": label}
        for k in settings:
            record[f"{k}-shot"] = _plain(runs_info[k].get(key))
        records.append(record)
    return pd.DataFrame.from_records(records, columns=["Field", *[f"{k}-shot" for k in settings]])


def model_header_markdown(board: Board, run: tuple[str, str, str]) -> str:
    model, revision, precision = run
    mine = _of_run(board.runs, run)
    if mine.empty:
        return "Pick a model."
    first = mine.iloc[0]
    facts = [
        f"**Revision:** {md_text(revision)}",
        f"**Precision:** {md_text(precision)}",
        f"**Params:** {_plain(first.get('params_b'))} B",
        f"**Type:** {md_text(first.get('model_type') or 'unknown')}",
        f"**Licence:** {md_text(first.get('license') or 'unknown')}",
    ]
    if not bool(mine["comparable"].all()):
        facts.append("⚠️ **includes sample/limited runs (not comparable)**")
    return f"### {model_link(model)}\n\n" + " · ".join(facts)


def details_path_of(board: Board, run: tuple[str, str, str], num_fewshot: int) -> str | None:
    mine = _of_run(board.runs, run, num_fewshot)
    if mine.empty or "details_path" not in mine.columns:
        return None
    value = mine.iloc[0]["details_path"]
    return value if isinstance(value, str) and value else None


def details_view(records: Sequence, limit: int = 500) -> pd.DataFrame:
    """Answers of one (task, prompt): input, answer, target, score — as plain text."""
    headers = ["#", "Input", "Answer", "Target", "Score"]
    rows = [
        {"#": r.doc_id, "Input": r.input, "Answer": r.answer, "Target": r.target, "Score": _plain(r.score)}
        for r in list(records)[:limit]
    ]
    return _frame(rows, headers)
