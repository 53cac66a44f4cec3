"""Long-context runs (Table 5's 10K figures) and their details, written into a test store."""

from __future__ import annotations

from pathlib import Path

from leaderboard.core.schema import details_dir, results_file_path
from leaderboard.tracks.long_context.definition import TRACK, harness_tasks
from leaderboard.tracks.long_context.schema import LongContextDetail, LongContextResults
from tests.long_context.test_schema_tables import PAPER_10K, _document

#: A run's model whose name and answers are hostile HTML (rendered as text, never markup).
LC_XSS_MODEL = "lc-org/<img src=x onerror=alert(1)>"
LC_MODELS = ("ANITA-8B", "Llama3.1-8B")
FINISHED = "2026-11-20T10:00:00Z"


def _detail(task_name: str, n: int) -> LongContextDetail:
    mc = "_mc_" in task_name
    return LongContextDetail(
        doc_id=n,
        question_id=f"q{n}",
        book_id="libro",
        question=f"Domanda {n} <script>alert(0)</script>?",
        references=["Giacometta", "la giovane"],
        answer=f"Risposta {n}: <b>Giacometta</b>",
        choices=["A. Carolina", "B. Elena", "C. Giacometta", "D. Geltrude"] if mc else None,
        label="C" if mc else None,
        letter=("C" if n == 0 else None) if mc else None,
        em=None if mc else 1.0,
        meteor=None if mc else 0.5,
        meteor_it=None if mc else 0.6,
        acc=(1.0 if n == 0 else 0.0) if mc else None,
        context_tokens=4000,
        seen_tokens=2000,
    )


def write_long_context_runs(results_root: Path, details_root: Path) -> list[str]:
    """Two runs of Table 5's 10K figures on the 10K and full settings, with details; returns their paths."""
    paths = []
    for model in LC_MODELS:
        document = _document(model, PAPER_10K[model], settings=("10k", "full"))
        if model == "Llama3.1-8B":
            document["model"]["id"] = LC_XSS_MODEL
        run = LongContextResults.model_validate(document)
        folder = details_dir(run.model.id, FINISHED, run.model.precision, 0, TRACK)
        run = run.model_copy(update={"run": run.run.model_copy(update={"details_path": folder})})
        path = results_file_path(run, FINISHED)
        (results_root / path).parent.mkdir(parents=True, exist_ok=True)
        (results_root / path).write_bytes(run.to_json())
        for task in harness_tasks(tuple(run.settings)):
            target = details_root / folder / f"{task.name}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("".join(_detail(task.name, n).model_dump_json() + "\n" for n in range(2)))
        paths.append(path)
    return paths
