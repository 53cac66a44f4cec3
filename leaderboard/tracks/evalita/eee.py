"""The Evalita track's part of the Every Eval Ever export (:mod:`leaderboard.eee`).

Figures: the mean CPS (the ranking score), each task's CPS, MaxP and AvgP (paper §5, by
:mod:`leaderboard.tracks.evalita.metrics`, the board's one scoring path) with the run's 95 %
intervals, and every prompt's score — the figure whose items are the details file
``<task>_<prompt>.jsonl``.  Items: each details line (the prompt as the model saw it, the gold,
the answer, its score).  Scores 0–1, as in the results file.  A multiple-choice line without a
stored score under an accuracy metric gets lm-eval's own item accuracy (answer == target); lines
of corpus-level metrics without one (NER, LS, REL F1s) have no instance score and are left out.
"""

from __future__ import annotations

from collections.abc import Iterable

from eval_queue.vocabulary import fewshot_label
from leaderboard.core.schema import ResultsEnvelope
from leaderboard.eee.model import Figure, Item, TrackEee
from leaderboard.tracks.evalita.contents import known_prompt_scores
from leaderboard.tracks.evalita.definition import SUITE, TASKS
from leaderboard.tracks.evalita.metrics import overall_score, score_task
from leaderboard.tracks.evalita.schema import ResultsFile, details_file_name, parse_details
from leaderboard.tracks.evalita.uncertainty import MEAN_CPS_FIGURE, cps_figure, prompt_figure

BENCHMARK = "evalita-llm"
DATASET = ("Evalita-LLM", None)
_BOOTSTRAP = "paired item bootstrap"


def _interval(results: ResultsFile, figure: str) -> tuple[float | None, float | None]:
    if results.uncertainty is None:
        return None, None
    pair = results.uncertainty.intervals.get(figure)
    return (pair[0], pair[1]) if pair is not None else (None, None)


def figures(results: ResultsEnvelope) -> list[Figure]:
    """The run's figures: mean CPS, per task CPS/MaxP/AvgP, per prompt score (linked to its details)."""
    assert isinstance(results, ResultsFile)
    setting = fewshot_label(results.run.num_fewshot)
    prompts = known_prompt_scores(results)
    by_task: dict[str, dict[str, float | None]] = {}
    for task_id, prompt_id, score, _stderr, _n in prompts:
        by_task.setdefault(task_id, {})[prompt_id] = score
    out: list[Figure] = []
    task_cps = {}
    for task in SUITE:
        scored = score_task(task, by_task.get(task.id, {}))
        task_cps[task.id] = scored.cps
        dataset = (f"Evalita-LLM {task.abbrev}", task.dataset.path)
        for name, value, label in (
            ("cps", scored.cps, "Combined Performance Score: (1 − (MaxP − AvgP)) · MaxP over its prompts"),
            ("maxp", scored.maxp, "the best prompt's score (MaxP)"),
            ("avgp", scored.avgp, "the mean score over its prompts (AvgP)"),
        ):
            if value is None:
                continue
            low, high = _interval(results, cps_figure(task.id)) if name == "cps" else (None, None)
            out.append(
                Figure(
                    result_id=f"{task.id}/{name}",
                    name=f"{task.abbrev} {name.upper()} ({setting})",
                    value=value,
                    metric_id=f"evalita_llm.{name}",
                    metric_name=name.upper() if name != "cps" else "CPS",
                    description=f"{task.name} ({task.metric_label}): {label}",
                    low=low,
                    high=high,
                    interval_method=_BOOTSTRAP,
                    dataset=dataset,
                    extra={"task": task.id, "best_prompt": scored.best_prompt or ""}
                    if name == "maxp"
                    else {},
                )
            )
    mean = overall_score(task_cps).avg_cps
    if mean is not None:
        low, high = _interval(results, MEAN_CPS_FIGURE)
        out.insert(
            0,
            Figure(
                result_id="mean_cps",
                name=f"Evalita-LLM mean CPS ({setting})",
                value=mean,
                metric_id="evalita_llm.mean_cps",
                metric_name="mean CPS",
                description="mean Combined Performance Score over the ten tasks (the ranking score)",
                low=low,
                high=high,
                interval_method=_BOOTSTRAP,
            ),
        )
    for task_id, prompt_id, score, stderr, n in prompts:
        if score is None:
            continue
        task = TASKS[task_id]
        low, high = _interval(results, prompt_figure(task_id, prompt_id))
        out.append(
            Figure(
                result_id=f"{task_id}/{prompt_id}",
                name=f"{task.abbrev} prompt {prompt_id} ({setting})",
                value=score,
                metric_id=f"{task.metric}",
                metric_name=task.metric_label,
                description=f"{task.name}, prompt {prompt_id}: {task.metric_label} as lm-eval reports it",
                low=low,
                high=high,
                interval_method=_BOOTSTRAP,
                stderr=stderr,
                num_samples=n,
                details_file=details_file_name(task_id, prompt_id),
                dataset=(f"Evalita-LLM {task.abbrev}", task.dataset.path),
                extra={"task": task_id, "prompt": prompt_id},
            )
        )
    return out


def items(results: ResultsEnvelope, file_name: str, data: bytes) -> Iterable[Item]:
    """The items of one details file ``<task>_<prompt>.jsonl``."""
    stem = file_name.removesuffix(".jsonl")
    task_id, _, prompt_id = stem.rpartition("_")
    task = TASKS.get(task_id)
    for record in parse_details(data, file_name):
        extra = record.model_extra or {}
        metadata = {"task": task_id, "prompt": prompt_id}
        if isinstance(extra.get("part"), str):
            metadata["part"] = extra["part"]
        multiple_choice = record.choices is not None
        score = record.score
        if score is None and multiple_choice and task is not None and task.metric == "acc":
            # lm-eval's acc of an item is exactly "the option with the highest log-likelihood is the
            # gold", which the line records as answer and target.
            score = 1.0 if record.answer == record.target else 0.0
            metadata["score"] = "answer == target (lm-eval's acc of the item)"
        if score is None:
            continue  # a corpus-level metric (F1 over entities, relations…): no per-item score exists
        yield Item(
            sample_id=f"{task_id}-{metadata.get('part', '')}{record.doc_id}",
            raw_input=record.input,
            references=(record.target,),
            outputs=(record.answer,),
            score=float(score),
            correct=(record.answer == record.target) if multiple_choice else None,
            choices=tuple(record.choices) if multiple_choice else None,
            extraction_method="argmax log-likelihood" if multiple_choice else "lm-eval filter",
            metadata=metadata,
        )


EEE = TrackEee(benchmark=BENCHMARK, dataset=DATASET, figures=figures, items=items)
