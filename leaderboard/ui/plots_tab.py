"""Plots: average CPS vs size, a radar of chosen models, prompt sensitivity per task."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from leaderboard import plots, views
from leaderboard.state import MAX_CHOSEN_MODELS
from leaderboard.suite import SUITE
from leaderboard.ui.context import AppContext


@dataclass
class PlotsTab:
    setting: gr.Radio
    models: gr.Dropdown
    scatter: gr.Plot
    radar: gr.Plot
    sensitivity: gr.Plot

    @property
    def outputs(self) -> list[gr.components.Component]:
        return [self.scatter, self.radar, self.sensitivity]


def build() -> PlotsTab:
    with gr.Row():
        setting = gr.Radio(
            [("0-shot", "0"), ("5-shot", "5")], value="0", label="Setting", elem_id="plots-setting"
        )
        models = gr.Dropdown(
            [],
            value=[],
            multiselect=True,
            max_choices=MAX_CHOSEN_MODELS,
            label=f"Models for the radar (up to {MAX_CHOSEN_MODELS})",
            elem_id="plots-models",
            allow_custom_value=True,
            scale=3,
        )
    scatter = gr.Plot(elem_id="plot-scatter")
    with gr.Row():
        radar = gr.Plot(elem_id="plot-radar")
        sensitivity = gr.Plot(elem_id="plot-sensitivity")
    return PlotsTab(setting, models, scatter, radar, sensitivity)


def choices_update(ctx: AppContext, current):
    choices = views.run_choices(ctx.results())
    keys = {key for _, key in choices}
    value = [k for k in (current or []) if k in keys][:MAX_CHOSEN_MODELS]
    if not value:
        value = views.top_runs(ctx.results(), 3)
    return gr.Dropdown(choices=choices, value=value), value


def render(ctx: AppContext, setting, chosen, all_runs):
    board = ctx.results()
    num_fewshot = 5 if setting == "5" else 0
    ranking = views.ranking_view(
        board, str(num_fewshot), views.RankingFilters(show_noncomparable=bool(all_runs))
    )
    runs = views.pick_runs(board, (chosen or [])[:MAX_CHOSEN_MODELS])
    return (
        plots.cps_vs_params(ranking.table),
        plots.radar(views.radar_data(board, runs, num_fewshot), [t.abbrev for t in SUITE]),
        plots.prompt_sensitivity(views.sensitivity_data(board, num_fewshot, bool(all_runs))),
    )
