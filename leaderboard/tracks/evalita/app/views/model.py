"""The model page: the model against the field, its prompt scores, both settings, how it was run
(what it cost, and how to run it again)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from eval_queue.vocabulary import RunRef
from leaderboard.core.numbers import percent
from leaderboard.core.schema import RunInfo
from leaderboard.tracks.evalita.app.records import run_info
from leaderboard.tracks.evalita.app.tables import MAIN_SCORE_COLUMN, task_column
from leaderboard.tracks.evalita.app.views.board import Board
from leaderboard.tracks.evalita.app.views.labels import _spread, task_label
from leaderboard.tracks.evalita.app.views.ranking import setting_rows
from leaderboard.tracks.evalita.app.views.recipe import COST_FIELDS, recipe_script
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.vocabulary import RUN_SETTINGS, Aggregate, Setting
from leaderboard.views.common import (
    _diff,
    _frame,
    _note,
    _num,
    _of_run,
    _plain,
    _run_row,
    format_params,
    interval_text,
    md_text,
    model_link,
)

FIELD_HEADERS = ["Task", "CPS", "Field median", "Field best", "Best model", "Position"]


@dataclass(frozen=True)
class FieldComparison:
    """The model's CPS per task beside the field it is compared with, and which field that is."""

    table: pd.DataFrame  # FIELD_HEADERS, one row per task in paper order
    note: str  # Markdown: the field (comparable runs, or runs of the same sample/limited kind)


def _same_kind(rows: pd.DataFrame, mine: pd.Series | None) -> tuple[pd.DataFrame, str]:
    """The runs ``mine`` is compared with: comparable runs for a comparable run (or for none);
    for a sample or limited run only the runs made the same way (same data, same limit)."""
    comparable = rows[rows["comparable"]]
    if mine is None or bool(mine["comparable"]):
        if comparable.empty and not rows.empty:
            return rows, "No comparable run yet: the field is every run shown (sample or limited)."
        return comparable, f"Field: the {len(comparable)} comparable run(s) (full runs on the official data)."
    kind = _note(mine.get("data"), mine.get("limit"), False)
    same = rows[~rows["comparable"]]
    same = same[[_note(d, lim, False) == kind for d, lim in zip(same["data"], same["limit"], strict=True)]]
    return same, (
        f"⚠️ A sample/limited run ({md_text(kind)}): compared only with the {len(same)} run(s) made the "
        "same way, never with full runs on the official data."
    )


def model_vs_field(board: Board, run: RunRef, num_fewshot: int) -> FieldComparison:
    """Per task: the model's CPS, the median and best CPS of its field, its position in it."""
    rows = setting_rows(board, num_fewshot)
    mine = _run_row(rows, run)
    field_rows, note = _same_kind(rows, mine)
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
    return FieldComparison(_frame(records, FIELD_HEADERS), note if mine is not None else "")


def model_prompt_scores(board: Board, run: RunRef, num_fewshot: int) -> pd.DataFrame:
    """Tidy ``task``, ``prompt``, ``score``, ``stderr`` and the score's 95 % interval ``low``/``high``
    (0–100, :func:`percent`; ``None`` where the file has none) of one run."""
    columns = ["task", "prompt", "score", "stderr", "low", "high"]
    scores = board.scores
    if scores.empty:
        return pd.DataFrame(columns=columns)
    picked = _of_run(scores, run, num_fewshot)
    return pd.DataFrame(
        {
            "task": picked["task"].map(task_label).to_numpy(),
            "prompt": picked["prompt"].to_numpy(),
            **{c: [_percent_or_none(v) for v in picked[c]] for c in ("score", "stderr", "low", "high")},
        },
        columns=columns,
    )


def _percent_or_none(value: object) -> float | None:
    return None if value is None or pd.isna(value) else percent(float(value))  # type: ignore[arg-type]


def score_with_stderr(
    score: float | None, stderr: float | None, low: float | None = None, high: float | None = None
) -> str:
    """``71.93 [69.10–74.80]`` with its 95 % interval (all 0–100); an older run without per-item
    data: ``71.93 ± 1.20`` with the harness's stderr, ``71.93`` without one; ``—`` without a score."""
    if score is None:
        return "—"
    if low is not None and high is not None:
        return f"{score:.2f} [{interval_text(low, high)}]"
    return f"{score:.2f}" if stderr is None else f"{score:.2f} ± {stderr:.2f}"


def model_prompt_table(board: Board, run: RunRef, num_fewshot: int) -> pd.DataFrame:
    """Per task (rows, paper order): each prompt's score with its 95 % interval (or an older
    run's stderr as ``±``)."""
    scores = model_prompt_scores(board, run, num_fewshot)
    width = max(len(task.prompts) for task in SUITE)
    headers = ["Task", *(f"p{i}" for i in range(1, width + 1))]
    if scores.empty:
        return pd.DataFrame(columns=headers)
    cells = {(t, p): score_with_stderr(s, e, lo, hi) for t, p, s, e, lo, hi in scores.itertuples(index=False)}
    records = [
        {"Task": task.abbrev, **{p: cells.get((task.abbrev, p), "—") for p in task.prompt_ids}}
        for task in SUITE
    ]
    return _frame(records, headers).fillna("")


def model_settings_view(board: Board, run: RunRef) -> pd.DataFrame:
    """Per task: CPS 0-shot, CPS 5-shot, and the difference; then the averages."""
    zero, five = _run_row(setting_rows(board, 0), run), _run_row(setting_rows(board, 5), run)
    cps0, cps5 = f"CPS {Setting.ZERO.label}", f"CPS {Setting.FIVE.label}"
    spread = Aggregate.SPREAD.label
    records = []
    for task in SUITE:
        cps = task_column(task.id, Aggregate.CPS)
        a = _num(zero.get(cps)) if zero is not None else None
        b = _num(five.get(cps)) if five is not None else None
        records.append(
            {
                "Task": task.abbrev,
                cps0: a,
                cps5: b,
                "Δ (5 − 0)": _diff(a, b),
                f"{spread} {Setting.ZERO.label}": _spread(zero, task.id),
                f"{spread} {Setting.FIVE.label}": _spread(five, task.id),
            }
        )
    a = _num(zero.get(MAIN_SCORE_COLUMN)) if zero is not None else None
    b = _num(five.get(MAIN_SCORE_COLUMN)) if five is not None else None
    records.append({"Task": "Average CPS", cps0: a, cps5: b, "Δ (5 − 0)": _diff(a, b)})
    return pd.DataFrame.from_records(records)


#: What the model page says about how each setting was run: the results file's ``run`` block
#: field (typed or recorded as an extra) → label.  What the run *used*, not what was asked for.
RUN_FIELDS: tuple[tuple[str, str], ...] = (
    ("data", "Data"),
    ("limit", "Limit (items per prompt)"),
    ("device", "Device"),
    ("dtype", "Dtype (as run)"),
    ("batch_size", "Batch size"),
    ("max_gen_toks", "Answer-length cap (tokens)"),
    ("chat_template", "Chat template"),
    ("bootstrap_iters", "Bootstrap iterations (stderr)"),
    ("harness", "Harness"),
    ("backend", "Backend"),
    ("hardware", "Hardware"),
    ("duration_s", "Duration (s)"),
    ("started_at", "Started"),
    ("finished_at", "Finished"),
    ("request_id", "Request"),
)


def run_infos(board: Board, run: RunRef) -> dict[int, RunInfo]:
    """The ``run`` block of each setting's kept results file, by ``num_fewshot``."""
    infos = {}
    for setting in RUN_SETTINGS:
        k = setting.num_fewshot
        assert k is not None
        info = run_info(board.loaded, (run.model, run.revision, run.precision, k))
        if info is not None:
            infos[k] = info
    return infos


def _recorded(info: RunInfo) -> dict[str, object]:
    """The ``run`` block's fields (typed ones and recorded extras) as the model page shows them."""
    fields = info.model_dump()
    if "max_gen_toks" in fields and fields["max_gen_toks"] is None:
        fields["max_gen_toks"] = "none beyond the task's own"  # recorded: the harness default ran
    return fields


def run_metadata_view(board: Board, run: RunRef | None) -> pd.DataFrame:
    """How each setting of a model was run (field × setting), from its results files' ``run``
    blocks; a field a file does not record shows ``—``.  With no ``run``, the field names alone."""
    recorded = {k: _recorded(info) for k, info in (run_infos(board, run) if run is not None else {}).items()}
    headers = {k: Setting.of_fewshot(k).label for k in sorted(recorded)}
    records = []
    for key, label in RUN_FIELDS:
        records.append({"Field": label, **{headers[k]: _plain(recorded[k].get(key)) for k in headers}})
    infos = run_infos(board, run) if run is not None else {}
    for label, value_of in COST_FIELDS:
        records.append({"Field": label, **{headers[k]: _plain(value_of(infos[k])) for k in headers}})
    records.append({"Field": "Results file", **{headers[k]: _results_path(board, run, k) for k in headers}})
    return pd.DataFrame.from_records(records, columns=["Field", *headers.values()])


def model_recipe(board: Board, run: RunRef | None, num_fewshot: int) -> str:
    """How to run one setting of a model again (:func:`recipe_script`), as the page offers to copy it."""
    if run is None:
        return "# Pick a model."
    info = run_infos(board, run).get(num_fewshot)
    path = _results_path(board, run, num_fewshot)
    return recipe_script(
        info, None if path == "—" else path, run.model, Setting.of_fewshot(num_fewshot).label
    )


def _results_path(board: Board, run: RunRef | None, num_fewshot: int) -> str:
    if run is None:
        return "—"
    mine = _of_run(board.runs, run, num_fewshot)
    return "—" if mine.empty else str(mine.iloc[0]["results_path"])


def model_header_markdown(board: Board, run: RunRef) -> str:
    mine = _of_run(board.runs, run)
    if mine.empty:
        return "Pick a model."
    first = mine.iloc[0]
    ran_as = sorted(
        {str(d) for info in run_infos(board, run).values() if (d := _recorded(info).get("dtype"))}
    )
    precision = f"**Precision:** {md_text(run.precision)}"
    if ran_as and ran_as != [run.precision]:
        precision += f" requested, run as {md_text(', '.join(ran_as))}"
    facts = [
        f"**Revision:** {md_text(run.revision)}",
        precision,
        f"**Params:** {format_params(first.get('params_b'))} B",
        f"**Type:** {md_text(first.get('model_type') or 'unknown')}",
        f"**Licence:** {md_text(first.get('license') or 'unknown')}",
    ]
    if not bool(mine["comparable"].all()):
        facts.append("⚠️ **includes sample/limited runs (not comparable)**")
    return f"### {model_link(run.model)}\n\n" + " · ".join(facts)


def details_path_of(board: Board, run: RunRef, num_fewshot: int) -> str | None:
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
