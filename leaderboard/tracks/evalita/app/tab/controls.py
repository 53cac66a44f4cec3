"""The controls several Evalita pages share: the few-shot setting and the metric set switch."""

from __future__ import annotations

from typing import Any

import gradio as gr

from leaderboard.tracks.evalita.app.views.metrics import METRIC_CHOICES
from leaderboard.tracks.evalita.vocabulary import RUN_SETTINGS


def setting_radio(elem_id: str, **layout: Any) -> gr.Radio:
    """The "Setting: 0-shot | 5-shot" radio of a page that shows one run setting at a time."""
    return gr.Radio(
        [(s.label, s.value) for s in RUN_SETTINGS],
        value=RUN_SETTINGS[0].value,
        label="Setting",
        elem_id=elem_id,
        **layout,
    )


def metrics_switch(elem_id: str) -> gr.Radio:
    """The "metrics: lm-eval | as specified" switch (the ranking, task and model pages each have one)."""
    return gr.Radio(
        list(METRIC_CHOICES),
        value=METRIC_CHOICES[0][1],
        label="Metrics",
        info="lm-eval: the paper's tables and the official board; as specified: the paper's own metrics",
        elem_id=elem_id,
        scale=1,
    )
