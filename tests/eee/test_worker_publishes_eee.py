"""``python -m backend --publish-eee``: each published run also as valid EEE records, beside contents.parquet."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import pytest

from backend.cli import build_parser, config_from_args
from backend.config import Outcome
from eval_queue.settings import Settings
from leaderboard.eee.export import STORE_FOLDER
from leaderboard.eee.validate import validate_tree
from tests.publish.deployment import config, local_deployment


def _eee_files(results_root: Path) -> list[Path]:
    return (
        sorted((results_root / STORE_FOLDER).rglob("*.json*"))
        if (results_root / STORE_FOLDER).exists()
        else []
    )


def test_the_flag_is_off_by_default_and_nothing_is_published(tmp_path: Path) -> None:
    settings = Settings.from_env({"EVALITA_DATA_DIR": str(tmp_path)})
    assert config_from_args(build_parser().parse_args(["--once"]), settings).publish_eee is False
    assert config_from_args(build_parser().parse_args(["--once", "--publish-eee"]), settings).publish_eee
    local = local_deployment(tmp_path)
    local.submit(1)
    assert local.run_round(config()) is Outcome.FINISHED
    assert _eee_files(tmp_path / "results") == []


def test_with_the_flag_a_run_is_published_as_valid_records_with_its_details(tmp_path: Path) -> None:
    local = local_deployment(tmp_path)
    (rid,) = local.submit(1)
    assert local.run_round(dataclasses.replace(config(), publish_eee=True)) is Outcome.FINISHED
    files = _eee_files(tmp_path / "results")
    assert sorted(f.suffix for f in files) == [".json", ".jsonl"]
    root = tmp_path / "results" / STORE_FOLDER
    errors, _ = validate_tree(root, [str(f.relative_to(root)) for f in files])
    assert errors == []
    aggregate = json.loads(next(f for f in files if f.suffix == ".json").read_text())
    assert aggregate["source_metadata"]["additional_details"]["results_path"] == local.peek(rid).results_path
    lines = next(f for f in files if f.suffix == ".jsonl").read_text().splitlines()
    assert len(lines) == 1  # te p1's one line (p2 has no score in the results body, so no figure)


def test_a_failure_of_the_eee_step_never_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import leaderboard.eee.export as export

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("injected")

    monkeypatch.setattr(export, "run_records", broken)
    local = local_deployment(tmp_path)
    local.submit(1)
    with caplog.at_level(logging.WARNING):
        assert local.run_round(dataclasses.replace(config(), publish_eee=True)) is Outcome.FINISHED
    assert "EEE records not published" in caplog.text
    assert _eee_files(tmp_path / "results") == []
