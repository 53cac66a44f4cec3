"""Plots: average CPS vs size and vs measured energy (one GPU model), a radar of chosen models,
prompt sensitivity per task."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

import gradio as gr

from leaderboard.state import Notice, PageState, UrlField
from leaderboard.tracks.evalita.app import plots, views
from leaderboard.tracks.evalita.app.link import MAX_CHOSEN_MODELS, URL_FIELDS, EvalitaLink
from leaderboard.tracks.evalita.app.tab.controls import setting_radio
from leaderboard.tracks.evalita.app.views.energy import WH_PER_1000, energy_points
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.ui.common import Choices
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Api, Rendered, Tab, TabParts


class PlotsTab(Tab):
    id = "plots"
    label = "Plots"
    #: Evalita's link fields (:mod:`leaderboard.tracks.evalita.app.link`), shared by its tabs.
    url_fields: ClassVar[Mapping[str, UrlField]] = URL_FIELDS
    shared_render = True
    apis: ClassVar[Mapping[str, Api]] = MappingProxyType(
        {
            "plots": Api(
                fields=("shots", "models", "all_runs"), outputs=("scatter", "radar", "sensitivity", "energy")
            )
        }
    )

    def build(self, page: Page) -> TabParts:
        with gr.Row():
            shots = setting_radio("plots-setting")
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
        shown = gr.Markdown(elem_id="plots-caption")
        scatter = gr.Plot(elem_id="plot-scatter", visible=False)
        energy = gr.Plot(elem_id="plot-energy", visible=False)
        with gr.Row():
            radar = gr.Plot(elem_id="plot-radar", visible=False)
            sensitivity = gr.Plot(elem_id="plot-sensitivity", visible=False)
        return TabParts(
            controls={"shots": shots, "models": models},
            outputs={
                "models": models,  # also its choices (the evaluated runs)
                "caption": shown,
                "scatter": scatter,
                "radar": radar,
                "sensitivity": sensitivity,
                "energy": energy,
            },
        )

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        link = EvalitaLink.of(state)
        board = views.current_board(ctx)
        num_fewshot = link.shots.num_fewshot
        assert num_fewshot is not None
        chosen = views.pick_runs(board, link.models)
        notices = tuple(
            Notice("model", key, "the others")
            for key in link.models
            if key not in {ref.key for ref in chosen}
        )
        keys = [ref.key for ref in chosen] or views.top_runs(board, 3, num_fewshot)
        runs = views.pick_runs(board, keys)
        ranking = views.ranking_view(
            board, link.shots, views.RankingFilters(show_noncomparable=link.all_runs)
        )
        scatter = plots.cps_vs_params(ranking.shown)
        measured = energy_points(board, ranking.table, num_fewshot)
        energy = (
            plots.cps_vs_energy(measured.points, measured.gpu_model, WH_PER_1000)
            if measured.gpu_model is not None
            else None
        )
        radar = plots.radar(views.radar_data(board, runs, num_fewshot), [t.abbrev for t in SUITE])
        sensitivity = plots.prompt_sensitivity(views.sensitivity_data(board, num_fewshot, link.all_runs))
        missing = [
            what
            for what, figure in (
                ("size plot (no model with a parameter count and an average CPS)", scatter),
                ("radar (choose up to six models)", radar),
                ("prompt sensitivity (no results)", sensitivity),
            )
            if figure is None
        ]
        caption = (
            f"Nothing to draw for the {link.shots.label} setting: " + "; ".join(missing) if missing else ""
        )
        return Rendered(
            values={
                "models": Choices(views.shown_choices(board, keys), keys),
                "caption": caption,
                "scatter": scatter,
                "radar": radar,
                "sensitivity": sensitivity,
                "energy": energy,
            },
            state=state.with_values(models=tuple(ref.key for ref in chosen)),
            notices=notices,
        )
