"""The toy track's spec: one option, one worker option, a runner, a parser, an export, a tab."""

from __future__ import annotations

from enum import StrEnum

from eval_queue.tracks import TrackOptions, TrackSpec, WorkerOption, option

TRACK = "toy"


class Flavour(StrEnum):
    PLAIN = "plain"
    SPICY = "spicy"


class ToyOptions(TrackOptions):
    """A toy request may ask for a flavour (None: plain)."""

    flavour: Flavour | None = option(flag="--flavour", label="Flavour", help="toy: plain or spicy")

    def variant(self) -> str | None:
        return self.flavour.value if self.flavour is Flavour.SPICY else None


def _seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise ValueError("--toy-wait-s must be >= 0")
    return value


SPEC = TrackSpec(
    name=TRACK,
    label="Toy track",
    summary="scores the length of a model id (a test track)",
    options=ToyOptions,
    worker_options=(WorkerOption("--toy-wait-s", "toy: seconds each run lasts", parse=_seconds),),
    results_type="tests.support.toy_track.schema:ToyResults",
    runner="tests.support.toy_track.run:evaluate",
    parse_results="tests.support.toy_track.export:parse_results_file",
    export="tests.support.toy_track.export:export_results",
    tabs=("tests.support.toy_track.app:ToyTab",),
    about="tests.support.toy_track.app:about_markdown",
)
