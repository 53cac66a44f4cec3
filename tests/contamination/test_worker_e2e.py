"""End to end, offline: ``eval_queue submit --track contamination`` → ``python -m backend --once`` → store →
export → tab, with the tiny random model on the bundled sample (two sets, cut short)."""

from __future__ import annotations

import json

import pytest

from backend.config import ExitCode
from eval_queue.requests import Status
from eval_queue.settings import Settings
from leaderboard.state import PageState
from leaderboard.tracks.contamination.app.tab import ContaminationTab
from leaderboard.tracks.contamination.schema import CodecDetail, ContaminationResults, OrderDetail
from leaderboard.ui.context import AppContext
from tests.backend.conftest import Deployment
from tests.support.tiny_model import TinyModel

pytestmark = pytest.mark.slow

FAST = (
    "--limit",
    "9",
    "--contamination-sets",
    "te,wic",
    "--contamination-permutations",
    "4",
    "--progress-s",
    "1",
)


def test_a_contamination_request_runs_to_results_details_export_and_tab(
    deployment: Deployment, tiny_model: TinyModel
) -> None:
    submitted = deployment.submit_cli(tiny_model.model_id, tiny_model.revision, "--track", "contamination")
    assert submitted.returncode == 0, submitted.stderr
    [request] = deployment.queue.listing().requests
    assert request.track == "contamination" and request.path.endswith("_contamination.json")

    done = deployment.worker("--once", "--data", "sample", *FAST)

    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    finished = deployment.status(request)
    assert finished.status is Status.FINISHED and finished.results_path
    results = ContaminationResults.from_json(
        deployment.stores.results.read(finished.results_path), finished.results_path
    )
    assert list(results.sets) == ["wic", "te"] and results.run.sets == ["wic", "te"]
    assert (results.run.data, results.run.limit, results.run.order_permutations) == ("sample", 9, 4)
    assert results.run.window_tokens and results.run.cost and results.run.cost.loglikelihood_tokens
    assert not results.comparable
    for set_id, result in results.sets.items():
        assert result.n_items == 9 and result.order and result.codec
        assert (result.order.shards, result.order.permutations) == (3, 4)
        assert 0.0 <= result.order.p_value <= result.order.p_holm <= 1.0
        assert result.codec.n == 9 and result.order.tokens and result.codec.tokens
        order_lines = deployment.stores.details.read(
            f"{results.run.details_path}/order_{set_id}.jsonl"
        ).splitlines()
        shards = [OrderDetail.model_validate_json(line) for line in order_lines]
        assert [(s.start, s.end) for s in shards] == [(0, 3), (3, 6), (6, 9)]
        codec_lines = deployment.stores.details.read(
            f"{results.run.details_path}/codec_{set_id}.jsonl"
        ).splitlines()
        items = [CodecDetail.model_validate_json(line) for line in codec_lines]
        assert sum(i.in_context < i.alone for i in items) == result.codec.drops

    exported = deployment.export("--track", "contamination", "--include-noncomparable", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    rows = json.loads(exported.stdout)
    assert [(r["model"], r["set"]) for r in rows] == [
        (tiny_model.model_id, "WIC"),
        (tiny_model.model_id, "TE"),
    ]

    ctx = AppContext.from_settings(Settings(data_dir=deployment.root))
    rendered = ContaminationTab().render(ctx, PageState(tab="contamination"))
    table = rendered.values["table"].frame
    assert list(table["set"]) == ["WIC", "TE"] and set(table["model"]) == {tiny_model.model_id}
    assert "2 set result(s)" in rendered.values["status"]
