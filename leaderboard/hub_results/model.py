"""What a track hands the hub-results writer: its benchmark dataset, its files, its eval.yaml."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from leaderboard.core.schema import ResultsEnvelope


@dataclass(frozen=True)
class HubEntry:
    """One score on the model's page (an entry of a ``.eval_results/*.yaml`` list).

    ``value`` as the board shows it (0–100, two decimals); ``notes`` say what it is, its 95 %
    interval and the run's setting, since the format has no field for them.
    """

    task_id: str
    value: float
    date: str | None
    source_url: str
    notes: str

    def as_yaml(self, dataset_id: str, source_name: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"dataset": {"id": dataset_id, "task_id": self.task_id}, "value": self.value}
        if self.date:
            entry["date"] = self.date
        entry["source"] = {"url": self.source_url, "name": source_name}
        entry["notes"] = self.notes
        return entry


@dataclass(frozen=True)
class HubRun:
    """A comparable run of the model and where its numbers can be seen (the link in each entry)."""

    results: ResultsEnvelope
    path: str
    url: str


@dataclass(frozen=True)
class TrackHubResults:
    """A track's part (what ``TrackSpec.hub_results`` names).

    ``dataset_id``: the Hub dataset that is (or will be) the registered benchmark;
    ``files(runs)``: file name (``evalita-llm_0shot.yaml``) → its entries, from the model's
    comparable runs of the track (newest first); ``eval_yaml()``: the benchmark's ``eval.yaml``
    as data (its tasks are the ``task_id`` the entries use).
    """

    dataset_id: str
    files: Callable[[Sequence[HubRun]], dict[str, list[HubEntry]]]
    eval_yaml: Callable[[], dict[str, Any]]
    notes: tuple[str, ...] = field(default_factory=tuple)
