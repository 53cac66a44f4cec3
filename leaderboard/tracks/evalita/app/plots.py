"""Plotly figures built from the display tables of :mod:`leaderboard.tracks.evalita.app.views`.

Every figure takes already computed values (0–100) and only draws them.  Model names
are passed to plotly as data (hover text, legend), which plotly renders as text.  A
figure with nothing to draw is ``None``: the page hides the plot rather than showing an
empty box, and says why in words.
"""

from __future__ import annotations

import functools
import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.evalita.definition import SUITE

MAX_RADAR_MODELS = 6
MAX_HEATMAP_MODELS = 40
#: Above this many models the sensitivity plot draws the boxes and their outliers only (a point
#: per model and task would be tens of thousands of points sent to every page).
MAX_SENSITIVITY_POINTS_MODELS = 150
TASK_ORDER = tuple(task.abbrev for task in SUITE)  # paper order on every task axis


@functools.cache
def _template() -> go.layout.Template:
    """plotly_white's look in a few properties: the full template is ~6 KB in every figure sent
    and costs tens of milliseconds to apply to each one."""
    lines = {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8"}
    grid = {**lines, "zerolinecolor": "#EBF0F8"}
    return go.layout.Template(
        layout={
            "paper_bgcolor": "white",
            "plot_bgcolor": "white",
            "font": {"color": "#2a3f5f"},
            "colorway": ["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692"],
            "xaxis": grid,
            "yaxis": grid,
            "polar": {"bgcolor": "white", "angularaxis": lines, "radialaxis": lines},
            "hovermode": "closest",
        }
    )


def _layout(**overrides: object) -> dict[str, object]:
    return {
        "template": _template(),
        "margin": {"l": 50, "r": 20, "t": 50, "b": 50},
        "height": 460,
        **overrides,
    }


def _safe(text: object) -> str:
    # Plotly renders a small HTML subset in labels: escape user-controlled names.
    return html.escape(str(text))


#: Above this many points the size plot is drawn with WebGL (``scattergl``).
WEBGL_POINTS = 1000


def _coordinates(values: pd.Series, decimals: int) -> np.ndarray:
    """``values`` as float32 when that cannot change what its hover shows at ``decimals``, else as
    float64: plotly sends arrays as base64 binary, so float32 halves each coordinate's share of the
    page (10,000 points: 160 KB → 80 KB for x and y), and the axes resolve far less than either.

    A float32 is within ``|v|·2⁻²⁴`` of its value, so only a value that close to a rounding tie
    (x.xx5 at two decimals; the browser rounds ties up, Python to even) could show otherwise:
    any value within 16 times that keeps the whole array float64."""
    wide = values.astype(float).to_numpy()
    scaled = np.abs(wide) * 10.0**decimals
    from_tie = np.abs(scaled - np.floor(scaled) - 0.5)
    if (from_tie <= scaled * 2.0**-20 + 1e-12).any():
        return wide
    return wide.astype(np.float32)


def cps_vs_params(ranking: pd.DataFrame, avg_column: str = views.AVG) -> go.Figure | None:
    """Average CPS against parameter count (log x), one point per ranked row."""
    if ranking.empty or avg_column not in ranking.columns:
        return None
    data = ranking.dropna(subset=[avg_column, views.PARAMS])
    data = data[pd.to_numeric(data[views.PARAMS], errors="coerce") > 0]
    if data.empty:
        return None
    fig = go.Figure()
    # Thousands of SVG points make the browser crawl: WebGL draws them at once, smaller and
    # fainter so that dense regions read as density (the legend still splits by type).
    many = len(data) > WEBGL_POINTS
    trace = go.Scattergl if many else go.Scatter
    marker = {"size": 5, "opacity": 0.5} if many else {"size": 10, "opacity": 0.8}
    for model_type, group in data.groupby(views.TYPE, sort=True):
        fig.add_trace(
            trace(
                x=_coordinates(group[views.PARAMS], 2),
                y=_coordinates(group[avg_column], 2),
                mode="markers",
                name=_safe(model_type),
                text=[_safe(m) for m in group[views.MODEL]],
                hovertemplate="%{text}<br>%{x:.2f} B params<br>avg CPS %{y:.2f}<extra></extra>",
                marker=marker,
            )
        )
    fig.update_layout(
        title="Average CPS vs parameters",
        xaxis_title="Parameters (billions, log scale)",
        yaxis_title="Average CPS",
        **_layout(),
    )
    fig.update_xaxes(type="log")
    return fig


def radar(per_task: dict[str, list[float | None]], task_labels: list[str]) -> go.Figure | None:
    """Per-task CPS of up to six models, one closed polygon each.

    A task without a score is a gap in the polygon (never drawn as 0); its hover text says
    "no score" and the legend entry names the tasks missing.
    """
    if not per_task:
        return None
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
    fig.update_layout(title="Per-task CPS", polar={"radialaxis": {"range": [0, 100]}}, **_layout())
    return fig


def prompt_sensitivity(spread: pd.DataFrame) -> go.Figure | None:
    """MaxP − AvgP per task across models (columns ``Task``, ``Model``, ``Spread``)."""
    if spread.empty:
        return None
    every_point = spread["Model"].nunique() <= MAX_SENSITIVITY_POINTS_MODELS
    fig = go.Figure()
    if every_point:
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
    else:
        _summary_boxes(fig, spread)
    fig.update_layout(
        title="Prompt sensitivity: MaxP − AvgP per task (lower is more robust)",
        yaxis_title="MaxP − AvgP (points)",
        showlegend=False,
        **_layout(),
    )
    fig.update_xaxes(categoryorder="array", categoryarray=list(TASK_ORDER))
    return fig


def _summary_boxes(fig: go.Figure, spread: pd.DataFrame) -> None:
    """Many models: each task's box from its quartiles (computed here, as plotly would: linear
    interpolation, whiskers to the furthest point within 1.5 IQR) and only the points beyond
    them drawn, so the page receives ten boxes and their outliers, not every model's point."""
    boxes: dict[str, list] = {key: [] for key in ("x", "q1", "median", "q3", "lowerfence", "upperfence")}
    outliers = []
    for task, group in spread.groupby("Task", sort=False):
        values = group["Spread"].astype(float)
        q1, median, q3 = values.quantile([0.25, 0.5, 0.75]).tolist()
        reach = 1.5 * (q3 - q1)
        inside = values[(values >= q1 - reach) & (values <= q3 + reach)]
        for key, value in zip(
            boxes, (task, q1, median, q3, float(inside.min()), float(inside.max())), strict=True
        ):
            boxes[key].append(value)
        outliers.append(group[(values < q1 - reach) | (values > q3 + reach)])
    fig.add_trace(go.Box(**boxes, name="models", hoverinfo="y"))
    far = pd.concat(outliers) if outliers else spread.iloc[:0]
    if not far.empty:
        fig.add_trace(
            go.Scatter(
                x=far["Task"],
                y=_coordinates(far["Spread"], 2),
                mode="markers",
                marker={"size": 4, "opacity": 0.6},
                text=[_safe(m) for m in far["Model"]],
                hovertemplate="%{text}<br>%{x}: %{y:.2f}<extra></extra>",
                name="outliers",
            )
        )


def heatmap(models_by_prompts: pd.DataFrame, prompt_ids: list[str], title: str) -> go.Figure | None:
    """Models × prompts score heatmap (the task drill-down's table, drawn)."""
    if models_by_prompts.empty:
        return None
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
    fig.update_layout(title=title, **_layout(height=min(height, 1200)))
    fig.update_yaxes(autorange="reversed")
    return fig


def model_vs_field(table: pd.DataFrame, model_name: str) -> go.Figure | None:
    """The model's CPS per task beside the field's median and best."""
    if table.empty or table["CPS"].isna().all():
        return None
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
    fig.update_layout(
        title="CPS per task: this model vs the field", yaxis_title="CPS", yaxis_range=[0, 100], **_layout()
    )
    return fig


def _error_bars(group: pd.DataFrame) -> dict[str, object]:
    """Error bars of one prompt's scores: its 95 % interval (asymmetric) where the run kept per-item
    data, else the harness's ± stderr of an older run, else none."""
    score = group["score"].astype(float)
    low = group["low"].astype(float) if "low" in group else pd.Series(float("nan"), index=group.index)
    high = group["high"].astype(float) if "high" in group else low
    stderr = group["stderr"].astype(float)
    has_interval = low.notna() & high.notna()
    above = (high - score).where(has_interval, stderr)
    below = (score - low).where(has_interval, stderr)
    return {
        "type": "data",
        "symmetric": False,
        "array": above.fillna(0).clip(lower=0).tolist(),
        "arrayminus": below.fillna(0).clip(lower=0).tolist(),
        "visible": bool(above.notna().any()),
    }


def prompt_spread(scores: pd.DataFrame) -> go.Figure | None:
    """Each prompt's score (with its 95 % interval) per task for one model: how much the prompt matters.

    Columns ``task``, ``prompt``, ``score``, ``stderr`` and optionally ``low``/``high`` (the
    interval; an older run without one shows ± its stderr).  One trace per prompt id, placed side
    by side within each task (``scattermode="group"``) and named in the legend, so no two
    labels are drawn over each other.
    """
    if scores.empty or scores["score"].isna().all():
        return None
    fig = go.Figure()
    for prompt_id, group in scores.groupby("prompt", sort=True):
        fig.add_trace(
            go.Scatter(
                x=group["task"],
                y=group["score"],
                mode="markers",
                name=str(prompt_id),
                marker={"size": 9},
                error_y=_error_bars(group),
                hovertemplate=f"%{{x}} {_safe(prompt_id)}: %{{y:.2f}}<extra></extra>",
            )
        )
    fig.update_layout(
        title="Score of every prompt per task (bars: 95 % interval; the spread is the prompt sensitivity)",
        yaxis_title="score",
        yaxis_range=[0, 100],
        scattermode="group",
        legend_title_text="prompt",
        **_layout(),
    )
    fig.update_xaxes(categoryorder="array", categoryarray=list(TASK_ORDER))
    return fig


def cps_vs_energy(
    points: pd.DataFrame, gpu_model: str, energy_column: str, avg_column: str = views.AVG
) -> go.Figure | None:
    """Average CPS against measured energy per 1,000 scored items, runs of one GPU model only."""
    if points.empty:
        return None
    fig = go.Figure(
        go.Scatter(
            x=points[energy_column],
            y=points[avg_column],
            mode="markers",
            text=[_safe(m) for m in points[views.MODEL]],
            hovertemplate="%{text}<br>%{x:.3f} Wh per 1,000 items<br>avg CPS %{y:.2f}<extra></extra>",
            marker={"size": 10, "opacity": 0.8},
        )
    )
    fig.update_layout(
        title=f"Average CPS vs energy (NVML, idle subtracted) on {_safe(gpu_model)}",
        xaxis_title="Wh per 1,000 scored items",
        yaxis_title="Average CPS",
        **_layout(),
    )
    return fig
