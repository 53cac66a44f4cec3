"""The judge track's figures (plotly; no gradio): agreement heatmap, human vs judge score distributions.

Each takes a table of :mod:`leaderboard.tracks.judge.app.tables` and only draws it.  Judge
names are user-controlled: they are escaped before plotly renders its HTML subset.  A
figure with nothing to draw is ``None`` (the tab hides it and says why in words).
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from leaderboard.tracks.judge.app.tables import HUMAN, NOT_ENOUGH_DATA, UNPARSED_BIN
from leaderboard.tracks.judge.definition import SCORES
from leaderboard.tracks.judge.rubric import CRITERIA

#: Judges drawn beside the human scores in the distributions (the best ones first).
MAX_DISTRIBUTION_JUDGES = 4
_HUMAN_COLOUR = "#7f7f7f"
_JUDGE_COLOURS = ("#636efa", "#EF553B", "#00cc96", "#ab63fa")


def _safe(text: object) -> str:
    return html.escape(str(text))


def _layout(**overrides: object) -> dict[str, object]:
    return {
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"color": "#2a3f5f"},
        "margin": {"l": 60, "r": 20, "t": 60, "b": 60},
        **overrides,
    }


def agreement_heatmap(matrix: pd.DataFrame, title: str) -> go.Figure | None:
    """Spearman's ρ between judges (a square frame, ``pd.NA``: not enough common scored items)."""
    if matrix.empty:
        return None
    names = [_safe(name) for name in matrix.columns]
    values = [[None if pd.isna(v) else float(v) for v in row] for row in matrix.to_numpy(dtype=object)]
    text = [["n/a" if v is None else f"{v:.2f}" for v in row] for row in values]
    figure = go.Figure(
        go.Heatmap(
            z=values,
            x=names,
            y=names,
            zmin=-1,
            zmax=1,
            colorscale="RdBu",
            text=text,
            texttemplate="%{text}",
            hovertemplate="%{y} vs %{x}: ρ = %{text}<extra></extra>",
            colorbar={"title": "ρ"},
        )
    )
    size = max(320, 90 * len(names) + 160)
    figure.update_layout(
        **_layout(title=_safe(title), height=size),
        annotations=[
            {
                "text": f"n/a: {NOT_ENOUGH_DATA} (fewer than three items scored by both, or constant scores)",
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": -0.2,
                "font": {"size": 11},
            }
        ],
    )
    figure.update_yaxes(autorange="reversed")
    return figure


def distributions_figure(counts: pd.DataFrame, judges: list[str]) -> go.Figure | None:
    """Human vs judge score counts, one panel per criterion (the paper's Figures 4–6).

    ``counts`` is :func:`~leaderboard.tracks.judge.app.tables.distribution_table`'s tidy frame;
    ``judges`` the judge labels to draw, in order (at most :data:`MAX_DISTRIBUTION_JUDGES`).
    The human bars are those of the first judge's items; a judge's unparsed answers are
    their own bar, never a score.
    """
    judges = [j for j in judges if j in set(counts["judge"])][:MAX_DISTRIBUTION_JUDGES]
    if counts.empty or not judges:
        return None
    bins = [str(s) for s in SCORES] + [UNPARSED_BIN]
    figure = make_subplots(
        rows=1, cols=len(CRITERIA), subplot_titles=[c.label for c in CRITERIA], shared_yaxes=True
    )
    series = [(HUMAN, judges[0], "people", _HUMAN_COLOUR)] + [
        ("judge", judge, judge, _JUDGE_COLOURS[i % len(_JUDGE_COLOURS)]) for i, judge in enumerate(judges)
    ]
    for column, criterion in enumerate(CRITERIA, start=1):
        for source, judge, name, colour in series:
            rows = counts[
                (counts["judge"] == judge)
                & (counts["criterion"] == criterion.value)
                & (counts["source"] == source)
            ]
            by_bin = dict(zip(rows["score"], rows["count"], strict=True))
            figure.add_trace(
                go.Bar(
                    x=bins if source != HUMAN else bins[:-1],
                    y=[int(by_bin.get(b, 0)) for b in (bins if source != HUMAN else bins[:-1])],
                    name=_safe(name),
                    legendgroup=_safe(name),
                    showlegend=column == 1,
                    marker_color=colour,
                    hovertemplate=f"{_safe(name)}: %{{y}} × %{{x}}<extra></extra>",
                ),
                row=1,
                col=column,
            )
    figure.update_layout(
        **_layout(title="Score distributions: people vs judges, per criterion", height=420),
        barmode="group",
        legend={"orientation": "h", "y": -0.2},
    )
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=bins)
    return figure
