"""Task drill-down: description, prompts, models × prompts, the prompt side, a heatmap."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from leaderboard import plots, views
from leaderboard.suite import SUITE, TASKS
from leaderboard.ui.common import table_update
from leaderboard.ui.context import AppContext

TASK_CHOICES = tuple((f"{t.abbrev} — {t.name}", t.id) for t in SUITE)
FEWSHOT_CHOICES = (("0-shot", "0"), ("5-shot", "5"))


@dataclass
class TaskTab:
    task: gr.Dropdown
    setting: gr.Radio
    info: gr.Markdown
    prompts: gr.HTML
    models: gr.Dataframe
    prompt_side: gr.Dataframe
    heatmap: gr.Plot

    @property
    def outputs(self) -> list[gr.components.Component]:
        return [self.info, self.prompts, self.models, self.prompt_side, self.heatmap]


def build() -> TaskTab:
    with gr.Row():
        task = gr.Dropdown(list(TASK_CHOICES), value=SUITE[0].id, label="Task", elem_id="task-pick", scale=3)
        setting = gr.Radio(list(FEWSHOT_CHOICES), value="0", label="Setting", elem_id="task-setting", scale=1)
    info = gr.Markdown(elem_id="task-info")
    with gr.Accordion("Prompts (Italian text and answer options)", open=True):
        prompts = gr.HTML(elem_id="task-prompts")
    gr.Markdown("#### Models × prompts (score per prompt, then MaxP, AvgP, CPS and the best prompt)")
    models = gr.Dataframe(interactive=False, max_height=520, pinned_columns=1, elem_id="task-models")
    gr.Markdown("#### Prompts across the models shown (MinP, MaxP, AvgP, CPS per prompt)")
    prompt_side = gr.Dataframe(interactive=False, elem_id="task-prompt-side")
    heatmap = gr.Plot(elem_id="task-heatmap")
    return TaskTab(task, setting, info, prompts, models, prompt_side, heatmap)


def render(ctx: AppContext, task_id, setting, all_runs):
    task_id = task_id if task_id in TASKS else SUITE[0].id
    num_fewshot = 5 if setting == "5" else 0
    board = ctx.results()
    models = views.task_models_view(board, task_id, num_fewshot, bool(all_runs))
    side = views.prompt_side_view(board, task_id, num_fewshot, bool(all_runs))
    prompt_ids = [p.id for p in TASKS[task_id].prompts]
    title = f"{TASKS[task_id].abbrev}, {num_fewshot}-shot: score per model and prompt"
    return (
        views.task_info_markdown(task_id),
        views.prompts_html(task_id),
        table_update(models),
        table_update(side, link_models=False),
        plots.heatmap(models, prompt_ids, title),
    )
