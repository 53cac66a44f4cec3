"""The toy track's runner: no harness, a score computed from the request, one details file."""

from __future__ import annotations

import json
import os
import time

from backend.config import WorkerConfig
from backend.tracks import Evaluation, RunContext
from eval_queue.requests import EvalRequest, isoformat, utc_now
from leaderboard.core.schema import RunInfo


def evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
    record = {
        "request": request.request_id,
        "worker": config.worker_id,
        "token": bool(os.environ.get("HF_TOKEN")),
    }
    if os.environ.get("STUB_RECORD"):
        with open(os.environ["STUB_RECORD"], "a", encoding="utf-8") as sink:
            sink.write(json.dumps(record) + "\n")
    wait_s = float(config.track_options.get("toy_wait_s") or os.environ.get("STUB_SLEEP_S", "0"))
    deadline = time.monotonic() + wait_s
    while True:
        context.progress.beat("toy run")
        if time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    run = RunInfo(num_fewshot=0, data="sample", finished_at=isoformat(utc_now()))
    answers = json.dumps({"doc_id": 0, "answer": request.model}).encode() + b"\n"
    return Evaluation(run, {"score": len(request.model) / 100}, {"answers.jsonl": answers}, request.variant)
