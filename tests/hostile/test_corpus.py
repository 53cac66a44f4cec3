"""Every hostile file through every reader: named and skipped, or served safely; the good ones always served.

Requests go through ``eval_queue list``, one claim, the worker's serve-loop polls (``run_once``
with a stand-in evaluator, until nothing is left), the app's queue view and ``cancel``; results
through ``load_results``, ``leaderboard export`` and the app context's snapshot; details files
through the details reader.  Afterwards every malformed file still holds its exact bytes.

Each case's checks are tallied rather than asserted one by one, so that a run prints how many
files of each kind were tried and how many held (``pytest -s``), then fails if any did not.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from backend.tracks import RunContext
from backend.worker import Evaluation, Outcome, WorkerConfig, run_once
from eval_queue.cli import main as queue_main
from eval_queue.errors import MalformedFileError
from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, Status, isoformat
from eval_queue.safe_json import DETAILS_FILE_MAX_BYTES
from eval_queue.settings import Settings
from eval_queue.storage import Stores, open_stores
from eval_queue.text import printable
from leaderboard.__main__ import main as leaderboard_main
from leaderboard.core.schema import RunInfo
from leaderboard.tracks.evalita.app.records import load_results
from leaderboard.tracks.evalita.app.views import current_board, queue_view
from leaderboard.tracks.evalita.schema import PromptScore, TaskResult, parse_details
from leaderboard.ui.context import AppContext
from leaderboard.views.common import md_text
from tests.hostile.corpus import (
    DETAILS_CASES,
    GOOD_DETAILS,
    GOOD_LINE,
    GOOD_REQUESTS,
    GOOD_RESULTS,
    REQUEST_CASES,
    RESULTS_CASES,
    Case,
    Expect,
)
from tests.queue.conftest import FAKE_TOKEN, REQUESTS_REPO, RESULTS_REPO
from tests.queue.fake_hub import FakeHub

CONTROL = ("\x1b", "\x07", "\x00")


@dataclass
class Tally:
    """Per case: the checks that failed; per kind: tried and held."""

    label: str
    cases: list[Case] = field(default_factory=list)
    failures: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def check(self, case: Case, ok: bool, what: str) -> None:
        if not ok:
            self.failures[case.name].append(what)

    def report(self) -> str:
        kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for case in self.cases:
            kinds[case.kind][0] += 1
            kinds[case.kind][1] += case.name not in self.failures
        lines = [f"{self.label}: kind — tried / held"]
        lines += [f"  {kind:<20} {tried:>3} / {held}" for kind, (tried, held) in sorted(kinds.items())]
        total = len(self.cases)
        lines.append(f"  {'total':<20} {total:>3} / {total - len(self.failures)}")
        return "\n".join(lines)

    def assert_all_held(self) -> None:
        print("\n" + self.report())
        assert not self.failures, dict(self.failures)


@dataclass
class Deployment:
    stores: Stores
    settings: Settings
    label: str
    root: Path  # local: the data dir; hub: unused for files


def _deploy(
    backend: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    files: dict[str, dict[str, bytes]],
    cases: dict[str, Iterable[Case]],
) -> tuple[Deployment, list[Case]]:
    """Write ``files`` and ``cases`` into the three stores; returns the cases this backend can hold."""
    data = tmp_path / "data"
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.setenv("EVALITA_DATA_DIR", str(data))
    kept: list[Case] = []
    if backend == "local":
        for store, content in files.items():
            for path, payload in content.items():
                _write_raw(data / store / path, payload)
        for store, store_cases in cases.items():
            (data / store).mkdir(parents=True, exist_ok=True)
            for case in store_cases:
                if case.make is not None:
                    case.make(data / store, outside)
                else:
                    _write_raw(data / store / case.path, case.content or b"")
                kept.append(case)
    else:
        hub: FakeHub = request.getfixturevalue("fake_hub")
        repos = {"requests": {}, "results": {}}
        for store, content in files.items():
            prefix = "details/" if store == "details" else ""
            repos["results" if store != "requests" else "requests"].update(
                {prefix + p: b for p, b in content.items()}
            )
        for store, store_cases in cases.items():
            prefix = "details/" if store == "details" else ""
            for case in store_cases:
                if not case.local_only:
                    repos["results" if store != "requests" else "requests"][prefix + case.path] = (
                        case.content or b""
                    )
                    kept.append(case)
        hub.repos[("datasets", REQUESTS_REPO)].commit(repos["requests"])
        hub.repos[("datasets", RESULTS_REPO)].commit(repos["results"])
        for name, value in {
            "EVALITA_REQUESTS_REPO": REQUESTS_REPO,
            "EVALITA_RESULTS_REPO": RESULTS_REPO,
            "HF_ENDPOINT": hub.url,
            "HF_TOKEN": FAKE_TOKEN,
        }.items():
            monkeypatch.setenv(name, value)
    settings = Settings.from_env()
    return Deployment(open_stores(settings), settings, backend, data), kept


def _write_raw(path: Path, payload: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(payload)


def _snapshot(deployment: Deployment, store: str, cases: Iterable[Case]) -> dict[str, object]:
    """What each malformed entry is now: its bytes, or what a link points to, or that it is a FIFO."""
    seen: dict[str, object] = {}
    for case in cases:
        if case.expect is not Expect.MALFORMED:
            continue
        if deployment.label == "local":
            full = deployment.root / store / case.path
            seen[case.path] = (
                os.readlink(full) if full.is_symlink() else ("fifo" if case.make else full.read_bytes())
            )
        else:
            seen[case.path] = getattr(deployment.stores, store).read(case.path)
    return seen


def _evaluation(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
    finished = isoformat(datetime.now(UTC))
    return Evaluation(
        RunInfo(num_fewshot=request.num_fewshot, data="sample", finished_at=finished),
        {"tasks": {"te": TaskResult(metric="acc", prompts={"p1": PromptScore(score=0.5, n=4)})}},
        {"te_p1.jsonl": GOOD_LINE},
    )


# -- requests --------------------------------------------------------------------------------


def test_every_hostile_request_file_is_named_and_skipped_and_the_good_ones_are_served(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, capsys
) -> None:
    deployment, cases = _deploy(
        backend, tmp_path, monkeypatch, request, {"requests": GOOD_REQUESTS}, {"requests": REQUEST_CASES}
    )
    tally = Tally(f"requests on the {backend} store", cases)
    malformed = {c.path: c for c in cases if c.expect is Expect.MALFORMED}
    before = _snapshot(deployment, "requests", cases)

    # eval_queue list
    assert queue_main(["list"]) == 0
    out = capsys.readouterr().out
    assert not any(char in out for char in CONTROL), "list printed a control character"
    for case in cases:
        shown = printable(" ".join(case.path.split()), keep_newlines=False)
        if case.expect is Expect.MALFORMED:
            tally.check(case, shown in out, "list does not name it")

    # the queue's own listing: exactly the malformed files are problems, each with its reason
    queue = RequestQueue(deployment.stores.requests)
    listing = queue.listing()
    problems = {p.path: p for p in listing.problems}
    assert set(problems) == set(malformed), set(problems) ^ set(malformed)
    served = {r.request_id for r in listing.requests}
    for case in cases:
        if case.expect is Expect.MALFORMED:
            tally.check(
                case, case.reason in problems[case.path].reason, f"reason {problems[case.path].reason!r}"
            )
            tally.check(case, len(problems[case.path].reason) <= 600, "reason not clipped")
        else:
            tally.check(case, case.path.removesuffix(".json") in served, "not served")

    # one claim: the oldest good request, whatever else is in the queue
    claimed = queue.claim_next("claimer", lease_s=60)
    assert claimed is not None and claimed.model == "org/good-a"
    queue.finish(claimed.request_id, "claimer", "org/good-a/results.json")

    # the serve loop's polls, until nothing is left to do
    outcomes = []
    for _ in range(40):
        outcome = run_once(
            deployment.stores, queue, WorkerConfig(worker_id="poller", lease_s=60), _evaluation
        )
        outcomes.append(outcome)
        if outcome is Outcome.NOTHING:
            break
    assert outcomes[-1] is Outcome.NOTHING and Outcome.STORE_UNAVAILABLE not in outcomes
    final = {r.request_id: r for r in queue.listing().requests}
    assert final["org/good-b_eval_request_main_bfloat16_0shot"].status is Status.FINISHED
    for case in cases:
        rid = case.path.removesuffix(".json")
        if case.expect is Expect.SERVED and case.final_status:
            tally.check(
                case, final[rid].status.value == case.final_status, f"ended {final[rid].status.value}"
            )
        elif case.expect is Expect.REFUSED_AT_RUN:
            ok = final[rid].status is Status.FAILED and case.reason in (final[rid].error or "")
            tally.check(
                case, ok, f"the worker did not refuse it: {final[rid].status.value} {final[rid].error!r}"
            )

    # the app's queue view names every malformed file
    ctx = AppContext(deployment.settings, deployment.stores, queue)
    view = queue_view(ctx.queue_listing(), ctx.now())
    for case in malformed.values():
        tally.check(case, md_text(case.path) in view.problems, "the queue view does not name it")

    # a maintainer's cancel of a malformed request is refused with a reason, never a crash
    for case in malformed.values():
        if case.path.endswith(".json"):
            code = queue_main(["cancel", case.path.removesuffix(".json")])
            tally.check(case, code == 2, f"cancel exited {code}")
    capsys.readouterr()

    # never rewritten
    after = _snapshot(deployment, "requests", cases)
    for path, case in malformed.items():
        tally.check(case, after[path] == before[path], "rewritten")
    tally.assert_all_held()


# -- results and details ---------------------------------------------------------------------


def test_every_hostile_results_and_details_file_is_named_and_skipped_and_the_ranking_still_served(
    backend: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    capsys,
    caplog,
) -> None:
    deployment, cases = _deploy(
        backend,
        tmp_path,
        monkeypatch,
        request,
        {"results": GOOD_RESULTS, "details": {GOOD_DETAILS: GOOD_LINE * 3}},
        {"results": RESULTS_CASES, "details": DETAILS_CASES},
    )
    results_cases = [c for c in cases if c in RESULTS_CASES]
    details_cases = [c for c in cases if c in DETAILS_CASES]
    tally = Tally(f"results and details on the {backend} store", cases)
    malformed = {c.path: c for c in results_cases if c.expect is Expect.MALFORMED}
    before = _snapshot(deployment, "results", results_cases)

    # the loader
    loaded = load_results(deployment.stores.results)
    problems = {p.path: p for p in loaded.problems}
    assert set(problems) == set(malformed), set(problems) ^ set(malformed)
    kept = set(loaded.runs["results_path"])
    assert {*GOOD_RESULTS} <= kept
    for case in results_cases:
        if case.expect is Expect.MALFORMED:
            tally.check(
                case, case.reason in problems[case.path].reason, f"reason {problems[case.path].reason!r}"
            )
        else:
            tally.check(case, case.path in kept or case.path in loaded.superseded, "not served")

    # leaderboard export: the ranking of the good runs, a warning naming each bad file
    caplog.clear()
    assert leaderboard_main(["export", "--format", "json"]) == 0
    rows = {row["model"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["org/good-a"]["rank"] == 1 and rows["org/good-a"]["avg_cps"] == 60.0
    assert rows["org/good-b"]["avg_cps"] == 40.0
    warnings = caplog.text
    for case in malformed.values():
        tally.check(case, printable(case.path) in warnings, "export's warnings do not name it")

    # the app's snapshot: the same problems, the ranking still there
    ctx = AppContext(deployment.settings, deployment.stores, RequestQueue(deployment.stores.requests))
    board = current_board(ctx)
    assert {p.path for p in board.problems} == set(malformed)
    assert {"org/good-a", "org/good-b"} <= set(board.rows(0)["model"])

    # details: the good file reads, every bad one is refused by name; a crafted details_path cannot escape
    details = deployment.stores.details
    assert len(parse_details(details.read(GOOD_DETAILS, max_bytes=DETAILS_FILE_MAX_BYTES), GOOD_DETAILS)) == 3
    for case in details_cases:
        try:
            parse_details(details.read(case.path, max_bytes=DETAILS_FILE_MAX_BYTES), case.path)
        except MalformedFileError as exc:
            tally.check(case, exc.path == case.path and case.reason in exc.reason, f"reason {exc.reason!r}")
        else:
            tally.check(case, False, "read as good")
    with pytest.raises(MalformedFileError, match="not a safe store path"):
        details.read("../../../etc/te_p1.jsonl")

    # never rewritten
    after = _snapshot(deployment, "results", results_cases)
    for path, case in malformed.items():
        tally.check(case, after[path] == before[path], "rewritten")
    tally.assert_all_held()
