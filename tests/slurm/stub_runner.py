"""A track runner for the Slurm tests, run by the real ``python -m backend`` workers: no harness.

The tests put a ``sitecustomize.py`` on the workers' ``PYTHONPATH`` that registers
:func:`evaluate` as the Evalita runner (``install_stub_runner``).  Each run appends one
JSON line to ``$STUB_RECORD`` (request, worker, whether ``HF_TOKEN`` reached it), then
works for ``$STUB_SLEEP_S`` seconds (beating progress; SIGTERM interrupts it) and
returns a one-score results file.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from backend.config import WorkerConfig
from backend.tracks import Evaluation, RunContext
from eval_queue.requests import EvalRequest
from leaderboard.schema import ModelInfo, PromptScore, ResultsFile, RunInfo, TaskResult

SITECUSTOMIZE = """\
import types

import backend.tracks
from eval_queue.vocabulary import Track

backend.tracks.TRACK_RUNNERS = types.MappingProxyType({Track.EVALITA: "tests.slurm.stub_runner:evaluate"})
"""


def install_stub_runner(folder: Path) -> Path:
    """Write the ``sitecustomize.py`` that makes every worker process use :func:`evaluate`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    return folder


def evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
    record = {
        "request": request.request_id,
        "worker": config.worker_id,
        "token": bool(os.environ.get("HF_TOKEN")),
    }
    with open(os.environ["STUB_RECORD"], "a", encoding="utf-8") as sink:
        sink.write(json.dumps(record) + "\n")
    deadline = time.monotonic() + float(os.environ.get("STUB_SLEEP_S", "0.5"))
    while time.monotonic() < deadline:
        context.progress.beat("stub runner working")
        time.sleep(0.1)
    results = ResultsFile(
        model=ModelInfo(id=request.model, revision=request.revision),
        run=RunInfo(num_fewshot=request.num_fewshot, data="sample", request_id=request.request_id),
        tasks={"te": TaskResult(metric="acc", prompts={"p1": PromptScore(score=0.5, n=4)})},
    )
    return Evaluation(results, f"{request.model}/results_stub.json", {})
