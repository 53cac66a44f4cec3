"""The judge track's record: one parsed results file (:class:`JudgeRun`), and the newest of each measurement.

:func:`~leaderboard.tracks.judge.app.results.parse_results_file` makes one :class:`JudgeRun` per
file; the tables (:mod:`leaderboard.tracks.judge.app.tables`) read only these.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from leaderboard.tracks.judge.definition import JudgeMode
from leaderboard.tracks.judge.schema import GenerationsBody, JudgeResultsFile, JudgeStanding


@dataclass(frozen=True)
class JudgeRun:
    """One parsed judge results file and where it lives in the results store."""

    path: str
    results: JudgeResultsFile

    @property
    def mode(self) -> JudgeMode:
        return self.results.judge.mode

    @property
    def comparable(self) -> bool:
        """The results file's own rule (:attr:`JudgeResultsFile.comparable`)."""
        return self.results.comparable

    @property
    def standing(self) -> JudgeStanding:
        """Comparable with Table 1, paper protocol on other data, or not comparable."""
        return self.results.standing

    @property
    def listed(self) -> bool:
        """Listed by default: the paper protocol in full (comparable, or beside them on other data)."""
        return self.standing is not JudgeStanding.NOT_COMPARABLE

    @property
    def annotated_set(self) -> str:
        """The set it was measured on: its SHA-256 (older files: its label) (:attr:`JudgeResultsFile.annotated_set`)."""
        return self.results.annotated_set

    def _few_shot_key(self) -> str | None:
        shots = self.results.judge.few_shot
        return shots.sha256 if shots else None

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes two files the same measurement (the newest of them is kept)."""
        model, run, body = self.results.model, self.results.run, self.results.judge
        common = (model.id, model.revision, model.precision, body.rubric, body.protocol, self._few_shot_key())
        if isinstance(body, GenerationsBody):
            return (*common, JudgeMode.GENERATIONS, body.target.results_path)
        return (*common, JudgeMode.META, self.annotated_set, run.limit, run.max_gen_toks)

    @property
    def finished_at(self) -> str:
        return self.results.run.finished_at or ""


def latest(runs: Iterable[JudgeRun]) -> list[JudgeRun]:
    """The newest file per :attr:`JudgeRun.key` (ties: the later path), in path order."""
    kept: dict[tuple[Any, ...], JudgeRun] = {}
    for run in runs:
        held = kept.get(run.key)
        if held is None or (run.finished_at, run.path) > (held.finished_at, held.path):
            kept[run.key] = run
    return sorted(kept.values(), key=lambda r: r.path)
