"""The Evalita track on the Hub's eval results (:mod:`leaderboard.hub_results`).

One file per few-shot setting (``evalita-llm_0shot.yaml``, ``evalita-llm_5shot.yaml``: a model
may have a score in each, and the Hub wants each variant in its own file), each with the mean
CPS (the ranking score) and every task's CPS, 0–100 with two decimals as the board shows them
(paper §5, by :mod:`leaderboard.tracks.evalita.metrics`), from the newest comparable run of
that setting; each entry's notes give its 95 % interval (the run's paired item bootstrap) when
the run has one.  ``eval_yaml()`` is the benchmark's ``eval.yaml``: one task per (figure,
setting), the task ids the entries use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from leaderboard.core.numbers import percent
from leaderboard.hub_results.model import HubEntry, HubRun, TrackHubResults
from leaderboard.tracks.evalita.contents import known_prompt_scores
from leaderboard.tracks.evalita.definition import FEWSHOT_SETTINGS, SUITE
from leaderboard.tracks.evalita.metrics import overall_score, score_task
from leaderboard.tracks.evalita.schema import ResultsFile
from leaderboard.tracks.evalita.uncertainty import MEAN_CPS_FIGURE, cps_figure

#: The Hub dataset the maintainers register as the Evalita-LLM benchmark (its eval.yaml).
DATASET_ID = "evalitahf/evalita-llm"
MEAN_TASK = "mean_cps"


def task_id(figure: str, num_fewshot: int) -> str:
    """The eval.yaml task of a figure in a setting: ``mean_cps_0shot``, ``wic_cps_5shot``."""
    return f"{figure}_{num_fewshot}shot"


def _interval_note(results: ResultsFile, figure: str) -> str:
    pair = results.uncertainty.intervals.get(figure) if results.uncertainty is not None else None
    if pair is None:
        return "no interval (the run has no per-item data)"
    return f"95 % interval {percent(pair[0]):.2f}–{percent(pair[1]):.2f} (paired item bootstrap)"


def _entries(run: HubRun) -> list[HubEntry]:
    results = run.results
    assert isinstance(results, ResultsFile)
    k = results.run.num_fewshot
    setting = f"{k}-shot"
    if not results.comparable:  # only with --include-noncomparable, never in a pull request
        setting = f"NOT COMPARABLE (data: {results.run.data}, limit: {results.run.limit}); {setting}"
    by_task: dict[str, dict[str, float | None]] = {}
    for task, prompt, score, _stderr, _n in known_prompt_scores(results):
        by_task.setdefault(task, {})[prompt] = score
    date = (results.run.finished_at or "")[:10] or None
    where = f"{results.run.harness or 'lm-eval'}; revision {results.model.revision[:12]}, {results.model.precision}"
    cps = {t.id: score_task(t, by_task.get(t.id, {})).cps for t in SUITE}
    entries = []
    mean = overall_score(cps).avg_cps
    if mean is not None:
        entries.append(
            HubEntry(
                task_id(MEAN_TASK, k),
                percent(mean) or 0.0,
                date,
                run.url,
                f"{setting}; mean CPS over the ten tasks; {_interval_note(results, MEAN_CPS_FIGURE)}; {where}",
            )
        )
    for task in SUITE:
        value = cps[task.id]
        if value is None:
            continue
        entries.append(
            HubEntry(
                task_id(f"{task.id}_cps", k),
                percent(value) or 0.0,
                date,
                run.url,
                f"{setting}; {task.abbrev} CPS ({task.metric_label}); {_interval_note(results, cps_figure(task.id))}",
            )
        )
    return entries


def files(runs: Sequence[HubRun]) -> dict[str, list[HubEntry]]:
    """Per setting, the entries of its newest comparable run (``runs`` come newest first)."""
    out: dict[str, list[HubEntry]] = {}
    for run in runs:
        name = f"evalita-llm_{run.results.run.num_fewshot}shot.yaml"
        if name not in out:
            entries = _entries(run)
            if entries:
                out[name] = entries
    return out


def eval_yaml() -> dict[str, Any]:
    """The benchmark's ``eval.yaml`` (for ``evalitahf/evalita-llm``), its tasks the entries' task ids."""
    tasks: list[dict[str, Any]] = []
    for k in FEWSHOT_SETTINGS:
        tasks.append(
            {
                "id": task_id(MEAN_TASK, k),
                "name": f"Evalita-LLM mean CPS ({k}-shot)",
                "description": f"Mean Combined Performance Score over the ten tasks, {k}-shot (0–100).",
            }
        )
        for task in SUITE:
            tasks.append(
                {
                    "id": task_id(f"{task.id}_cps", k),
                    "name": f"{task.abbrev} CPS ({k}-shot)",
                    "description": (
                        f"{task.name}: CPS = (1 − (MaxP − AvgP)) · MaxP over its {len(task.prompts)} prompts "
                        f"({task.metric_label}), {k}-shot (0–100)."
                    ),
                }
            )
    return {
        "name": "Evalita-LLM",
        "description": (
            "Ten native Italian tasks (Magnini et al.), each under several prompts, evaluated with "
            "lm-evaluation-harness; a model's score on a task is its Combined Performance Score (CPS), "
            "which rewards the best prompt and penalises sensitivity to the prompt. Scores are 0–100, "
            "higher is better. Results come from the Evalita-LLM Leaderboard's comparable runs (full runs "
            "on the official data)."
        ),
        "evaluation_framework": "lm-evaluation-harness",
        "tasks": tasks,
    }


HUB_RESULTS = TrackHubResults(dataset_id=DATASET_ID, files=files, eval_yaml=eval_yaml)
