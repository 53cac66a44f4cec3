"""End to end, offline: ``eval_queue submit --track long-context`` → ``python -m backend --once`` → store → export.

The tiny random model sits in a temp hub cache and is submitted by id and sha; the data
are two tiny books (one of 12,000 words, so that the 10K setting and the model's window
both cut it) in a ``local:`` folder.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from backend.config import ExitCode
from backend.tracks.long_context.data import prepare_long_context
from eval_queue.requests import Status
from eval_queue.settings import Settings
from leaderboard.core.items import ITEMS_FILE_NAME, items_from_parquet
from leaderboard.state import PageState
from leaderboard.tracks.long_context.app.tab import LongContextTab
from leaderboard.tracks.long_context.definition import ContextSetting, KeptSide, QuestionSet, harness_tasks
from leaderboard.tracks.long_context.schema import LongContextResults, parse_details
from leaderboard.tracks.long_context.uncertainty import metric_figure
from leaderboard.ui.context import AppContext
from tests.backend.conftest import Deployment
from tests.long_context.books import book_text, passage_book, summary_book, write_books
from tests.support.tiny_model import TinyModel

pytestmark = pytest.mark.slow
SHOW_ALL = ("--include-noncomparable",)

FAST = ("--limit", "10", "--max-gen-toks", "4", "--bootstrap-iters", "0", "--progress-s", "1")


def _submit(deployment: Deployment, tiny_model: TinyModel, *extra: str) -> subprocess.CompletedProcess[str]:
    return deployment.submit_cli(tiny_model.model_id, tiny_model.revision, *extra)


def test_a_long_context_request_runs_to_results_and_details_without_the_book(
    deployment: Deployment, tiny_model: TinyModel, tmp_path: Path
) -> None:
    lib = write_books(tmp_path / "lib", [summary_book("lungo", 12_000), passage_book("passi", 60)])
    done = _submit(deployment, tiny_model, "--track", "long-context")
    assert done.returncode == 0, done.stderr
    [request] = deployment.queue.listing().requests
    assert request.track == "long-context" and request.options.context_settings is None

    done = deployment.worker("--once", "--data", f"local:{lib}", *FAST)

    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    assert "long-context answers: 10k" in done.stderr and "ETA" in done.stderr
    finished = deployment.status(request)
    assert finished.status is Status.FINISHED and finished.results_path
    assert finished.results_path.endswith("_float32_long-context.json")
    results = LongContextResults.from_json(
        deployment.stores.results.read(finished.results_path), finished.results_path
    )
    assert list(results.settings) == list(ContextSetting)
    for setting in ContextSetting:
        assert set(results.settings[setting].sets) == set(QuestionSet)
    assert results.settings[ContextSetting.K10].truncation.words_cut == 2
    assert results.settings[ContextSetting.FULL].truncation.window_cut == 2
    run = results.run
    assert (run.data, run.limit, run.worker_id is not None, results.comparable) == (
        "local:lib",
        10,
        True,
        False,
    )
    # Which data it read: the folder's files' digest (local data is not counted against the paper).
    assert run.data_sha256 == prepare_long_context(f"local:{lib}", tmp_path / "again").revision.sha256
    assert run.data_mismatches is None and run.data_problems
    # The paper's window rule by default: the prompt's end is kept, and recorded so.
    assert (run.kept_side, run.variants) == (KeptSide.END, ())
    assert {body.truncation.kept_side for body in results.settings.values()} == {KeptSide.END}

    assert run.details_path and run.details_path.endswith("_float32_long-context")
    paths = sorted(deployment.stores.details.list(run.details_path))
    items_path = f"{run.details_path}/{ITEMS_FILE_NAME}"
    assert paths == sorted([items_path, *(f"{run.details_path}/{t.name}.jsonl" for t in harness_tasks())])
    paths.remove(items_path)
    # Every mean of the table has its interval, from the run's per-item file.
    items = items_from_parquet(deployment.stores.details.read(items_path))
    assert set(items.tasks) == {t.name for t in harness_tasks()}
    assert results.uncertainty is not None
    for setting, result in results.settings.items():
        for question_set, scores in result.sets.items():
            for metric in ("em", "meteor", "meteor_it", "acc"):
                figure = metric_figure(setting.value, question_set.value, metric)
                has = getattr(scores, metric) is not None
                assert (results.uncertainty.interval(figure) is not None) == has, figure
    # The prompts held the book (12,000 words); the details hold the question, never the book.
    book_sentence = " ".join(book_text(40).split()[10:30])
    for path in paths:
        data = deployment.stores.details.read(path)
        assert book_sentence.encode() not in data and b"FINELIBRO" not in data
        assert len(data) < 20_000, path
        records = parse_details(data, path)
        assert records and all(r.question and r.references for r in records)
    [first] = parse_details(
        deployment.stores.details.read(f"{run.details_path}/indaqa2_local_mc_10k.jsonl"), "x"
    )[:1]
    assert first.choices and first.label == "C" and first.acc in (0.0, 1.0) and first.seen_tokens

    # ... and the export lists it, one row per setting.
    rows = _exported_rows(deployment)
    assert [r["setting"] for r in rows] == ["10k", "50k", "full"]
    assert all(r["model"] == tiny_model.model_id for r in rows)

    # ... and the tab shows it in the Table 5 layout, down to each answer.
    ctx = AppContext(
        settings=Settings(data_dir=deployment.root), stores=deployment.stores, queue=deployment.queue
    )
    state = PageState(tab="long-context", extra=(("lc_set", "local_mc"), ("lc_setting", "full")))
    values = LongContextTab().render(ctx, state).values
    assert tiny_model.model_id in values["table"] and "Full book context" in values["table"]
    assert values["lc_run"].value == finished.results_path
    assert values["status"] == "2 answers" and list(values["answers"].frame["#"]) == [0, 1]


def test_a_long_context_request_for_some_settings_runs_only_those(
    deployment: Deployment, tiny_model: TinyModel, tmp_path: Path
) -> None:
    lib = write_books(tmp_path / "lib", [summary_book("breve", 30), passage_book("passi", 40)])
    assert _submit(deployment, tiny_model, "--track", "long-context", "--context", "full,10k").returncode == 0
    [request] = deployment.queue.listing().requests

    done = deployment.worker("--once", "--data", f"local:{lib}", *FAST)

    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    finished = deployment.status(request)
    assert finished.results_path and finished.results_path.endswith("_long-context-10k-full.json")
    results = LongContextResults.from_json(
        deployment.stores.results.read(finished.results_path), finished.results_path
    )
    assert list(results.settings) == [ContextSetting.K10, ContextSetting.FULL]


def test_missing_long_context_data_claims_nothing(
    deployment: Deployment, tiny_model: TinyModel, tmp_path: Path
) -> None:
    empty = tmp_path / "nobooks"
    empty.mkdir()
    assert _submit(deployment, tiny_model, "--track", "long-context").returncode == 0
    [request] = deployment.queue.listing().requests

    done = deployment.worker("--once", "--data", f"local:{empty}", *FAST)

    assert done.returncode == ExitCode.DATA_UNAVAILABLE, done.stderr[-3000:]
    assert "nothing claimed" in done.stderr
    assert deployment.status(request).status is Status.PENDING


def test_a_worker_keeping_the_books_start_records_and_labels_a_variant(
    deployment: Deployment, tiny_model: TinyModel, tmp_path: Path
) -> None:
    lib = write_books(tmp_path / "lib", [summary_book("lungo", 12_000), passage_book("passi", 40)])
    assert _submit(deployment, tiny_model, "--track", "long-context", "--context", "10k").returncode == 0
    [request] = deployment.queue.listing().requests

    done = deployment.worker("--once", "--data", f"local:{lib}", "--long-context-keep", "start", *FAST)

    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    finished = deployment.status(request)
    assert finished.results_path
    results = LongContextResults.from_json(
        deployment.stores.results.read(finished.results_path), finished.results_path
    )
    assert results.run.kept_side is KeptSide.START
    assert results.settings[ContextSetting.K10].truncation.kept_side is KeptSide.START
    assert results.run.variants == ("window keeps the start",) and not results.comparable
    [row] = _exported_rows(deployment)
    assert (row["variant"], row["kept_side"], row["comparable"]) == ("window keeps the start", "start", False)
    ctx = AppContext(
        settings=Settings(data_dir=deployment.root), stores=deployment.stores, queue=deployment.queue
    )
    values = LongContextTab().render(ctx, PageState(tab="long-context")).values
    assert "window keeps the start" in values["table"]


def _exported_rows(deployment: Deployment) -> list[dict[str, object]]:
    """``leaderboard export --track=long-context --format=json`` (every run) on the deployment's store."""
    exported = deployment.export("--track=long-context", "--format=json", *SHOW_ALL)
    assert exported.returncode == 0, exported.stderr
    return json.loads(exported.stdout)
