"""What a track hands the EEE writer: its figures and its items, in the board's own terms."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from leaderboard.core.schema import ResultsEnvelope


@dataclass(frozen=True)
class Figure:
    """One figure of a run (a score the board shows), as an EEE ``evaluation_results`` entry.

    ``result_id`` is stable within the run (the join key of its items, ``evaluation_result_id``);
    ``value`` on the figure's own scale (``min_score``–``max_score``); ``low``/``high`` its 95 %
    interval when the run has one (None: none, never made up); ``details_file`` the run's details
    file whose lines are this figure's items (None: the figure is derived, e.g. a mean of tasks).
    """

    result_id: str
    name: str
    value: float
    metric_id: str
    metric_name: str
    description: str = ""
    lower_is_better: bool = False
    min_score: float | None = 0.0
    max_score: float | None = 1.0
    low: float | None = None
    high: float | None = None
    level: float = 0.95
    interval_method: str = ""
    stderr: float | None = None
    num_samples: int | None = None
    details_file: str | None = None
    #: ``(name, hub repo)`` of the data behind this figure, when it is not the track's one.
    dataset: tuple[str, str | None] | None = None
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Item:
    """One item of a details file as an EEE instance (single turn).

    ``score`` is the item's own score under the figure's metric; ``correct`` whether the answer
    counts as right (None: the metric has no such notion, e.g. ROUGE — then ``score > 0``).
    ``reasoning`` is what a ``<think>`` block held, where the run kept one.
    """

    sample_id: str
    raw_input: str
    references: tuple[str, ...]
    outputs: tuple[str, ...]
    score: float
    correct: bool | None = None
    choices: tuple[str, ...] | None = None
    extracted: str | None = None
    extraction_method: str = "exact_match"
    reasoning: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TrackEee:
    """A track's part of the EEE export (what ``TrackSpec.eee`` names).

    ``benchmark``: the datastore collection its runs go under (``data/<benchmark>/…``);
    ``dataset``: ``(name, hub repo or None)`` its items come from;
    ``figures(results)``: the run's figures (its results type);
    ``items(results, file_name, data)``: the items of one of its details files (raises
    ``MalformedFileError`` on a bad file, which the export names and skips).
    """

    benchmark: str
    dataset: tuple[str, str | None]
    figures: Callable[[ResultsEnvelope], list[Figure]]
    items: Callable[[ResultsEnvelope, str, bytes], Iterable[Item]] | None = None
