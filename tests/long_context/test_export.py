"""``python -m leaderboard export --track long-context`` on a store of long-context runs."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from leaderboard.__main__ import main
from leaderboard.core.schema import results_file_path
from leaderboard.tracks.long_context.schema import LongContextResults
from tests.long_context.test_schema_tables import PAPER_10K, _document


def _write_run(results_dir: Path, model: str, data: str, stamp: str) -> None:
    document = _document(model, PAPER_10K[model], settings=("10k", "full"), data=data)
    run = LongContextResults.model_validate(document)
    path = results_dir / results_file_path(run, stamp)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(run.to_json())


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("EVALITA_REQUESTS_REPO", "EVALITA_RESULTS_REPO", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path))
    _write_run(tmp_path / "results", "ANITA-8B", "hub", "2026-11-20T10:00:00Z")
    _write_run(tmp_path / "results", "Llama3.1-8B", "sample", "2026-11-20T11:00:00Z")
    return tmp_path


def test_export_long_context_json_has_a_row_per_run_and_setting(store, capsys) -> None:
    assert main(["export", "--track", "long-context", "--format", "json", "--include-noncomparable"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted((r["model"], r["setting"]) for r in rows) == [
        ("org/ANITA-8B", "10k"),
        ("org/ANITA-8B", "full"),
        ("org/Llama3.1-8B", "10k"),
        ("org/Llama3.1-8B", "full"),
    ]
    anita = next(r for r in rows if r["model"] == "org/ANITA-8B" and r["setting"] == "10k")
    assert (anita["local_acc"], anita["entity_meteor"], anita["local_unparsed"]) == (38.08, 20.15, 10.0)


def test_export_long_context_leaves_sample_runs_out_and_says_so(store, capsys, caplog) -> None:
    assert main(["export", "--track", "long-context"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["model"] for r in rows} == {"org/ANITA-8B"}
    assert rows[0]["summary_meteor"] == "23.12"
    assert "1 run(s) not comparable" in caplog.text


def test_export_long_context_table_format_is_the_table5_layout(store, capsys) -> None:
    assert main(["export", "--track", "long-context", "--format", "table"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    order = ["Summary EM", "Summary METEOR", "Local EM", "Local ACC", "Local alt. ACC", "Entity METEOR"]
    positions = [header.index(label) for label in order]
    assert positions == sorted(positions)
    assert "Local unparsed" in header and "book seen" in header
