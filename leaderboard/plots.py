"""Plotly figures built from the display tables of :mod:`leaderboard.views`.

Every figure takes already computed values (0–100) and only draws them.  Model names
are passed to plotly as data (hover text, legend), which plotly renders as text.
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from leaderboard import views
from leaderboard.suite import SUITE

MAX_RADAR_MODELS = 6
MAX_HEATMAP_MODELS = 40
TASK_ORDER = tuple(task.abbrev for task in SUITE)  # paper order on every task axis
_LAYOUT = {"template": "plotly_white", "margin": {"l": 50, "r": 20, "t": 50, "b": 50}, "height": 460}


def _empty(title: str, message: str) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=title, **_LAYOUT)
    fig.add_annotation(text=message, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def _safe(text: object) -> str:
    # Plotly renders a small HTML subset in labels: escape user-controlled names.
    return html.escape(str(text))


def cps_vs_params(ranking: pd.DataFrame, avg_column: str = views.AVG) -> go.Figure:
    """Average CPS against parameter count (log x), one point per ranked row."""
    title = "Average CPS vs parameters"
    if ranking.empty or avg_column not in ranking.columns:
        return _empty(title, "No results to plot.")
    data = ranking.dropna(subset=[avg_column, views.PARAMS])
    data = data[pd.to_numeric(data[views.PARAMS], errors="coerce") > 0]
    if data.empty:
        return _empty(title, "No model with both a parameter count and an average CPS.")
    fig = go.Figure()
    for model_type, group in data.groupby(views.TYPE, sort=True):
        fig.add_trace(
            go.Scatter(
                x=group[views.PARAMS],
                y=group[avg_column],
                mode="markers",
                name=_safe(model_type),
                text=[_safe(m) for m in group[views.MODEL]],
                hovertemplate="%{text}<br>%{x} B params<br>avg CPS %{y:.2f}<extra></extra>",
                marker={"size": 10, "opacity": 0.8},
            )
        )
    fig.update_layout(
        title=title, xaxis_title="Parameters (billions, log scale)", yaxis_title="Average CPS", **_LAYOUT
    )
    fig.update_xaxes(type="log")
    return fig


def radar(per_task: dict[str, list[float | None]], task_labels: list[str]) -> go.Figure:
    """Per-task CPS of up to six models, one closed polygon each.

    A task without a score is a gap in the polygon (never drawn as 0); its hover text says
    "no score" and the legend entry names the tasks missing.
    """
    title = "Per-task CPS"
    if not per_task:
        return _empty(title, "Choose up to six models.")
    fig = go.Figure()
    for name, values in list(per_task.items())[:MAX_RADAR_MODELS]:
        missing = [label for label, v in zip(task_labels, values, strict=True) if v is None]
        legend = _safe(name) + (f" (no score: {_safe(', '.join(missing))})" if missing else "")
        shown = [("no score" if v is None else f"{v:.2f}") + f" · {_safe(name)}" for v in values]
        fig.add_trace(
            go.Scatterpolar(
                r=[*values, values[0]],
                theta=[*task_labels, task_labels[0]],
                text=[*shown, shown[0]],
                hovertemplate="%{theta}: %{text}<extra></extra>",
                connectgaps=False,
                fill="toself",
                name=legend,
                opacity=0.55,
            )
        )
    fig.update_layout(title=title, polar={"radialaxis": {"range": [0, 100]}}, **_LAYOUT)
    return fig


def prompt_sensitivity(spread: pd.DataFrame) -> go.Figure:
    """MaxP − AvgP per task across models (columns ``Task``, ``Model``, ``Spread``)."""
    title = "Prompt sensitivity: MaxP − AvgP per task (lower is more robust)"
    if spread.empty:
        return _empty(title, "No results to plot.")
    fig = go.Figure()
    fig.add_trace(
        go.Box(
            x=spread["Task"],
            y=spread["Spread"],
            boxpoints="all",
            jitter=0.4,
            text=[_safe(m) for m in spread["Model"]],
            hovertemplate="%{text}<br>%{x}: %{y:.2f}<extra></extra>",
            name="models",
        )
    )
    fig.update_layout(title=title, yaxis_title="MaxP − AvgP (points)", showlegend=False, **_LAYOUT)
    fig.update_xaxes(categoryorder="array", categoryarray=list(TASK_ORDER))
    return fig


def heatmap(models_by_prompts: pd.DataFrame, prompt_ids: list[str], title: str) -> go.Figure:
    """Models × prompts score heatmap (the task drill-down's table, drawn)."""
    if models_by_prompts.empty:
        return _empty(title, "No results for this task and setting.")
    if len(models_by_prompts) > MAX_HEATMAP_MODELS:  # rows arrive best first
        models_by_prompts = models_by_prompts.head(MAX_HEATMAP_MODELS)
        title = f"{title} (top {MAX_HEATMAP_MODELS} by CPS)"
    z = models_by_prompts[prompt_ids].astype(float).to_numpy()
    names = [_safe(m) for m in models_by_prompts[views.MODEL]]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=prompt_ids,
            y=names,
            colorscale="Viridis",
            zmin=0,
            zmax=100,
            texttemplate="%{z:.2f}",
            hovertemplate="%{y}<br>%{x}: %{z:.2f}<extra></extra>",
        )
    )
    height = max(300, 40 + 28 * len(names))
    fig.update_layout(title=title, **{**_LAYOUT, "height": min(height, 1200)})
    fig.update_yaxes(autorange="reversed")
    return fig


def model_vs_field(table: pd.DataFrame, model_name: str) -> go.Figure:
    """The model's CPS per task beside the field's median and best."""
    title = "CPS per task: this model vs the field"
    if table.empty or table["CPS"].isna().all():
        return _empty(title, "No results for this model in this setting.")
    fig = go.Figure()
    fig.add_trace(go.Bar(x=table["Task"], y=table["CPS"], name=_safe(model_name)))
    fig.add_trace(
        go.Scatter(
            x=table["Task"],
            y=table["Field median"],
            mode="markers",
            name="field median",
            marker={"symbol": "line-ew-open", "size": 28, "line": {"width": 3}},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=table["Task"],
            y=table["Field best"],
            mode="markers",
            name="field best",
            marker={"symbol": "star", "size": 12},
        )
    )
    fig.update_layout(title=title, yaxis_title="CPS", yaxis_range=[0, 100], **_LAYOUT)
    return fig


def prompt_spread(scores: pd.DataFrame) -> go.Figure:
    """Each prompt's score per task for one model: how much the prompt matters."""
    title = "Score of every prompt per task (spread = prompt sensitivity)"
    if scores.empty:
        return _empty(title, "No prompt scores for this model in this setting.")
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=scores["task"],
            y=scores["score"],
            mode="markers+text",
            text=scores["prompt"],
            textposition="middle right",
            marker={"size": 9},
            hovertemplate="%{x} %{text}: %{y:.2f}<extra></extra>",
        )
    )
    fig.update_layout(title=title, yaxis_title="score", yaxis_range=[0, 100], showlegend=False, **_LAYOUT)
    fig.update_xaxes(categoryorder="array", categoryarray=list(TASK_ORDER))
    return fig
