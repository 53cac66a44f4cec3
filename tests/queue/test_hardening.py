"""The smaller hardening items, each pinned: terminal safety, expired leases, dangling links,
long echoes, the worker's re-check of a request file, masked logs, unsupported few-shot counts."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.tracks import RunContext
from backend.worker import Evaluation, Outcome, WorkerConfig, run_once
from eval_queue.cli import render_listing
from eval_queue.errors import MalformedFileError, SubmissionRejected
from eval_queue.queue import QueueState, RequestQueue
from eval_queue.redact import RedactingRecordFactory, install_log_redaction
from eval_queue.requests import EvalRequest, Status, isoformat
from eval_queue.resolver import CacheModelResolver
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage, Stores
from eval_queue.submission import SubmissionForm, submit
from leaderboard.core.schema import ModelInfo, RunInfo
from leaderboard.tracks.evalita.app.records import load_results
from leaderboard.tracks.evalita.schema import PromptScore, ResultsFile, TaskResult, parse_details

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def request(model: str = "org/model", **fields: object) -> EvalRequest:
    return EvalRequest(model=model, revision="main", submitted_time=isoformat(T0), **fields)


@pytest.fixture
def stores(tmp_path: Path) -> Stores:
    root = tmp_path / "data"
    return Stores(
        LocalStorage(root / "requests"), LocalStorage(root / "results"), LocalStorage(root / "details")
    )


# -- eval_queue list ------------------------------------------------------------------------


def test_list_escapes_control_characters_from_error_text_and_names(stores: Stores) -> None:
    queue = RequestQueue(stores.requests, clock=Clock(T0))
    queue.add(request())
    queue.claim_next("w\x1b]0;owned\x07", lease_s=60)
    queue.fail(
        "org/model_eval_request_main_bfloat16_0shot", "w\x1b]0;owned\x07", "boom \x1b[2J\x1b[31mred\x07 bell"
    )
    stores.requests.write("org/\x1b[2Jevil_eval_request_main_bfloat16_0shot.json", b"{}")
    out = render_listing(queue.listing(), None, T0)
    assert "\x1b" not in out and "\x07" not in out
    assert "error: boom \\x1b[2J\\x1b[31mred\\x07 bell" in out
    assert "org/\\x1b[2Jevil_eval_request_main_bfloat16_0shot.json" in out


def test_an_expired_lease_is_listed_as_expired_with_its_worker_and_lease_time(stores: Stores) -> None:
    clock = Clock(T0)
    queue = RequestQueue(stores.requests, clock=clock)
    queue.add(request())
    claimed = queue.claim_next("gpu-7", lease_s=60)
    assert claimed is not None
    assert queue.listing().state(claimed) is QueueState.RUNNING
    clock.now = T0 + timedelta(minutes=5)
    listing = queue.listing()
    (stale,) = listing.requests
    assert stale.status is Status.RUNNING and listing.state(stale) is QueueState.EXPIRED
    out = render_listing(listing, QueueState.EXPIRED, clock.now)
    assert out.splitlines()[1].startswith("EXPIRED")
    assert "lease of worker gpu-7 expired at 2026-03-01T09:01:00.000Z" in out
    assert "(no RUNNING requests)" in render_listing(listing, QueueState.RUNNING, clock.now)


def test_a_dangling_link_in_the_queue_is_reported_not_skipped(stores: Stores, tmp_path: Path) -> None:
    queue = RequestQueue(stores.requests)
    queue.add(request())
    link = tmp_path / "data" / "requests" / "org" / "gone_eval_request_main_bfloat16_0shot.json"
    os.symlink(tmp_path / "deleted.json", link)
    listing = queue.listing()
    assert [r.model for r in listing.requests] == ["org/model"]
    (problem,) = listing.problems
    assert problem.path == "org/gone_eval_request_main_bfloat16_0shot.json"
    assert "dangling symbolic link" in problem.reason


# -- refusals -----------------------------------------------------------------------------------


def test_a_refusal_never_echoes_a_huge_model_id_in_full(tmp_path: Path) -> None:
    queue = RequestQueue(LocalStorage(tmp_path / "requests"))
    settings = Settings(data_dir=tmp_path, hf_hub_cache=tmp_path / "cache", hf_offline=True)
    huge = "org/" + "m" * 100_000 + "\x1b[2J"
    with pytest.raises(SubmissionRejected) as info:
        submit(
            queue, SubmissionForm(huge), resolver=CacheModelResolver(settings.hf_hub_cache), settings=settings
        )
    message = info.value.message
    assert len(message) < 300 and "… (100,008 characters)" in message and "\x1b" not in message
    assert message.endswith("e.g. HuggingFaceTB/SmolLM2-135M-Instruct.")


# -- the worker re-checks what a request file names ---------------------------------------------


@pytest.mark.parametrize(
    ("model", "revision", "reason"),
    [
        ("org/x,peft=/tmp/adapter", "main", "is not a Hub model id"),
        ("org/x\nrevision=evil", "main", "is not a Hub model id"),
        ("org/x", "main,trust_remote_code=True", "is not a valid revision"),
    ],
)
def test_the_worker_refuses_a_request_file_whose_model_id_could_not_have_been_submitted(
    stores: Stores, model: str, revision: str, reason: str
) -> None:
    queue = RequestQueue(stores.requests)
    edited = EvalRequest(model=model, revision=revision, submitted_time=isoformat(T0))
    stores.requests.write(edited.path, edited.to_json())  # a file edited in the store, at its right place
    ran: list[str] = []

    def evaluate(req: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
        ran.append(req.model)
        raise AssertionError("must not run")

    assert run_once(stores, queue, WorkerConfig(worker_id="w1"), evaluate) is Outcome.FAILED
    assert ran == []
    failed = queue.get(edited.request_id)
    assert failed.status is Status.FAILED and reason in (failed.error or "")


# -- logs -------------------------------------------------------------------------------------


@pytest.fixture
def restore_log_factory() -> Iterator[None]:
    before = logging.getLogRecordFactory()
    yield
    logging.setLogRecordFactory(before)


def test_log_records_and_tracebacks_are_masked_and_printable(restore_log_factory: None) -> None:
    secret = "plain-secret-value"  # not token-shaped: only the configured value can catch it
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    log = logging.getLogger("tests.hardening.redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        install_log_redaction("first-secret")
        install_log_redaction(secret)  # replaces, does not stack
        assert isinstance(logging.getLogRecordFactory(), RedactingRecordFactory)
        assert not isinstance(logging.getLogRecordFactory().base, RedactingRecordFactory)
        log.warning("token %s and %s in \x1b[31m", secret, "hf_AbCdEfGhIjKlMnOp")
        try:
            raise RuntimeError(f"cannot reach https://user:{secret}@hub with hf_QwErTyUiOpAsDf")
        except RuntimeError:
            log.exception("failed with %r", {"token": secret})
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    assert secret not in text and "hf_AbCdEfGhIjKlMnOp" not in text and "hf_QwErTyUiOpAsDf" not in text
    assert (
        "Traceback (most recent call last)" in text
        and "RuntimeError: cannot reach https://user:***@hub" in text
    )
    assert "token *** and hf_*** in \\x1b[31m" in text and "\x1b" not in text


def test_an_entry_point_masks_the_configured_token_in_its_log(tmp_path: Path) -> None:
    token = "configured-token-42"
    requests = tmp_path / "data" / "requests" / "org"
    requests.mkdir(parents=True)
    (requests / f"{token}.json").write_text("{}")  # logged as a malformed file, by name
    env = {
        **os.environ,
        "EVALITA_DATA_DIR": str(tmp_path / "data"),
        "HF_TOKEN": token,
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-m", "eval_queue", "-v", "list"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "skipping malformed request file org/***.json" in done.stderr
    assert token not in done.stderr


@pytest.mark.parametrize("entry", ["eval_queue", "leaderboard", "backend", "app"])
def test_every_entry_point_installs_the_redaction_with_the_configured_secrets(
    entry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restore_log_factory: None
) -> None:
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HF_TOKEN", "the-configured-token")
    logging.setLogRecordFactory(logging.LogRecord)
    match entry:
        case "eval_queue":
            from eval_queue.cli import main

            assert main(["list"]) == 0
        case "leaderboard":
            from leaderboard.__main__ import main

            assert main(["export"]) == 0
        case "backend":
            from backend.__main__ import main

            assert main(["--once", "--worker-id", "t"]) == 0
        case "app":
            import app
            import leaderboard.ui

            class Stop(Exception):
                pass

            def stop(ctx: object) -> None:
                raise Stop

            monkeypatch.setattr(leaderboard.ui, "build_app", stop)
            with pytest.raises(Stop):
                app.main()
    factory = logging.getLogRecordFactory()
    assert isinstance(factory, RedactingRecordFactory) and "the-configured-token" in factory.secrets


# -- results --------------------------------------------------------------------------------


def _results(model: str = "org/model") -> ResultsFile:
    return ResultsFile(
        model=ModelInfo(id=model, revision="abc"),
        run=RunInfo(num_fewshot=0, data="hub", finished_at="2026-03-01T09:00:00Z"),
        tasks={"te": TaskResult(metric="acc", prompts={"p1": PromptScore(score=0.5)})},
    )


def test_a_results_file_with_an_unsupported_fewshot_count_is_reported_as_malformed(stores: Stores) -> None:
    good = json.loads(_results().to_json())
    three = {**good, "model": {**good["model"], "id": "org/three"}, "run": {**good["run"], "num_fewshot": 3}}
    stores.results.write("org/model/results_a_bfloat16_0shot.json", json.dumps(good).encode())
    stores.results.write("org/three/results_a_bfloat16_3shot.json", json.dumps(three).encode())
    loaded = load_results(stores.results)
    assert list(loaded.runs["model"]) == ["org/model"]
    (problem,) = loaded.problems
    assert problem.path == "org/three/results_a_bfloat16_3shot.json"
    assert "num_fewshot must be one of [0, 5], got 3" in problem.reason


def test_a_bad_details_line_makes_the_details_file_malformed() -> None:
    good = b'{"doc_id": 1, "input": "i", "answer": "a", "target": "t"}\n'
    assert [r.doc_id for r in parse_details(good * 2, "d.jsonl")] == [1, 1]
    for bad, reason in (
        (b'{"doc_id": NaN}\n', "line 2: NaN"),
        (b"[" * 50 + b"]" * 50 + b"\n", "line 2: JSON nested 50"),
    ):
        with pytest.raises(MalformedFileError) as info:
            parse_details(good + bad, "d.jsonl")
        assert info.value.path == "d.jsonl" and info.value.reason.startswith(reason)


def test_a_running_request_is_listed_with_its_stage_and_worker(stores: Stores) -> None:
    queue = RequestQueue(stores.requests, clock=Clock(T0))
    queue.add(request())
    claimed = queue.claim_next("gpu-7", lease_s=60)
    assert claimed is not None
    out = render_listing(queue.listing(), None, T0)
    assert "stage: claimed, worker gpu-7" in out
    queue.start(claimed.request_id, "gpu-7", lease_s=60)
    assert "stage: running, worker gpu-7" in render_listing(queue.listing(), None, T0)
