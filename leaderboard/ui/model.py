"""Model page: CPS vs the field, prompt sensitivity, 0- vs 5-shot, run metadata, answers."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import gradio as gr
import pandas as pd

from eval_queue.errors import EvalitaError
from eval_queue.safe_json import DETAILS_FILE_MAX_BYTES
from leaderboard import plots, views
from leaderboard.schema import DetailRecord, details_file_name, parse_details
from leaderboard.suite import SUITE, TASKS
from leaderboard.ui.common import table_update
from leaderboard.ui.context import AppContext

logger = logging.getLogger(__name__)


@dataclass
class ModelTab:
    model: gr.Dropdown
    setting: gr.Radio
    header: gr.Markdown
    vs_field: gr.Plot
    vs_field_table: gr.Dataframe
    spread: gr.Plot
    settings_table: gr.Dataframe
    metadata: gr.Dataframe
    d_task: gr.Dropdown
    d_prompt: gr.Dropdown
    d_status: gr.Markdown
    d_table: gr.Dataframe

    @property
    def outputs(self) -> list[gr.components.Component]:
        return [
            self.header,
            self.vs_field,
            self.vs_field_table,
            self.spread,
            self.settings_table,
            self.metadata,
        ]

    @property
    def detail_outputs(self) -> list[gr.components.Component]:
        return [self.d_status, self.d_table]


def build() -> ModelTab:
    with gr.Row():
        model = gr.Dropdown([], label="Model", elem_id="model-pick", scale=3, allow_custom_value=True)
        setting = gr.Radio(
            [("0-shot", "0"), ("5-shot", "5")], value="0", label="Setting", elem_id="model-setting"
        )
    header = gr.Markdown(elem_id="model-header")
    with gr.Row():
        vs_field = gr.Plot(elem_id="model-vs-field")
        spread = gr.Plot(elem_id="model-spread")
    vs_field_table = gr.Dataframe(interactive=False, elem_id="model-vs-field-table")
    gr.Markdown("#### Zero-shot vs 5-shot")
    settings_table = gr.Dataframe(interactive=False, elem_id="model-settings")
    gr.Markdown("#### How it was run")
    metadata = gr.Dataframe(interactive=False, elem_id="model-metadata")
    with gr.Accordion(
        "Answers (per task and prompt, where the run kept details)", open=False, elem_id="model-details"
    ):
        with gr.Row():
            d_task = gr.Dropdown(
                [(f"{t.abbrev} — {t.name}", t.id) for t in SUITE],
                value=SUITE[0].id,
                label="Task",
                elem_id="details-task",
            )
            d_prompt = gr.Dropdown(
                list(SUITE[0].prompt_ids),
                value=SUITE[0].prompt_ids[0],
                label="Prompt",
                elem_id="details-prompt",
            )
        d_status = gr.Markdown()
        d_table = gr.Dataframe(
            interactive=False,
            wrap=True,
            max_height=520,
            column_widths=["6%", "54%", "20%", "12%", "8%"],
            elem_id="details-table",
        )
    return ModelTab(
        model,
        setting,
        header,
        vs_field,
        vs_field_table,
        spread,
        settings_table,
        metadata,
        d_task,
        d_prompt,
        d_status,
        d_table,
    )


def choices_update(ctx: AppContext, current: str | None):
    choices = views.run_choices(ctx.results())
    keys = [key for _, key in choices]
    best = views.top_runs(ctx.results(), 1)
    value = current if current in keys else (best[0] if best else (keys[0] if keys else None))
    return gr.Dropdown(choices=choices, value=value), value


def render(ctx: AppContext, key, setting):
    board = ctx.results()
    runs = views.pick_runs(board, [key] if key else [])
    if not runs:
        empty = pd.DataFrame()
        return (
            "Pick a model (none evaluated yet)." if not views.run_choices(board) else "Pick a model.",
            plots.model_vs_field(empty, ""),
            table_update(
                pd.DataFrame(columns=["Task", "CPS", "Field median", "Field best"]), link_models=False
            ),
            plots.prompt_spread(empty),
            table_update(
                pd.DataFrame(columns=["Task", "CPS 0-shot", "CPS 5-shot", "Δ (5 − 0)"]), link_models=False
            ),
            table_update(views.run_metadata_view(board, None), link_models=False),
        )
    run = runs[0]
    num_fewshot = 5 if setting == "5" else 0
    field = views.model_vs_field(board, run, num_fewshot)
    return (
        views.model_header_markdown(board, run),
        plots.model_vs_field(field, run[0]),
        table_update(field, link_models=False),
        plots.prompt_spread(views.model_prompt_scores(board, run, num_fewshot)),
        table_update(views.model_settings_view(board, run), link_models=False),
        table_update(views.run_metadata_view(board, run), link_models=False),
    )


def prompt_choices(task_id):
    task = TASKS.get(task_id, SUITE[0])
    return gr.Dropdown(choices=list(task.prompt_ids), value=task.prompt_ids[0])


def render_details(ctx: AppContext, key, setting, task_id, prompt_id):
    board = ctx.results()
    runs = views.pick_runs(board, [key] if key else [])
    empty = views.details_view([])
    if not runs or task_id not in TASKS:
        return "Pick a model.", table_update(empty, link_models=False)
    num_fewshot = 5 if setting == "5" else 0
    folder = views.details_path_of(board, runs[0], num_fewshot)
    if folder is None:
        return f"No per-sample details were kept for this model's {num_fewshot}-shot run.", table_update(
            empty, link_models=False
        )
    path = f"{folder}/{details_file_name(task_id, prompt_id or 'p1')}"
    try:
        records = _read_details(ctx, path)
    except EvalitaError as exc:
        logger.warning("cannot read details %s: %s", path, exc)
        return (
            f"No details for {views.md_text(task_id)}/{views.md_text(prompt_id)} in this run.",
            table_update(empty, link_models=False),
        )
    table = views.details_view(records)
    note = f"{len(records)} answers" + (f", first {len(table)} shown" if len(table) < len(records) else "")
    return note, table_update(table, link_models=False)


def _read_details(ctx: AppContext, path: str) -> list[DetailRecord]:
    return parse_details(ctx.stores.details.read(path, max_bytes=DETAILS_FILE_MAX_BYTES), path)
