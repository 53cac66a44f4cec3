"""Plan a model's ``.eval_results`` files from the store, print them, write them, or open a PR with them."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

from eval_queue.errors import EvalitaError, MalformedFileError, NotFoundError
from eval_queue.safe_json import RESULTS_LIMITS
from eval_queue.storage.base import Storage
from eval_queue.storage.paths import results_files
from eval_queue.tracks import TrackRegistry, track_registry
from eval_queue.vocabulary import RunRef
from leaderboard.core.contents_io import parse_results
from leaderboard.hub_results.model import HubRun, TrackHubResults

logger = logging.getLogger(__name__)

SOURCE_NAME = "Evalita-LLM Leaderboard"
EVAL_RESULTS_FOLDER = ".eval_results"
HUB_URL = "https://huggingface.co"


class NoComparableRuns(EvalitaError):
    """The model has no run the Hub's page should show (none is a full run on the official data)."""


@dataclass(frozen=True)
class RunLinks:
    """Where a run can be seen: the Space's model page, else the results file in the results repo.

    Without either (a local store), the results file's own path as a ``file:`` URI: honest, and
    replaced by a public link once the store is the public one.
    """

    space_url: str | None = None
    results_repo: str | None = None
    hub_endpoint: str | None = None
    local_root: Path | None = None

    def url(self, results: Any, path: str) -> str:
        if self.space_url:
            key = RunRef(results.model.id, results.model.revision, results.model.precision).key
            return f"{self.space_url.rstrip('/')}/?tab=model&model={quote(key, safe='')}"
        if self.results_repo:
            return f"{(self.hub_endpoint or HUB_URL).rstrip('/')}/datasets/{self.results_repo}/blob/main/{quote(path)}"
        root = (self.local_root or Path("results")).resolve()
        return (root / path).as_uri()


@dataclass(frozen=True)
class HubResultsPlan:
    """What would go to the model repo: ``files`` (repo path → YAML text), the runs behind them, the PR text."""

    model: str
    files: dict[str, str]
    runs: tuple[HubRun, ...]
    title: str
    description: str
    problems: tuple[MalformedFileError, ...] = field(default_factory=tuple)


def _dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def comparable_runs(
    results: Storage,
    model_id: str,
    links: RunLinks,
    registry: TrackRegistry,
    include_noncomparable: bool = False,
) -> tuple[dict[str, list[HubRun]], list[MalformedFileError]]:
    """The model's comparable runs by track, newest first, and the files that could not be read.

    ``include_noncomparable``: every run (a demo's sample-data run, to see the files); the
    pull request refuses those (:func:`open_pull_request`).
    """
    by_track: dict[str, list[HubRun]] = {}
    problems: list[MalformedFileError] = []
    for path in results_files(results, f"{model_id}/"):
        try:
            parsed = parse_results(results.read(path, max_bytes=RESULTS_LIMITS.max_bytes), path, registry)
        except NotFoundError:
            continue
        except MalformedFileError as exc:
            problems.append(exc)
            continue
        if parsed is None or parsed.model.id != model_id or not (parsed.comparable or include_noncomparable):
            continue
        by_track.setdefault(parsed.track, []).append(HubRun(parsed, path, links.url(parsed, path)))
    for runs in by_track.values():
        runs.sort(key=lambda run: run.results.run.finished_at or "", reverse=True)
    return by_track, problems


def plan(
    results: Storage,
    model_id: str,
    links: RunLinks,
    registry: TrackRegistry | None = None,
    *,
    include_noncomparable: bool = False,
) -> HubResultsPlan:
    """The ``.eval_results`` files of ``model_id`` and the PR's text; :class:`NoComparableRuns` if none."""
    registry = registry or track_registry()
    by_track, problems = comparable_runs(results, model_id, links, registry, include_noncomparable)
    files: dict[str, str] = {}
    used: list[HubRun] = []
    sources: list[str] = []
    for spec in registry:
        part: TrackHubResults | None = spec.load("hub_results")
        runs = by_track.get(spec.name, [])
        if part is None or not runs:
            continue
        for name, entries in part.files(runs).items():
            files[f"{EVAL_RESULTS_FOLDER}/{name}"] = _dump(
                [e.as_yaml(part.dataset_id, SOURCE_NAME) for e in entries]
            )
        used += runs
        sources.append(f"`{part.dataset_id}` ({spec.label})")
    if not files:
        raise NoComparableRuns(
            f"{model_id} has no comparable run (a full run on the official data) in the results store: "
            "the Hub's page shows only those; submit one with --data hub, or check the model id"
        )
    return HubResultsPlan(model_id, files, tuple(used), *_pr_text(model_id, used, sources), tuple(problems))


def _pr_text(model_id: str, runs: Sequence[HubRun], sources: Sequence[str]) -> tuple[str, str]:
    title = f"Add Evalita-LLM evaluation results ({SOURCE_NAME})"
    lines = [
        f"This pull request adds the scores of `{model_id}` on {', '.join(sources)} to `.eval_results/`, "
        "so that they show on this model's page (Hugging Face's eval results).",
        "",
        f"**Where the numbers come from.** The {SOURCE_NAME} evaluated the model with "
        "lm-evaluation-harness on the official Evalita-LLM data, every task under every prompt; each value "
        "is the leaderboard's own figure (0–100, two decimals): a task's Combined Performance Score "
        "CPS = (1 − (MaxP − AvgP)) · MaxP over its prompts, and the mean CPS over the ten tasks. Each "
        "entry's notes give its 95 % interval (a paired bootstrap over the test items) where the run has "
        "one. Only comparable runs (full runs on the official data) are included.",
        "",
        "**The runs:**",
    ]
    for run in runs:
        r = run.results
        lines.append(
            f"- {r.track}, {r.run.num_fewshot}-shot, revision `{r.model.revision[:12]}` ({r.model.precision}), "
            f"finished {r.run.finished_at or '?'}: {run.url} (results file `{run.path}`)"
        )
    lines += ["", "Nothing else in the repository is changed. Merge it, edit it or close it as you see fit."]
    return title, "\n".join(lines) + "\n"


def write_files(plan_: HubResultsPlan, out: Path) -> list[Path]:
    """Write the plan's files under ``out`` (``out/.eval_results/…``)."""
    written = []
    for relative, text in plan_.files.items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def open_pull_request(api: Any, plan_: HubResultsPlan) -> str:
    """Open a pull request on the model repo with the files (``create_pr=True``: never a direct commit).

    Returns the PR's URL.  Hub errors propagate (the caller reports them).
    """
    from huggingface_hub import CommitOperationAdd

    if not all(run.results.comparable for run in plan_.runs):
        raise EvalitaError("only comparable runs go to a model's page: drop --include-noncomparable")
    operations = [
        CommitOperationAdd(path_in_repo=path, path_or_fileobj=text.encode("utf-8"))
        for path, text in plan_.files.items()
    ]
    info = api.create_commit(
        repo_id=plan_.model,
        repo_type="model",
        operations=operations,
        commit_message=plan_.title,
        commit_description=plan_.description,
        create_pr=True,
    )
    if not info.pr_url:  # a hub that ignored create_pr would have committed to main: say so loudly
        raise EvalitaError(f"the hub answered without a pull request for {plan_.model} (commit {info.oid})")
    return str(info.pr_url)


def eval_yaml_files(registry: TrackRegistry | None = None) -> dict[str, str]:
    """Each registered benchmark's ``eval.yaml``: dataset id → YAML text."""
    out = {}
    for spec in registry or track_registry():
        part: TrackHubResults | None = spec.load("hub_results")
        if part is not None:
            out[part.dataset_id] = _dump(part.eval_yaml())
    return out
