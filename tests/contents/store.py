"""Results stores for the contents tests: every track's files, and single Evalita files to publish."""

from __future__ import annotations

from pathlib import Path

from backend.tracks.judge.convert import answers_from_samples, meta_body
from eval_queue.storage import LocalStorage, Storage
from leaderboard.core.schema import ModelInfo, RunCost, RunInfo, results_file_path
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.schema import EvalitaRunInfo, PromptScore, ResultsFile, TaskResult
from leaderboard.tracks.judge.definition import harness_task_name
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.schema import JudgeResultsFile
from tests.support.synthetic.results import write_synthetic_results
from tests.ui.store import write_results

#: Written by :func:`write_every_track` (beside the UI store's: evalita, long-context, a broken file).
JUDGE_MODEL = "judge-org/judge"
BROKEN_FILE = "broken-org/model/results_2025-01-01T00-00-00Z.json"


def evalita_file(
    model: str,
    score: float = 0.5,
    *,
    num_fewshot: int = 0,
    finished: str = "2026-01-02T03:04:05Z",
    revision: str = "a" * 40,
    precision: str = "bfloat16",
) -> tuple[str, ResultsFile]:
    """A comparable Evalita run of ``model``, prompt ``i`` of every task scoring ``score + i/100``."""
    tasks = {
        task.id: TaskResult(
            metric=task.metric,
            prompts={
                p.id: PromptScore(score=round(score + i / 100, 4), stderr=0.01, n=100)
                for i, p in enumerate(task.prompts)
            },
        )
        for task in SUITE
    }
    results = ResultsFile(
        model=ModelInfo(id=model, revision=revision, precision=precision, params_b=7.0),
        run=EvalitaRunInfo(
            num_fewshot=num_fewshot,
            data="hub",
            finished_at=finished,
            started_at=finished,
            duration_s=3600.0,
            device="cuda",
            cost=RunCost(loglikelihood_s=1000.0, generation_s=2000.0, gpus=1, gpu_hours=1.0),
        ),
        tasks=tasks,
    )
    return results_file_path(results, finished), results


def judge_file(
    model: str = JUDGE_MODEL, finished: str = "2026-01-03T00:00:00Z"
) -> tuple[str, JudgeResultsFile]:
    """A judge-of-the-annotated-set run (meta) scoring five items per criterion."""
    human = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
    judged = {"a": 1, "b": 3, "c": 3, "d": None, "e": 4}
    samples = {
        harness_task_name(c): [
            {
                "doc_id": i,
                "doc": {"item": item, "criterion": c.value, "human": human[item], "prompt": "…"},
                "filtered_resps": [
                    "nessun JSON"
                    if judged[item] is None
                    else f'{{"score": {judged[item]}, "explanation": "."}}'
                ],
            }
            for i, item in enumerate(human)
        ]
        for c in CRITERIA
    }
    results = JudgeResultsFile(
        model=ModelInfo(id=model, revision="b" * 40, precision="bfloat16"),
        run=RunInfo(num_fewshot=0, data="hub:org/set", finished_at=finished),
        judge=meta_body(answers_from_samples(samples)),
    )
    return results_file_path(results, finished), results


def write_every_track(data_dir: Path) -> Storage:
    """The UI tests' results store (Evalita runs, long-context runs, one broken file) plus a judge run
    and three synthetic Evalita models whose files carry intervals."""
    write_results(data_dir / "results", data_dir / "details")
    write_synthetic_results(data_dir / "results", 3)
    store = LocalStorage(data_dir / "results")
    path, judge = judge_file()
    store.write(path, judge.to_json())
    return store
