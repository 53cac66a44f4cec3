"""End to end, offline: a judge runs through lm-evaluation-harness on the bundled sample and on a SUM run.

The tiny random model writes no JSON: every answer must be recorded as unparsed — in the
results (unparsed rate 1, figures "not enough data") and in the details (raw answer kept) —
never as a score.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from backend.embedded import install_snapshot
from eval_queue.requests import EvalRequest, ModelType, Precision, Status, isoformat, utc_now
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.tracks.judge.app.records import JudgeRun
from leaderboard.tracks.judge.app.tables import (
    OVERALL,
    TableFigure,
    annotated_sets,
    judges_table,
    stat_column,
)
from leaderboard.tracks.judge.data import SAMPLE_DIR, load_annotated_set
from leaderboard.tracks.judge.definition import RUBRIC_VERSION, JudgeMode, JudgeProtocol
from leaderboard.tracks.judge.paper import PAPER_RUBRIC_VERSION
from leaderboard.tracks.judge.parse import ParseStatus
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.schema import (
    GenerationsBody,
    GenerationSource,
    JudgeDetail,
    JudgeResultsFile,
    MetaBody,
)
from tests.backend.conftest import REPO_ROOT, Deployment, worker_env
from tests.judge.test_items import _publish_sum_run
from tests.judge.test_paper_protocol import write_examples
from tests.support import preforked
from tests.support.tiny_model import TinyModel, folder_revision

pytestmark = pytest.mark.slow

LIMIT = 2
MAX_GEN = 12
#: One prompt at a time: the tiny model's 384-token vocabulary makes a judge prompt thousands of
#: tokens long, and a padded batch sends attention down its masked path, which builds every
#: head's full score matrix (most of these runs' time); a lone prompt needs no mask.
ONE_AT_A_TIME = ("--batch-size", "1")


def _judge(
    tiny_model: TinyModel, datasets_cache: Path, data_dir: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    arguments = [
        tiny_model.model_id, "--revision", tiny_model.revision, "--precision", "float32",
        "--data-dir", str(data_dir), "--limit", str(LIMIT), "--max-gen-toks", str(MAX_GEN), *ONE_AT_A_TIME, *args,
    ]  # fmt: skip
    env = worker_env(tiny_model.cache_dir, datasets_cache, data_dir)
    return preforked.run_module("backend.tracks.judge", arguments, env=env, cwd=REPO_ROOT, timeout=900)


def _submit_judge(
    deployment: Deployment,
    tiny_model: TinyModel,
    target: str | None = None,
    protocol: JudgeProtocol | None = None,
) -> EvalRequest:
    request = EvalRequest(
        model=tiny_model.model_id,
        revision=tiny_model.revision,
        precision=Precision.FLOAT32,
        model_type=ModelType.PRETRAINED,
        submitted_by="tests",
        submitted_time=isoformat(utc_now()),
        track="judge",
        judge_mode=JudgeMode.GENERATIONS if target else None,
        judge_target=target,
        judge_protocol=protocol,
    )
    return deployment.queue.add(request)


def test_the_worker_runs_a_tiny_judge_on_the_sample_to_five_criteria_all_unparsed(
    deployment: Deployment, tiny_model: TinyModel
) -> None:
    request = _submit_judge(deployment, tiny_model)

    done = deployment.worker(
        "--once", "--data", "sample", "--limit", str(LIMIT), "--max-gen-toks", str(MAX_GEN), *ONE_AT_A_TIME
    )

    assert done.returncode == 0, done.stderr[-3000:]
    finished = deployment.status(request)
    assert finished.status is Status.FINISHED, finished.error
    stores, path = deployment.stores, finished.results_path
    assert path is not None and path.endswith("_float32_judge.json")
    results = JudgeResultsFile.from_json(stores.results.read(path), path)
    body = results.judge
    assert isinstance(body, MetaBody) and body.mode is JudgeMode.META and body.rubric == RUBRIC_VERSION
    assert (results.model.id, results.run.data, results.run.limit) == (tiny_model.model_id, "sample", LIMIT)
    assert results.run.request_id == request.request_id
    assert list(body.criteria) == list(CRITERIA)
    for block in (*body.criteria.values(), body.overall):
        assert block.n_items == (LIMIT if block is not body.overall else LIMIT * len(CRITERIA))
        assert block.unparsed_rate == 1.0 and block.n_scored == 0
        assert block.rho is None and block.mae is None and "0 scored items" in block.not_enough_data["rho"]
    assert all(item.judge is None and item.status is not ParseStatus.PARSED for item in body.items)

    details = sorted(stores.details.list())
    assert [Path(p).name for p in details] == sorted(f"{c.value}.jsonl" for c in CRITERIA)
    assert all(p.startswith(results.run.details_path + "/") for p in details)
    lines = [
        JudgeDetail.model_validate_json(line)
        for line in stores.details.read(details[0]).decode().splitlines()
    ]
    assert len(lines) == LIMIT and all(line.score is None and line.human is not None for line in lines)

    table = judges_table([JudgeRun(path, results)], include_noncomparable=True)
    assert table.loc[0, stat_column(OVERALL, TableFigure.UNPARSED)] == 1.0
    assert table.loc[0, stat_column(OVERALL, TableFigure.RHO)] is pd.NA
    # The project protocol on the sample: recorded as such, never comparable with the paper.
    assert body.protocol is JudgeProtocol.PROJECT and results.comparable is False
    assert body.generation is not None and body.generation.source is GenerationSource.PROJECT
    assert body.generation.max_gen_toks == MAX_GEN and body.generation.prefill == '{"score":'
    assert body.annotated is not None and body.annotated.name == "sample" and body.annotated.items == 20
    assert results.run.worker_id is not None


def test_the_tiny_judge_scores_a_published_sum_run_as_unparsed(
    tiny_model: TinyModel, datasets_cache: Path, tmp_path: Path
) -> None:
    stores = open_stores(Settings(data_dir=tmp_path))
    target = _publish_sum_run(stores)

    done = _judge(tiny_model, datasets_cache, tmp_path, "--mode", "generations", "--target", target)

    assert done.returncode == 0, done.stderr[-3000:]
    path = done.stdout.strip()
    assert "_float32_judge-gen-" in path
    results = JudgeResultsFile.from_json(stores.results.read(path), path)
    body = results.judge
    assert isinstance(body, GenerationsBody) and body.task == "sum"
    assert (body.target.model, body.target.results_path) == ("org/model", target)
    assert results.run.data == "sample"  # the judged run's data
    assert list(body.criteria) == list(CRITERIA)
    assert all(
        b.mean is None and b.unparsed_rate == 1.0 and b.n_items == LIMIT for b in body.criteria.values()
    )
    assert all(item.score is None for item in body.items)


def test_a_bad_annotated_set_stops_before_any_model_is_loaded(
    tiny_model: TinyModel, datasets_cache: Path, tmp_path: Path
) -> None:
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "annotated.jsonl").write_text('{"doc_id": "d"}\n', encoding="utf-8")

    done = _judge(tiny_model, datasets_cache, tmp_path / "store", "--data", f"local:{tmp_path / 'set'}")

    assert done.returncode == 2
    assert "annotated set" in done.stderr and "line 1" in done.stderr
    assert "loading" not in done.stderr
    assert not (tmp_path / "store" / "results").exists() or not any(
        (tmp_path / "store" / "results").rglob("*.json")
    )


def test_a_judge_of_a_run_that_is_not_in_the_store_fails_with_a_clear_reason(
    deployment: Deployment, tiny_model: TinyModel
) -> None:
    request = _submit_judge(
        deployment, tiny_model, target="org/none/results_2026-01-01T00-00-00Z_bfloat16_0shot.json"
    )

    done = deployment.worker("--once", "--data", "sample")

    assert done.returncode == 1
    failed = deployment.status(request)
    assert failed.status is Status.FAILED
    assert failed.error is not None and failed.error.startswith("reading what to judge")
    assert "is not in the results store" in failed.error
    assert deployment.stores.results.list() == []


def _paper_judge(tiny_model: TinyModel, root: Path) -> TinyModel:
    """The tiny model as a judge a full paper-protocol run can afford on CPU: a window that holds
    Appendix A's prompt, sampling settings of its own, and every token an end of turn (it answers
    at once: nothing, unparsed — but the whole run, every item, at no cost)."""
    folder = root / "paper-judge"
    shutil.copytree(tiny_model.folder, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"max_position_embeddings": 16384}))
    generation = json.loads((folder / "generation_config.json").read_text())
    generation |= {
        "do_sample": True,
        "temperature": 0.7,
        "top_p": 0.9,
        "eos_token_id": list(range(config["vocab_size"])),
    }
    (folder / "generation_config.json").write_text(json.dumps(generation))
    model_id, revision = "evalita-tests/tiny-paper-judge", folder_revision(folder)
    install_snapshot(folder, model_id, revision, tiny_model.cache_dir)
    return TinyModel(model_id=model_id, revision=revision, folder=folder, cache_dir=tiny_model.cache_dir)


def _local_set(root: Path, items: int = 3) -> Path:
    """A local annotated set: the first ``items`` lines of the bundled sample (the format's example)."""
    folder = root / "annotazioni"
    folder.mkdir()
    lines = (SAMPLE_DIR / "annotated.jsonl").read_text(encoding="utf-8").splitlines()[:items]
    (folder / "annotated.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_a_paper_request_on_a_worker_without_examples_claims_nothing(
    deployment: Deployment, tiny_model: TinyModel
) -> None:
    request = _submit_judge(deployment, tiny_model, protocol=JudgeProtocol.PAPER)

    done = deployment.worker("--once", "--data", "sample")

    assert done.returncode == 5, done.stderr[-3000:]
    assert "nothing claimed" in done.stderr and "--judge-examples" in done.stderr
    pending = deployment.status(request)
    assert pending.status is Status.PENDING and pending.attempts == 0 and pending.claimed_by is None
    assert deployment.stores.results.list() == []


def test_a_full_paper_run_on_a_local_set_is_comparable_and_records_what_it_measured(
    deployment: Deployment, tiny_model: TinyModel, tmp_path: Path
) -> None:
    judge = _paper_judge(tiny_model, tmp_path)
    annotated = _local_set(tmp_path)
    examples = write_examples(tmp_path / "esempi.jsonl")
    paper = _submit_judge(deployment, judge, protocol=JudgeProtocol.PAPER)
    worker = (
        "--once", "--worker-id", "w-paper", "--data", "sample", "--judge-data", f"local:{annotated}", *ONE_AT_A_TIME
    )  # fmt: skip

    # The maintainer pins the digests of the copies, as `python -m backend.tracks.judge.pins` prints them.
    pins = tmp_path / "pins.json"
    printed = subprocess.run(
        [sys.executable, "-m", "backend.tracks.judge.pins", str(examples), f"local:{annotated}"],
        capture_output=True,
        text=True,
        check=True,
    )
    pins.write_text(printed.stdout, encoding="utf-8")

    done = deployment.worker(*worker, "--judge-examples", str(examples), "--judge-paper-pins", str(pins))

    assert done.returncode == 0, done.stderr[-3000:]
    finished = deployment.status(paper)
    assert finished.status is Status.FINISHED, finished.error
    path = finished.results_path
    assert path is not None and path.endswith("_float32_judge-paper.json")
    results = JudgeResultsFile.from_json(deployment.stores.results.read(path), path)
    body = results.judge
    assert isinstance(body, MetaBody) and body.protocol is JudgeProtocol.PAPER
    assert body.rubric == PAPER_RUBRIC_VERSION
    assert (results.run.worker_id, results.run.data, results.run.limit) == (
        "w-paper",
        "local:annotazioni",
        None,
    )
    assert body.few_shot is not None and body.few_shot.file == "esempi.jsonl"
    assert body.few_shot.sha256 == hashlib.sha256(examples.read_bytes()).hexdigest()
    assert body.few_shot.examples == dict.fromkeys(CRITERIA, 2)
    digest = load_annotated_set(f"local:{annotated}").sha256
    assert body.annotated is not None and (body.annotated.sha256, body.annotated.items) == (digest, 3)
    generation = body.generation
    assert generation is not None and generation.source is GenerationSource.GENERATION_CONFIG
    assert generation.do_sample is True and generation.sampling == {"temperature": 0.7, "top_p": 0.9}
    assert generation.prefill is None and generation.stop == ["</Output>"]
    assert generation.window == 16384 and 0 < generation.longest_prompt_tokens < 16384
    assert (
        generation.reasoning is False and generation.max_gen_toks == 1024
    )  # no think block: the answer's budget
    assert body.paper_pins is not None and body.paper_pins.annotated_sha256 == digest
    assert body.paper_pins.examples_sha256 == body.few_shot.sha256
    assert results.comparable is True and results.annotated_set == digest
    assert body.overall.n_items == 3 * len(CRITERIA)

    # The project protocol, same judge, same set: recorded, listed apart, not comparable.
    project = _submit_judge(deployment, judge)
    assert deployment.worker(*worker).returncode == 0
    project_path = deployment.status(project).results_path
    assert project_path is not None and project_path.endswith("_float32_judge.json")
    runs = [
        JudgeRun(p, JudgeResultsFile.from_json(deployment.stores.results.read(p), p))
        for p in (path, project_path)
    ]
    assert [r.comparable for r in runs] == [True, False]
    assert runs[1].results.judge.protocol is JudgeProtocol.PROJECT
    shown = judges_table(runs)
    assert shown["results_path"].tolist() == [path] and shown["set_sha256"].tolist() == [digest]
    [listed] = annotated_sets(runs)
    assert (listed.key, listed.name, listed.judges) == (digest, "local:annotazioni", 1)
    assert len(judges_table(runs, include_noncomparable=True, annotated_set=digest)) == 2
