"""Markers other tracks put on a ranking's task cells (a cross-track hook, like panels).

A track that has something to say about a run's score on one task — without changing the score —
names a function in its spec's ``ranking_markers``::

    ranking_markers(store: StoreResults) -> Mapping[MarkerKey, RankingMarker]

given the app's latest read of the results store, and returning a marker per ``(model, revision,
task id)`` it marks.  A ranking asks :func:`collect_markers` for every track's markers and draws
them with :func:`marked_cell`; it never names the tracks that made them, and a new track adds
markers without touching the ranking's code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from eval_queue.tracks import TrackSpec
from leaderboard.store import StoreResults
from leaderboard.views.common import html_text

#: ``(model id, revision, task id)``: the run and the task a marker is about.
MarkerKey = tuple[str, str, str]


@dataclass(frozen=True)
class RankingMarker:
    """One mark on a task cell: a symbol, what it says (plain text: shown on hover, read aloud) and
    where the evidence is — the run's model page (``"model"``, where tracks' panels show) or a tab id."""

    symbol: str
    text: str
    page: str = "model"


def collect_markers(
    specs: Sequence[TrackSpec], store: StoreResults
) -> dict[MarkerKey, tuple[RankingMarker, ...]]:
    """Every track's markers on ``store``, in registry order, grouped by the cell they mark."""
    found: dict[MarkerKey, list[RankingMarker]] = {}
    for spec in specs:
        build = spec.load("ranking_markers")
        if build is None:
            continue
        for key, marker in build(store).items():
            found.setdefault(key, []).append(marker)
    return {key: tuple(markers) for key, markers in found.items()}


def marker_href(marker: RankingMarker, run_key: str) -> str:
    """The marker's link: the run's model page, or the tab it names."""
    if marker.page == "model":
        return f"?tab=model&model={quote(run_key, safe='')}"
    return f"?tab={quote(marker.page, safe='')}"


def marked_cell(shown: str, markers: Sequence[RankingMarker], run_key: str) -> str:
    """A cell's HTML: its value as shown, then each marker as a link (every text escaped)."""
    links = " ".join(
        f'<a class="ranking-marker" href="{html_text(marker_href(m, run_key))}" title="{html_text(m.text)}" '
        f'aria-label="{html_text(m.text)}">{html_text(m.symbol)}</a>'
        for m in markers
    )
    return f"{html_text(shown)} {links}"


def markers_by_run(
    markers: Mapping[MarkerKey, tuple[RankingMarker, ...]],
) -> dict[tuple[str, str], dict[str, tuple[RankingMarker, ...]]]:
    """``(model, revision)`` → task id → its markers (a table's rows look theirs up once)."""
    out: dict[tuple[str, str], dict[str, tuple[RankingMarker, ...]]] = {}
    for (model, revision, task), found in markers.items():
        out.setdefault((model, revision), {})[task] = found
    return out
