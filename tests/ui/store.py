"""A results + queue store for the UI tests: the paper's six dev LLMs and a few tricky extras
(the synthetic store of N models is :mod:`tests.support.synthetic.results`).

* the six dev LLMs of the paper (``tests.paper_tables.write_paper_store``), both settings;
* a comparable model whose id is an HTML payload (``XSS_MODEL``), low scores, with details;
* a sample-data run (not comparable) of ``SAMPLE_MODEL``;
* a queue with one request in each state and one malformed file;
* a local Hugging Face cache holding ``CACHED_MODEL`` (what a valid submission resolves to).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, ModelType, Precision
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage, Stores
from leaderboard.core.schema import ModelInfo, RunInfo, details_dir, results_file_path
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.schema import (
    DetailRecord,
    PromptScore,
    ResultsFile,
    TaskResult,
    details_file_name,
)
from tests.long_context.store import write_long_context_runs
from tests.paper_tables import write_paper_store
from tests.rescore.blocks import add_made_up_blocks

if TYPE_CHECKING:
    from leaderboard.ui.context import AppContext

XSS_MODEL = "<img src=x onerror=alert(1)>"
SAMPLE_MODEL = "demo-org/sample-model"
CACHED_MODEL = "test-org/tiny-model"
CACHED_MODEL_2 = "test-org/tiny-model-2"  # submitted through the browser form
CACHED_SHA = "0123456789abcdef0123456789abcdef01234567"
FINISHED_AT = "2025-02-01T10:00:00Z"


def _results(model_id: str, score: float, *, data: str = "hub", license_: str = "mit") -> ResultsFile:
    tasks = {
        task.id: TaskResult(
            metric=task.metric, prompts={p.id: PromptScore(score=score) for p in task.prompts}
        )
        for task in SUITE
    }
    details = details_dir(model_id, FINISHED_AT, "bfloat16", 0)
    return ResultsFile(
        model=ModelInfo(
            id=model_id,
            revision="abcdef1234567890",
            precision="bfloat16",
            params_b=1.5,
            model_type="pretrained",
            license=license_,
        ),
        run=RunInfo(
            num_fewshot=0,
            data=data,
            harness="lm-eval 0.4.13",
            backend="hf",
            finished_at=FINISHED_AT,
            started_at=FINISHED_AT,
            duration_s=12.5,
            hardware="test CPU",
            details_path=details,
        ),
        tasks=tasks,
    )


def write_results(results_root: Path, details_root: Path) -> None:
    add_made_up_blocks(write_paper_store(results_root))  # the metric switch has as-specified scores to show
    for results in (
        _results(XSS_MODEL, 0.10, license_="<b>evil</b>"),
        _results(SAMPLE_MODEL, 0.5, data="sample"),
    ):
        path = results_root / results_file_path(results, FINISHED_AT)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(results.to_json())
    broken = results_root / "broken-org" / "model" / "results_2025-01-01T00-00-00Z.json"
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text('{"schema": "evalita-llm-results/1", "model": {}}')
    folder = details_root / details_dir(XSS_MODEL, FINISHED_AT, "bfloat16", 0)
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        DetailRecord(
            doc_id=i,
            input=f"Frase {i}: <script>alert({i})</script>",
            answer="<b>Sì</b>",
            target="Sì",
            score=1.0 if i % 2 else 0.0,
        ).model_dump_json()
        for i in range(3)
    ]
    (folder / details_file_name("wic", "p1")).write_text("\n".join(lines) + "\n")
    write_long_context_runs(results_root, details_root)


def write_queue(requests_root: Path) -> None:
    queue = RequestQueue(LocalStorage(requests_root))

    def request(model: str, k: int = 0) -> EvalRequest:
        return EvalRequest(
            model=model,
            revision="main",
            precision=Precision.BFLOAT16,
            num_fewshot=k,
            model_type=ModelType.PRETRAINED,
            submitted_by="tester",
            submitted_time="2025-03-01T09:00:00Z",
        )

    for model in ("queue-org/pending-a", "queue-org/running-b", "queue-org/finished-c", "queue-org/failed-d"):
        queue.add(request(model))
    # Claim in fair order until the three we want to move are taken.
    claimed = {}
    while (item := queue.claim_next("worker-1", 3600)) is not None:
        claimed[item.model] = item
        if len(claimed) == 4:
            break
    queue.finish(
        claimed["queue-org/finished-c"].request_id, "worker-1", "queue-org/finished-c/results_x.json"
    )
    queue.fail(claimed["queue-org/failed-d"].request_id, "worker-1", "CUDA out of memory <oom>")
    queue.release(claimed["queue-org/pending-a"].request_id, "worker-1", "test")
    (requests_root / "broken").mkdir(parents=True, exist_ok=True)
    (requests_root / "broken" / "bad_eval_request_main_bfloat16_0shot.json").write_text("{not json")


def write_hf_cache(cache_root: Path) -> None:
    for model_id in (CACHED_MODEL, CACHED_MODEL_2):
        write_cache_entry(cache_root, model_id)


def write_cache_entry(cache_root: Path, model_id: str) -> None:
    """A standard HF hub cache entry: ``models--org--name/refs/main`` + ``snapshots/<sha>/config.json``."""
    repo = cache_root / ("models--" + model_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(CACHED_SHA)
    snapshot = repo / "snapshots" / CACHED_SHA
    snapshot.mkdir(parents=True, exist_ok=True)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "vocab_size": 256,
    }
    (snapshot / "config.json").write_text(json.dumps(config))
    (snapshot / "README.md").write_text("---\nlicense: apache-2.0\n---\nA tiny test model.\n")


def build_store(root: Path) -> tuple[Path, Path]:
    """Return ``(data_dir, hf_cache)`` under ``root``."""
    data = root / "data"
    write_results(data / "results", data / "details")
    write_queue(data / "requests")
    cache = root / "hf-cache"
    write_hf_cache(cache)
    return data, cache


def sample_app_context(root: Path) -> AppContext:
    """An app context on the sample results and queue, written under ``root`` (its data folder)."""
    from leaderboard.ui.context import AppContext  # gradio: only for the tests that build the app

    write_results(root / "results", root / "details")
    write_queue(root / "requests")
    stores = Stores(
        requests=LocalStorage(root / "requests"),
        results=LocalStorage(root / "results"),
        details=LocalStorage(root / "details"),
    )
    return AppContext(
        settings=Settings.from_env({"EVALITA_DATA_DIR": str(root)}),
        stores=stores,
        queue=RequestQueue(stores.requests),
    )
