"""The long-context runner in the worker's registry: its data preflight and what it keeps of samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.config import WorkerConfig
from backend.tracks import TRACK_RUNNERS, check_track_data, runner_for
from backend.tracks.evalita.data import DataSourceError
from backend.tracks.long_context.run import drop_prompts, evaluate
from eval_queue.vocabulary import Track
from tests.long_context.books import passage_book, summary_book, write_books


def test_the_long_context_track_has_a_registered_runner() -> None:
    assert runner_for(Track.LONG_CONTEXT) is evaluate
    assert TRACK_RUNNERS[Track.LONG_CONTEXT] == "backend.tracks.long_context.run:evaluate"


def test_the_preflight_asks_the_tracks_runner_and_names_missing_books(tmp_path: Path) -> None:
    config = WorkerConfig(worker_id="w", data=f"local:{tmp_path / 'nowhere'}")
    with pytest.raises(DataSourceError):
        check_track_data(Track.LONG_CONTEXT, config)
    lib = write_books(tmp_path / "lib", [summary_book("b", 30), passage_book("p", 30)])
    assert check_track_data(Track.LONG_CONTEXT, WorkerConfig(worker_id="w", data=f"local:{lib}")) is True


def test_a_track_without_a_data_check_or_a_runner_is_skipped_cleanly() -> None:
    config = WorkerConfig(worker_id="w")
    assert check_track_data(Track.JUDGE, config, runners={Track.JUDGE: "json:loads"}) is False
    assert check_track_data(Track.JUDGE, config, runners={}) is False


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
