"""``python -m leaderboard export`` run as a maintainer would, on a store of the paper's runs.

Most tests call the entry point's ``main`` in this process (:func:`_export`, through
``tests.support.entry_point.run_main``): the same arguments, environment, standard output,
standard error and exit code, without an interpreter start and its imports for each export.  The paper's figures and the missing sub-command go through the real command line
(:func:`_export_process`).
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.core.schema import results_file_path
from tests.paper_tables import write_paper_store
from tests.support.entry_point import run_main

REPO_ROOT = Path(__file__).resolve().parents[2]


HUB_VARIABLES = ("EVALITA_REQUESTS_REPO", "EVALITA_RESULTS_REPO", "HF_TOKEN")


def _env(data_dir: Path) -> dict[str, str]:
    env = {**os.environ, "EVALITA_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPO_ROOT)}
    for hub_variable in HUB_VARIABLES:
        env.pop(hub_variable, None)
    return env


def _export(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``main(["export", *args])`` in this process, as ``python -m leaderboard export`` runs it."""
    from leaderboard.__main__ import main

    return run_main(main, ["export", *args], _env(data_dir))


def _export_process(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m leaderboard export`` in a process of its own: the real command line."""
    env = _env(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "leaderboard", "export", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    write_paper_store(tmp_path / "results")
    # A malformed file next to the good ones: reported on stderr, never fatal.
    broken = tmp_path / "results" / "broken" / "model" / "results_2025-02-01T00-00-00Z.json"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"schema": "evalita-llm-results/1", "model": ')
    return tmp_path


def test_export_json_reproduces_the_papers_figures(data_dir: Path) -> None:
    done = _export_process(data_dir, "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = {(row["model"], row["num_fewshot"]): row for row in json.loads(done.stdout)}
    assert len(rows) == 12
    assert "broken/model/results_2025-02-01T00-00-00Z.json" in done.stderr

    llm5_zero = rows[("paper-dev/LLM-5", 0)]
    assert (llm5_zero["rank"], llm5_zero["avg_cps"]) == (1, 45.57)
    assert (llm5_zero["te_maxp"], llm5_zero["te_avgp"], llm5_zero["te_cps"]) == (78.75, 70.08, 71.93)
    assert llm5_zero["te_best_prompt"] == "p2"
    llm2_few = rows[("paper-dev/LLM-2", 5)]
    assert (llm2_few["rank"], llm2_few["avg_cps"]) == (1, 54.00)
    assert (llm2_few["ner_maxp"], llm2_few["ner_avgp"], llm2_few["ner_cps"]) == (80.27, 74.55, 75.67)

    # Summarization is N/A for LLM-1 few-shot: no task score and no overall score, not 0.
    llm1_few = rows[("paper-dev/LLM-1", 5)]
    assert llm1_few["avg_cps"] is None and llm1_few["rank"] is None
    assert (
        llm1_few["sum_maxp"] is None and llm1_few["sum_cps"] is None and llm1_few["sum_best_prompt"] is None
    )
    assert llm1_few["te_cps"] == 57.93


def test_export_prompts_csv_for_one_setting(data_dir: Path) -> None:
    done = _export(data_dir, "--prompts", "--fewshot", "0")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(rows) == 6 * 6 + 4 * 2
    assert {row["num_fewshot"] for row in rows} == {"0"}
    te_p4 = next(row for row in rows if (row["task"], row["prompt"]) == ("te", "p4"))
    # Table 14: prompt p4 has the highest average and CPS; values print with two decimals.
    assert (te_p4["minp"], te_p4["maxp"], te_p4["avgp"], te_p4["cps"]) == ("55.00", "74.75", "63.54", "66.37")
    ner = [row for row in rows if row["task"] == "ner"]
    assert [(row["paper_prompt"], row["cps"]) for row in ner] == [("p8", "40.14"), ("p10", "34.18")]


@pytest.mark.parametrize(
    ("args", "message"),
    [(("--format", "xml"), "invalid choice: 'xml'"), ((), "")],
)
def test_export_rejects_bad_arguments(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    if not args:  # no sub-command at all
        done = subprocess.run(
            [sys.executable, "-m", "leaderboard"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
        )
    else:
        done = _export(tmp_path, *args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "usage:" in done.stderr and message in done.stderr


def test_export_refuses_a_fewshot_setting_the_track_does_not_run(tmp_path: Path) -> None:
    done = _export(tmp_path, "--fewshot", "3")
    assert done.returncode == 2 and done.stdout == ""
    assert "--fewshot 3: num_fewshot must be one of [0, 5], got 3" in done.stderr


def test_export_of_an_empty_store_prints_no_rows_and_says_why(tmp_path: Path) -> None:
    done = _export(tmp_path, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert "no usable results files" in done.stderr


def _sample_store(tmp_path: Path) -> Path:
    """A store holding only non-comparable runs: one on sample data, one a task subset."""
    from tests.paper_tables import paper_results

    for llm, change in (("LLM-1", {"data": "sample"}), ("LLM-2", {"tasks": ["wic", "sa"]})):
        results = paper_results(llm, 0)
        results.run = results.run.model_copy(update=change)
        path = tmp_path / "results" / results_file_path(results, "2025-03-01T00:00:00Z")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(results.to_json())
    return tmp_path


def test_export_says_on_stderr_that_non_comparable_runs_were_left_out(tmp_path: Path) -> None:
    data_dir = _sample_store(tmp_path)
    done = _export(data_dir, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert "2 run(s) not comparable" in done.stderr and "--include-noncomparable shows them" in done.stderr

    shown = _export(data_dir, "--format", "json", "--include-noncomparable")
    assert shown.returncode == 0 and "left out" not in shown.stderr
    assert sorted(row["model"] for row in json.loads(shown.stdout)) == ["paper-dev/LLM-1", "paper-dev/LLM-2"]


def test_export_of_a_track_with_no_runs_is_an_empty_table_and_evalita_options_are_refused(
    data_dir: Path,
) -> None:
    done = _export(data_dir, "--track", "judge", "--format", "json")
    assert done.returncode == 0 and json.loads(done.stdout) == []
    assert "no usable results files (track judge)" in done.stderr
    done = _export(data_dir, "--track", "long-context", "--prompts")
    assert done.returncode == 2 and "belong to tracks with few-shot prompts (evalita)" in done.stderr


def test_export_of_the_evalita_track_by_name_is_the_default_export(data_dir: Path) -> None:
    assert _export(data_dir, "--track", "evalita").stdout == _export(data_dir).stdout


def test_export_table_is_a_short_readable_ranking(data_dir: Path) -> None:
    done = _export(data_dir, "--format", "table", "--fewshot", "0")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["rank", "tier", "model", "shots", "precision", "data", "limit", "avg", "CPS",
                                "WIC", "TE", "SA", "HS", "FAQ", "AT", "LS", "NER", "REL", "SUM"]  # fmt: skip
    assert len(lines) == 1 + 6 and max(map(len, lines)) <= 120
    assert lines[1].split()[:3] == ["1", "-", "paper-dev/LLM-5"] and "45.57" in lines[1]


def test_export_table_of_runs_that_are_not_ranked_shows_an_empty_rank_as_a_dash(tmp_path: Path) -> None:
    done = _export(_sample_store(tmp_path), "--format", "table", "--include-noncomparable")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[1:]]
    assert sorted((row[0], row[2]) for row in rows) == [("-", "paper-dev/LLM-1"), ("-", "paper-dev/LLM-2")]
