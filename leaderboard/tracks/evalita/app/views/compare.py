""" "Is A better than B?": two runs of one setting compared task by task on their per-item files.

Per task: ΔCPS = CPS(A) − CPS(B) on the items (and prompts) both runs answered, its 95 % interval
and p-value from the paired bootstrap (the same resamples for both runs), the p-value
Holm-adjusted over the tasks compared, a verdict per task, and the items on which the two runs'
answers differ; then one line: "A better on 3 tasks, no difference on 6, B better on 1"
(:func:`leaderboard.tracks.evalita.compare.compare_runs`).  A run without a per-item file cannot be
compared (no interval is ever made up): the view says so.

The per-item files are read from the details store (``<details_path>/items.parquet``) through
:class:`ItemsCache`, which keeps the last few runs read (a visitor comparing one run with several
reads it once) and whose draws are shared by every comparison.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import pandas as pd

from eval_queue.errors import MalformedFileError, StorageError
from eval_queue.storage.base import Storage
from eval_queue.vocabulary import RunRef
from leaderboard.core.items import ITEMS_FILE_NAME, RunItems, items_from_parquet
from leaderboard.core.numbers import percent
from leaderboard.core.uncertainty import DrawCache
from leaderboard.tracks.evalita.app.views.board import Board
from leaderboard.tracks.evalita.app.views.labels import task_label
from leaderboard.tracks.evalita.app.views.ranking import top_runs
from leaderboard.tracks.evalita.compare import Comparison, TaskComparison, Verdict, compare_runs
from leaderboard.tracks.evalita.definition import TASK_IDS, TASKS
from leaderboard.tracks.evalita.uncertainty import EVALITA_KINDS
from leaderboard.views.common import _of_run, md_text

#: The largest per-item file read (a full Evalita run's is about 1 MB).
MAX_ITEMS_BYTES = 64 * 2**20
#: How many item ids of a task the page lists per prompt (the count is always given).
MAX_LISTED_ITEMS = 40
COMPARE_HEADERS = [
    "Task",
    "Items",
    "CPS A",
    "CPS B",
    "Δ CPS (A − B)",
    "Δ 95% CI",
    "p",
    "p (Holm)",
    "Verdict",
    "Items that differ",
]
DISAGREEMENT_HEADERS = ["Prompt", "Items that differ", "Item ids (part:doc)"]


class ItemsUnavailable(Exception):
    """A run's per-item file cannot be used; ``reason`` says why, for the page."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class ItemsCache:
    """The per-item files last read, by details folder, and the draws every comparison shares.

    Held by the tab (one per app) and passed in; thread-safe; at most ``size`` runs kept.
    """

    size: int = 8
    draws: DrawCache = field(default_factory=DrawCache)
    _runs: OrderedDict[str, RunItems] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self, storage: Storage, folder: str) -> RunItems:
        """The run's per-item file; :class:`ItemsUnavailable` when it has none or it is unreadable."""
        with self._lock:
            if folder in self._runs:
                self._runs.move_to_end(folder)
                return self._runs[folder]
        path = f"{folder}/{ITEMS_FILE_NAME}"
        try:
            items = items_from_parquet(storage.read(path, max_bytes=MAX_ITEMS_BYTES), path)
        except MalformedFileError as exc:  # before StorageError: an unreadable file is both
            raise ItemsUnavailable(f"its per-item file is unreadable ({exc.reason})") from None
        except StorageError:
            raise ItemsUnavailable("it kept no per-item file (results published without one)") from None
        with self._lock:
            self._runs[folder] = items
            while len(self._runs) > self.size:
                self._runs.popitem(last=False)
        return items


@dataclass(frozen=True)
class CompareView:
    """What the A vs B page shows: the one-line verdict (Markdown, escaped), the per-task table,
    the mean CPS line, and a note (why something could not be compared)."""

    verdict: str
    table: pd.DataFrame
    mean: str
    note: str
    comparison: Comparison | None = None


def run_label(board: Board, run: RunRef) -> str:
    """The run as the choices name it (the model id, with revision and precision when needed)."""
    return next((label for label, key in board.choices() if key == run.key), run.model)


def neighbour(board: Board, run: RunRef, num_fewshot: int) -> RunRef | None:
    """The run to compare ``run`` with by default: the next one in the setting's ranking (the one
    above for the last), among comparable runs; for a run not ranked, the best ranked one."""
    keys = top_runs(board, len(board.runs), num_fewshot)
    if run.key not in keys:
        return next((RunRef.parse(k) for k in keys if k != run.key), None)
    at = keys.index(run.key)
    other = at + 1 if at + 1 < len(keys) else at - 1
    return RunRef.parse(keys[other]) if other >= 0 else None


def _details_path(board: Board, run: RunRef, num_fewshot: int) -> tuple[str | None, bool]:
    """The run's details folder in that setting (None: no such run or none kept), and whether it is comparable."""
    mine = _of_run(board.runs, run, num_fewshot)
    if mine.empty:
        return None, False
    row = mine.iloc[0]
    folder = row.get("details_path")
    return (folder if isinstance(folder, str) and folder else None), bool(row.get("comparable"))


def _pct(value: float) -> float | None:
    return percent(value) if value >= 0 else -percent(-value)  # type: ignore[operator]


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _p_clause(value: float) -> str:
    """``p < 0.001`` or ``p = 0.031``."""
    return f"p {_p(value)}" if value < 0.001 else f"p = {_p(value)}"


def delta_interval_text(low: float, high: float) -> str:
    """A difference's 95 % interval, signed (0–1 in, 0–100 shown): ``[−1.20, +3.40]``."""
    return f"[{_pct(low):+.2f}, {_pct(high):+.2f}]"


def _differ(task: TaskComparison) -> str:
    """``9 of 12 (p1: 5, p2: 5, …)``: items answered differently under at least one prompt, then per prompt."""
    counts = [f"{d.prompt}: {len(d.items)}" for d in task.disagreements]
    anywhere = len(set().union(*(d.items for d in task.disagreements)))
    return f"{anywhere} of {task.n_items} ({', '.join(counts)})"


def comparison_table(comparison: Comparison) -> pd.DataFrame:
    """One row per task compared (paper order), then the tasks that could not be (``—``)."""
    rows = []
    for task in comparison.tasks:
        rows.append(
            {
                "Task": task_label(task.task),
                "Items": task.n_items,
                "CPS A": percent(task.cps_a),
                "CPS B": percent(task.cps_b),
                "Δ CPS (A − B)": _pct(task.delta),
                "Δ 95% CI": delta_interval_text(task.interval.low, task.interval.high),
                "p": _p(task.p_value),
                "p (Holm)": _p(task.p_holm),
                "Verdict": _verdict_text(task.verdict, comparison),
                "Items that differ": _differ(task),
            }
        )
    for task_id in comparison.missing:
        rows.append({"Task": task_label(task_id), "Verdict": "not compared: no per-item data on both sides"})
    return pd.DataFrame.from_records(rows, columns=COMPARE_HEADERS)


def _verdict_text(verdict: Verdict, comparison: Comparison) -> str:
    match verdict:
        case Verdict.A_BETTER:
            return f"A ({comparison.a_label}) better"
        case Verdict.B_BETTER:
            return f"B ({comparison.b_label}) better"
        case Verdict.NO_DIFFERENCE:
            return "no difference"
        case _:
            raise AssertionError(f"unhandled verdict {verdict!r}")


def disagreements_table(comparison: Comparison | None, task_id: str) -> pd.DataFrame:
    """The items of ``task_id`` on which the two runs' answers differ, per prompt."""
    task = next((t for t in comparison.tasks if t.task == task_id), None) if comparison else None
    if task is None:
        return pd.DataFrame(columns=DISAGREEMENT_HEADERS)
    rows = []
    for d in task.disagreements:
        ids = [f"{i.part}:{i.doc_id}" if i.part else str(i.doc_id) for i in d.items[:MAX_LISTED_ITEMS]]
        more = f" … and {len(d.items) - MAX_LISTED_ITEMS} more" if len(d.items) > MAX_LISTED_ITEMS else ""
        rows.append(
            {
                "Prompt": d.prompt,
                "Items that differ": len(d.items),
                "Item ids (part:doc)": ", ".join(ids) + more,
            }
        )
    return pd.DataFrame.from_records(rows, columns=DISAGREEMENT_HEADERS)


def compare_view(
    board: Board, storage: Storage, cache: ItemsCache, a: RunRef, b: RunRef, num_fewshot: int
) -> CompareView:
    """A vs B in one setting: the verdict, the per-task table, the mean CPS line and a note."""
    empty = pd.DataFrame(columns=COMPARE_HEADERS)
    if a.key == b.key:
        return CompareView("Pick two different runs.", empty, "", "")
    sides, notes = {}, []
    for name, run in (("A", a), ("B", b)):
        folder, comparable = _details_path(board, run, num_fewshot)
        label = md_text(run_label(board, run))
        # The worker writes the per-item file and the results' intervals together: a run whose
        # results have none has no file to read (no store read for an older or imported run).
        kept = board.loaded.uncertainty.get((run.model, run.revision, run.precision, num_fewshot))
        if folder is None or kept is None:
            notes.append(
                f"{name} ({label}) has no per-item data in this setting: no interval, no comparison."
            )
            continue
        try:
            sides[name] = cache.read(storage, folder)
        except ItemsUnavailable as exc:
            notes.append(f"{name} ({label}) cannot be compared: {md_text(exc.reason)}.")
        if not comparable:
            notes.append(f"⚠️ {name} ({label}) is a sample or limited run: not comparable with full runs.")
    if len(sides) < 2:
        return CompareView("—", empty, "", " ".join(notes))
    comparison = board.memo(
        ("compare", a.key, b.key, num_fewshot),
        lambda: compare_runs(
            sides["A"],
            sides["B"],
            EVALITA_KINDS,
            TASK_IDS,
            cache=cache.draws,
            a_label=run_label(board, a),
            b_label=run_label(board, b),
        ),
    )
    verdict = (
        comparison.summary
        if comparison.tasks
        else "Nothing to compare: the two runs share no task with per-item data."
    )
    return CompareView(
        md_text(verdict), comparison_table(comparison), _mean_line(comparison), " ".join(notes), comparison
    )


def _mean_line(comparison: Comparison) -> str:
    mean = comparison.mean
    if mean is None:
        return "Mean CPS: not compared (a task has no per-item data on both sides)."
    verdict = _verdict_text(mean.verdict, comparison)
    return (
        f"**Mean CPS over the ten tasks:** Δ = {_pct(mean.delta):+.2f} "
        f"(95% CI {delta_interval_text(mean.interval.low, mean.interval.high)}), "
        f"{_p_clause(mean.p_value)}: {md_text(verdict)}."
    )


def task_choices() -> tuple[tuple[str, str], ...]:
    return tuple((f"{t.abbrev} — {t.name}", t.id) for t in TASKS.values())
