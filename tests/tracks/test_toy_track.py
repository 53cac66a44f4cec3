"""A fourth track, added by registering one spec: submitted, run by the worker, exported, rendered.

The toy track (``tests/support/toy_track``) is a package of its own registered the way a
maintainer adds one (``EVALITA_EXTRA_TRACKS``): nothing of the project names it, and no other
track's code knows it.  Every step goes through the real command lines and the real page: the
worker in its own process, submit and export through their ``main`` in this one (the ``toy_track``
fixture registers the track here too).
"""

from __future__ import annotations

import json
import subprocess

from eval_queue.requests import Status
from eval_queue.settings import Settings
from eval_queue.tracks import EXTRA_TRACKS_ENV
from leaderboard.state import PageState
from leaderboard.ui.context import AppContext
from leaderboard.ui.registry import default_registry
from leaderboard.ui.submit import form_options
from tests.backend.conftest import Deployment
from tests.support.tiny_model import TinyModel
from tests.support.toy_track import REGISTRATION
from tests.support.toy_track.schema import ToyResults


def _export(deployment: Deployment, *args: str) -> subprocess.CompletedProcess[str]:
    return deployment.export("--track", "toy", *args)


def test_a_fourth_track_is_submitted_run_exported_and_rendered(
    deployment: Deployment, tiny_model: TinyModel, toy_track: object
) -> None:
    deployment.env[EXTRA_TRACKS_ENV] = REGISTRATION
    model = tiny_model.model_id

    # Submitted: the command line knows its track and its option, from its spec alone.
    submitted = deployment.submit_cli(model, tiny_model.revision, "--track", "toy", "--flavour", "spicy")
    assert submitted.returncode == 0, submitted.stderr
    [request] = deployment.queue.listing().requests
    assert (request.track, request.variant) == ("toy", "spicy")
    assert request.path.endswith("_toy-spicy.json")
    # ... and refuses what is not its own.
    refused = deployment.submit_cli(model, tiny_model.revision, "--track", "toy", "--context", "10k")
    assert refused.returncode != 0 and "context_settings belongs to the long-context track" in refused.stderr

    # Run by the worker, with the worker option the spec adds; the worker stamps the provenance.
    worker = deployment.worker("--once", "--toy-wait-s", "0", "--worker-id", "toy-worker")
    assert worker.returncode == 0, worker.stdout + worker.stderr
    done = deployment.status(request)
    assert (
        done.status is Status.FINISHED and done.results_path and done.results_path.endswith("_toy-spicy.json")
    )
    results = ToyResults.from_json(deployment.stores.results.read(done.results_path), done.results_path)
    assert results.score == len(model) / 100 and results.model.id == model
    assert (results.run.request_id, results.run.worker_id) == (request.request_id, "toy-worker")
    assert results.run.details_path and deployment.stores.details.read(
        f"{results.run.details_path}/answers.jsonl"
    )

    # Exported: one CSV row, hidden by default (sample data) and said so on stderr.
    hidden = _export(deployment)
    assert hidden.returncode == 0 and "left out" in hidden.stderr and model not in hidden.stdout
    shown = _export(deployment, "--include-noncomparable", "--format", "json")
    assert shown.returncode == 0, shown.stderr
    [row] = json.loads(shown.stdout)
    assert (row["model"], row["score"], row["worker"]) == (model, round(len(model), 2), "toy-worker")

    # Rendered: its tab is on the page, its About section too, its option on the submit form.
    ctx = AppContext.from_settings(Settings(data_dir=deployment.root))
    registry = default_registry()
    [tab] = [t for t in registry.tabs if t.id == "toy"]
    table = tab.render(ctx, PageState(tab="toy")).values["scores"]
    assert list(table.frame["model"]) == [model]
    about = registry.tabs[-1]
    assert any("Toy track" in section() for section in about.sections)
    assert [
        (spec.name, option.key) for spec, option in form_options(ctx.registry.specs()) if spec.name == "toy"
    ] == [("toy", "flavour")]
