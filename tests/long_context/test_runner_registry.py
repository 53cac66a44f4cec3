"""The long-context runner in the worker's registry: its data preflight and what it keeps of samples."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from backend.config import WorkerConfig
from backend.tracks import check_track_data, runner_for
from backend.tracks.long_context.run import drop_prompts, evaluate
from eval_queue.tracks import TRACKS, TrackRegistry, track_spec
from leaderboard.core.datasource import DataSourceError
from tests.long_context.books import passage_book, summary_book, write_books


def test_the_long_context_track_has_a_registered_runner() -> None:
    assert runner_for("long-context") is evaluate
    assert track_spec("long-context").runner == "backend.tracks.long_context.run:evaluate"


def test_the_preflight_asks_the_tracks_runner_and_names_missing_books(tmp_path: Path) -> None:
    config = WorkerConfig(worker_id="w", data=f"local:{tmp_path / 'nowhere'}")
    with pytest.raises(DataSourceError):
        check_track_data("long-context", config)
    lib = write_books(tmp_path / "lib", [summary_book("b", 30), passage_book("p", 30)])
    assert check_track_data("long-context", WorkerConfig(worker_id="w", data=f"local:{lib}")) is True


NO_CHECK = replace(track_spec("long-context"), check_data=None)


def test_a_track_without_a_data_check_is_skipped_cleanly() -> None:
    config = WorkerConfig(worker_id="w")
    registry = TrackRegistry([("long-context", "tests.long_context.test_runner_registry:NO_CHECK")])
    assert check_track_data("long-context", config, registry) is False
    assert TRACKS["judge"]


def test_drop_prompts_removes_the_prompt_and_keeps_what_details_read() -> None:
    book = "parola " * 10_000
    samples = {
        "indaqa2_summary_oe_10k": [
            {
                "doc_id": 0,
                "doc": {"book_file": "/work/books/00000.txt", "question": "Dove?"},
                "arguments": [(book + "Domanda: Dove?\nRisposta:", {"until": ["\n"]})],
                "resps": [["A Bologna"]],
                "filtered_resps": ["A Bologna"],
                "em": 1.0,
            }
        ]
    }
    drop_prompts(samples)
    [sample] = samples["indaqa2_summary_oe_10k"]
    assert set(sample) == {"doc_id", "doc", "filtered_resps", "em"}
    assert "parola" not in repr(samples)
