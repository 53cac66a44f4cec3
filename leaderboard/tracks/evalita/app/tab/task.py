"""Task drill-down: description, prompts, models × prompts, the prompt side, a heatmap, and the
panels other tracks contribute to a task's page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

import gradio as gr

from leaderboard.state import PageState, UrlField
from leaderboard.tracks.evalita.app import plots, views
from leaderboard.tracks.evalita.app.link import URL_FIELDS, EvalitaLink
from leaderboard.tracks.evalita.app.tab.controls import metrics_switch, setting_radio
from leaderboard.tracks.evalita.app.tab.ranking import open_clicked_run
from leaderboard.tracks.evalita.app.views.metrics import metrics_banner, rank_changes_markdown
from leaderboard.tracks.evalita.definition import SUITE, TASKS
from leaderboard.ui.common import KEYED_TABLE, Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Api, Panel, Rendered, Tab, TabParts, build_panels, render_panels

TASK_CHOICES = tuple((f"{t.abbrev} — {t.name}", t.id) for t in SUITE)


class TaskTab(Tab):
    id = "task"
    label = "Tasks"
    #: Evalita's link fields (:mod:`leaderboard.tracks.evalita.app.link`), shared by its tabs.
    url_fields: ClassVar[Mapping[str, UrlField]] = URL_FIELDS
    shared_render = True
    apis: ClassVar[Mapping[str, Api]] = MappingProxyType(
        {
            "task": Api(
                fields=("task", "shots", "all_runs", "metrics"),
                outputs=("info", "prompts", "models", "prompt_side", "heatmap"),
            )
        }
    )

    def __init__(self, panels: Sequence[Panel] = ()) -> None:
        self.panels = tuple(panels)

    def build(self, page: Page) -> TabParts:
        with gr.Row():
            task = gr.Dropdown(
                list(TASK_CHOICES), value=SUITE[0].id, label="Task", elem_id="task-pick", scale=3
            )
            shots = setting_radio("task-setting", scale=1)
            metrics = metrics_switch("task-metrics")
        info = gr.Markdown(elem_id="task-info")
        with gr.Accordion("Prompts (as the model reads them, and the answer options)", open=True):
            prompts = gr.HTML(elem_id="task-prompts")
        gr.Markdown("#### Models × prompts (score per prompt, then MaxP, AvgP, CPS and the best prompt)")
        shown = gr.Markdown(elem_id="task-caption")
        models = gr.Dataframe(
            interactive=False,
            max_height=520,
            pinned_columns=1,
            elem_id="task-models",
            elem_classes=[KEYED_TABLE],
        )
        with gr.Row(visible=False) as pager:
            previous = gr.Button("◀ Previous", size="sm", scale=0, elem_id="task-previous")
            following = gr.Button("Next ▶", size="sm", scale=0, elem_id="task-next")
        rank_changes = gr.Markdown(elem_id="task-rank-changes")
        gr.Markdown("#### Prompts across the models shown (MinP, MaxP, AvgP, CPS per prompt)")
        prompt_side = gr.Dataframe(interactive=False, elem_id="task-prompt-side")
        heatmap = gr.Plot(elem_id="task-heatmap", visible=False)
        contributed = build_panels(self.panels)

        page.transition([models.select], open_clicked_run, event_data=True)
        page.transition(
            [previous.click],
            lambda state: state.with_values(task_page=max(1, EvalitaLink.of(state).task_page - 1)),
        )
        page.transition(
            [following.click], lambda state: state.with_values(task_page=EvalitaLink.of(state).task_page + 1)
        )
        return TabParts(
            controls={"task": task, "shots": shots, "metrics": metrics},
            outputs={
                "info": info,
                "prompts": prompts,
                "caption": shown,
                "models": models,
                "pager": pager,
                "rank_changes": rank_changes,
                "prompt_side": prompt_side,
                "heatmap": heatmap,
                **contributed,
            },
        )

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        link = EvalitaLink.of(state)
        task = TASKS[link.task]
        num_fewshot = link.shots.num_fewshot
        assert num_fewshot is not None
        board = views.current_board(ctx, link.metrics)
        models = views.task_models_view(board, task.id, num_fewshot, link.all_runs)
        page = views.paged(models, link.task_page)
        if page.total:
            pages = f" · page {page.number} of {page.count}" if page.count > 1 else ""
            shown = f"{page.caption}{pages} · click a row to open the model's page"
        else:
            shown = f"No results for {views.md_text(task.abbrev)} in the {link.shots.label} setting yet."
        title = f"{task.abbrev}, {link.shots.label}: score per model and prompt"
        return Rendered(
            values={
                "info": "\n\n".join(
                    text
                    for text in (
                        views.task_info_markdown(task.id, board.metrics),
                        views.detectable_gaps_markdown(board, task.id, num_fewshot),
                        metrics_banner(board, link.shots),
                    )
                    if text
                ),
                "prompts": views.prompts_html(task.id),
                "caption": shown,
                "models": Table(page.rows),
                "pager": gr.update(visible=page.count > 1),
                "rank_changes": rank_changes_markdown(board, task.id, num_fewshot, link.all_runs),
                "prompt_side": Table(
                    views.prompt_side_view(board, task.id, num_fewshot, link.all_runs), False
                ),
                "heatmap": plots.heatmap(models, list(task.prompt_ids), title),
                **render_panels(self.panels, ctx, state),
            },
            state=state.with_values(task_page=page.number),
        )
