"""``python -m leaderboard hub-results``: a model's .eval_results files from its comparable runs, printed,
written, or sent as a pull request (never a direct commit) to the fake hub; the benchmark's eval.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from eval_queue.storage import LocalStorage
from leaderboard.__main__ import main as leaderboard_main
from leaderboard.export import ExportOptions
from leaderboard.hub_results.publish import NoComparableRuns, RunLinks, eval_yaml_files, plan
from leaderboard.store import read_results_store
from leaderboard.tracks.evalita.app.export import export_results
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.tracks.evalita.hub_results import DATASET_ID
from tests.contents.store import write_every_track
from tests.queue.conftest import FAKE_TOKEN
from tests.queue.fake_hub import FakeHub
from tests.ui.store import SAMPLE_MODEL

MODEL = "bench-org-0/model-0000"  # a synthetic comparable model with intervals, 0- and 5-shot
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    write_every_track(tmp_path / "store")
    return tmp_path / "store"


def _entries(text: str) -> list[dict]:
    return yaml.safe_load(text)


def test_each_setting_is_one_file_with_the_mean_and_task_cps_the_board_shows(store: Path) -> None:
    planned = plan(LocalStorage(store / "results"), MODEL, RunLinks(space_url="https://example.org/board"))
    assert sorted(planned.files) == [
        ".eval_results/evalita-llm_0shot.yaml",
        ".eval_results/evalita-llm_5shot.yaml",
    ]
    table = export_results(
        read_results_store(LocalStorage(store / "results")).of("evalita"), ExportOptions()
    ).table
    tasks_of_benchmark = {t["id"] for t in yaml.safe_load(eval_yaml_files()[DATASET_ID])["tasks"]}
    checked = 0
    for k in (0, 5):
        row = table[(table["model"] == MODEL) & (table["num_fewshot"] == k)].iloc[0]
        entries = {
            e["dataset"]["task_id"]: e
            for e in _entries(planned.files[f".eval_results/evalita-llm_{k}shot.yaml"])
        }
        assert len(entries) == 1 + len(SUITE)
        assert set(entries) <= tasks_of_benchmark
        assert entries[f"mean_cps_{k}shot"]["value"] == pytest.approx(row["avg_cps"])
        assert f"{row['avg_cps_low']:.2f}–{row['avg_cps_high']:.2f}" in entries[f"mean_cps_{k}shot"]["notes"]
        for task in SUITE:
            entry = entries[f"{task.id}_cps_{k}shot"]
            assert entry["dataset"]["id"] == DATASET_ID
            assert entry["value"] == pytest.approx(row[f"{task.id}_cps"])
            assert f"{row[f'{task.id}_cps_low']:.2f}–{row[f'{task.id}_cps_high']:.2f}" in entry["notes"]
            assert entry["source"]["url"].startswith(
                "https://example.org/board/?tab=model&model=bench-org-0%2Fmodel-0000"
            )
            checked += 1
    assert checked == 2 * len(SUITE)
    assert "Where the numbers come from" in planned.description and "results_" in planned.description


def test_a_model_without_comparable_runs_is_refused_and_a_look_at_its_files_says_not_comparable(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(NoComparableRuns, match="no comparable run"):
        plan(LocalStorage(store / "results"), SAMPLE_MODEL, RunLinks())
    monkeypatch.setenv("EVALITA_DATA_DIR", str(store))
    assert leaderboard_main(["hub-results", SAMPLE_MODEL, "--dry-run"]) == 1
    assert leaderboard_main(["hub-results", SAMPLE_MODEL, "--dry-run", "--include-noncomparable"]) == 0
    shown = capsys.readouterr().out
    assert "NOT COMPARABLE (data: sample" in shown and "mean_cps_0shot" in shown
    assert leaderboard_main(["hub-results", SAMPLE_MODEL, "--open-pr", "--include-noncomparable"]) == 2


def test_a_dry_run_prints_the_files_and_the_pull_request_and_writes_nothing(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EVALITA_DATA_DIR", str(store))
    out = tmp_path / "out"
    assert leaderboard_main(["hub-results", MODEL, "--dry-run", "--out", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "--- .eval_results/evalita-llm_0shot.yaml" in shown and "--- pull request:" in shown
    assert not out.exists()
    assert leaderboard_main(["hub-results", MODEL, "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / ".eval_results").iterdir()) == [
        "evalita-llm_0shot.yaml",
        "evalita-llm_5shot.yaml",
    ]


def test_open_pr_opens_a_pull_request_on_the_fake_hub_and_never_commits_to_main(
    store: Path, fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = fake_hub.add_repo("models", MODEL, {"config.json": b"{}"})
    head = repo.head
    monkeypatch.setenv("EVALITA_DATA_DIR", str(store))
    monkeypatch.setenv("HF_ENDPOINT", fake_hub.url)
    monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)
    assert (
        leaderboard_main(["hub-results", MODEL, "--open-pr", "--space-url", "https://example.org/board"]) == 0
    )
    said = capsys.readouterr()
    assert "pull request opened:" in said.out and FAKE_TOKEN not in said.out + said.err
    assert repo.head == head and repo.files == {"config.json": b"{}"}  # main untouched
    (pr,) = repo.pull_requests
    assert sorted(pr["files"]) == [
        ".eval_results/evalita-llm_0shot.yaml",
        ".eval_results/evalita-llm_5shot.yaml",
    ]
    assert pr["title"].startswith("Add Evalita-LLM evaluation results")
    assert (
        "Where the numbers come from" in pr["description"]
        and "https://example.org/board" in pr["description"]
    )
    entries = _entries(pr["files"][".eval_results/evalita-llm_0shot.yaml"].decode())
    assert entries[0]["dataset"] == {"id": DATASET_ID, "task_id": "mean_cps_0shot"}


def test_open_pr_needs_a_token_and_reports_a_refusal(
    store: Path, fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("EVALITA_DATA_DIR", str(store))
    monkeypatch.setenv("HF_ENDPOINT", fake_hub.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert leaderboard_main(["hub-results", MODEL, "--open-pr"]) == 2
    monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)
    # No such model repo on the hub: the refusal is reported, nothing else happens.
    assert leaderboard_main(["hub-results", MODEL, "--open-pr"]) == 1
    assert "refused the pull request" in caplog.text and FAKE_TOKEN not in caplog.text


def test_the_published_eval_yaml_is_the_one_the_suite_generates() -> None:
    committed = (REPO_ROOT / "docs" / "hub" / "evalita-llm" / "eval.yaml").read_text(encoding="utf-8")
    assert committed == eval_yaml_files()[DATASET_ID]
    tasks = yaml.safe_load(committed)["tasks"]
    assert len(tasks) == 2 * (1 + len(SUITE)) and len({t["id"] for t in tasks}) == len(tasks)


def test_a_dry_run_of_open_pr_prints_the_request_and_sends_nothing(
    store: Path, fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = fake_hub.add_repo("models", MODEL, {"config.json": b"{}"})
    monkeypatch.setenv("EVALITA_DATA_DIR", str(store))
    monkeypatch.setenv("HF_ENDPOINT", fake_hub.url)
    monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)
    assert leaderboard_main(["hub-results", MODEL, "--open-pr", "--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert f"# would open a pull request on {MODEL}: 2 file(s)" in shown
    assert repo.pull_requests == [] and sum(fake_hub.requests_seen.values()) == 0
