"""Model page: CPS vs its field, prompt scores (± stderr), 0- vs 5-shot, how it was run (its cost),
how to run it again (the recipe, copyable), answers,
and the panels other tracks contribute to a model's page."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

import gradio as gr

from eval_queue.errors import MalformedFileError, StorageError
from eval_queue.vocabulary import RunRef
from leaderboard.state import Notice, PageState, UrlField
from leaderboard.tracks.evalita.app import plots, views
from leaderboard.tracks.evalita.app.link import URL_FIELDS, EvalitaLink
from leaderboard.tracks.evalita.app.records import read_details
from leaderboard.tracks.evalita.app.tab.compare import compare_state
from leaderboard.tracks.evalita.app.tab.controls import metrics_switch, setting_radio
from leaderboard.tracks.evalita.app.views.compare import neighbour
from leaderboard.tracks.evalita.app.views.metrics import run_metrics_note
from leaderboard.tracks.evalita.definition import SUITE, TASKS
from leaderboard.ui.common import Choices, CodeBlock, HtmlTable, Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Api, Panel, Rendered, Tab, TabParts, build_panels, render_panels

logger = logging.getLogger(__name__)

DETAILS_OUTPUTS = ("details_status", "details")


class ModelTab(Tab):
    id = "model"
    label = "Model"
    #: Evalita's link fields (:mod:`leaderboard.tracks.evalita.app.link`), shared by its tabs.
    url_fields: ClassVar[Mapping[str, UrlField]] = URL_FIELDS
    shared_render = True
    apis: ClassVar[Mapping[str, Api]] = MappingProxyType(
        {
            "model": Api(
                fields=("model", "shots", "metrics"),
                outputs=("header", "vs_field", "vs_field_table", "spread", "settings", "metadata", "recipe"),
            ),
            "details": Api(
                fields=("model", "shots", "answers_task", "answers_prompt"), outputs=DETAILS_OUTPUTS
            ),
        }
    )

    def __init__(self, panels: Sequence[Panel] = ()) -> None:
        self.panels = tuple(panels)

    def build(self, page: Page) -> TabParts:
        with gr.Row():
            model = gr.Dropdown([], label="Model", elem_id="model-pick", scale=3, allow_custom_value=True)
            shots = setting_radio("model-setting")
            metrics = metrics_switch("model-metrics")
        header = gr.Markdown(elem_id="model-header")
        compare_with = gr.Button(
            "A vs B: compare with the next run in the ranking", size="sm", elem_id="model-compare"
        )
        page.transition([compare_with.click], lambda state: _compare_with(page.ctx, state))
        field_note = gr.Markdown(elem_id="model-field-note")
        with gr.Row():
            vs_field = gr.Plot(elem_id="model-vs-field", visible=False)
            spread = gr.Plot(elem_id="model-spread", visible=False)
        vs_field_table = gr.Dataframe(interactive=False, elem_id="model-vs-field-table")
        gr.Markdown("#### Prompt scores [95 % interval] (older runs: ± the harness's standard error)")
        prompt_scores = gr.HTML(elem_id="model-prompt-scores")
        gr.Markdown("#### Zero-shot vs 5-shot")
        settings = gr.HTML(elem_id="model-settings")
        gr.Markdown("#### How it was run (and what it cost)")
        metadata = gr.HTML(elem_id="model-metadata")
        gr.Markdown("#### How to run it again (the setting chosen above)")
        # A fenced block in a Markdown (its copy button is gradio's), not a gr.Code: see CodeBlock.
        recipe = gr.Markdown(elem_id="model-recipe")
        contributed = build_panels(self.panels)
        with gr.Accordion(
            "Answers (per task and prompt, where the run kept details)", open=False, elem_id="model-details"
        ):
            with gr.Row():
                answers_task = gr.Dropdown(
                    [(f"{t.abbrev} — {t.name}", t.id) for t in SUITE],
                    value=SUITE[0].id,
                    label="Task",
                    elem_id="details-task",
                )
                answers_prompt = gr.Dropdown(
                    list(SUITE[0].prompt_ids),
                    value=SUITE[0].prompt_ids[0],
                    label="Prompt",
                    elem_id="details-prompt",
                )
            details_status = gr.Markdown()
            details = gr.Dataframe(
                interactive=False,
                wrap=True,
                max_height=520,
                column_widths=["6%", "54%", "20%", "12%", "8%"],
                elem_id="details-table",
            )
        return TabParts(
            controls={
                "model": model,
                "shots": shots,
                "metrics": metrics,
                "answers_task": answers_task,
                "answers_prompt": answers_prompt,
            },
            outputs={
                "model": model,  # also its choices (the evaluated runs)
                "answers_prompt": answers_prompt,  # also its choices (the task's prompts)
                "header": header,
                "field_note": field_note,
                "vs_field": vs_field,
                "spread": spread,
                "vs_field_table": vs_field_table,
                "prompt_scores": prompt_scores,
                "settings": settings,
                "metadata": metadata,
                "recipe": recipe,
                "details_status": details_status,
                "details": details,
                **contributed,
            },
        )

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        link = EvalitaLink.of(state)
        board = views.current_board(ctx, link.metrics)
        run, notices = self._run_of(board, state)
        choices = Choices(views.shown_choices(board, [run.key] if run else []), run.key if run else None)
        prompt_ids = TASKS[link.answers_task].prompt_ids
        values: dict[str, object] = {
            "model": choices,
            "answers_prompt": Choices(tuple((p, p) for p in prompt_ids), link.answers_prompt),
            **_details(ctx, board, run, state),
            **render_panels(self.panels, ctx, state),
        }
        if run is None:
            values.update(_no_run(board))
        else:
            values.update(_run_page(board, run, state))
        # An unknown model in a link falls back to the best one: the link then names none.
        return Rendered(
            values, state=state.with_values(model=link.model if not notices else ""), notices=notices
        )

    @staticmethod
    def _run_of(board: views.Board, state: PageState) -> tuple[RunRef | None, tuple[Notice, ...]]:
        """The run the page shows: the state's, else the best ranked one (with a notice if the
        state named a run that is not evaluated)."""
        link = EvalitaLink.of(state)
        run = views.run_of_key(board, link.model) if link.model else None
        best = views.top_runs(board, 1)
        fallback = views.run_of_key(board, best[0]) if best else None
        if link.model and run is None:
            used = fallback.model if fallback else "no model"
            return fallback, (Notice("model", link.model, used),)
        return run or fallback, ()


def _compare_with(ctx: AppContext, state: PageState) -> PageState:
    """Open "A vs B" with the run this page shows as A and its neighbour in the ranking as B
    (the compare tab lets the visitor pick any other)."""
    link = EvalitaLink.of(state)
    board = views.current_board(ctx)
    run, _ = ModelTab._run_of(board, state)
    num_fewshot = link.shots.num_fewshot
    assert num_fewshot is not None
    other = neighbour(board, run, num_fewshot) if run else None
    if run is None or other is None:
        return state
    return compare_state(state, run.key, other.key)


def _no_run(board: views.Board) -> dict[str, object]:
    empty = views.model_vs_field(board, RunRef("", "", ""), 0).table
    return {
        "header": "Pick a model." if views.run_choices(board) else "No model evaluated yet.",
        "field_note": "",
        "vs_field": None,
        "spread": None,
        "vs_field_table": Table(empty, link_models=False),
        "prompt_scores": HtmlTable(views.model_prompt_table(board, RunRef("", "", ""), 0)),
        "settings": HtmlTable(views.model_settings_view(board, RunRef("", "", ""))),
        "metadata": HtmlTable(views.run_metadata_view(board, None)),
        "recipe": CodeBlock(views.model_recipe(board, None, 0)),
    }


def _run_page(board: views.Board, run: RunRef, state: PageState) -> dict[str, object]:
    link = EvalitaLink.of(state)
    num_fewshot = link.shots.num_fewshot
    assert num_fewshot is not None
    field = views.model_vs_field(board, run, num_fewshot)
    prompt_scores = views.model_prompt_scores(board, run, num_fewshot)
    banner = run_metrics_note(board, run, num_fewshot)
    return {
        "header": views.model_header_markdown(board, run) + (f"\n\n{banner}" if banner else ""),
        "field_note": field.note
        or f"No {link.shots.label} results for this model: nothing to compare with the field.",
        "vs_field": plots.model_vs_field(field.table, run.model),
        "spread": plots.prompt_spread(prompt_scores),
        "vs_field_table": Table(field.table, link_models=False),
        "prompt_scores": HtmlTable(views.model_prompt_table(board, run, num_fewshot)),
        "settings": HtmlTable(views.model_settings_view(board, run)),
        "metadata": HtmlTable(views.run_metadata_view(board, run)),
        "recipe": CodeBlock(views.model_recipe(board, run, num_fewshot)),
    }


def _details(ctx: AppContext, board: views.Board, run: RunRef | None, state: PageState) -> dict[str, object]:
    """The answers of the chosen (task, prompt) of the run, read through :mod:`leaderboard.tracks.evalita.app.records`."""
    link = EvalitaLink.of(state)
    empty = Table(views.details_view([]), link_models=False)
    if run is None:
        return {"details_status": "Pick a model.", "details": empty}
    num_fewshot = link.shots.num_fewshot
    assert num_fewshot is not None
    folder = views.details_path_of(board, run, num_fewshot)
    if folder is None:
        return {
            "details_status": f"No per-sample details were kept for this model's {link.shots.label} run.",
            "details": empty,
        }
    task, prompt = link.answers_task, link.answers_prompt
    try:
        records = read_details(ctx.stores.details, folder, task, prompt)
    except MalformedFileError as exc:  # before StorageError: an unreadable file is both
        logger.warning("malformed details %s: %s", exc.path, exc.reason)
        return {
            "details_status": f"The answers of {views.md_text(task)}/{views.md_text(prompt)} in this run "
            f"are unreadable: {views.md_text(exc.reason)}",
            "details": empty,
        }
    except StorageError as exc:
        logger.warning("cannot read the details of %s %s/%s: %s", folder, task, prompt, exc)
        return {
            "details_status": f"No details for {views.md_text(task)}/{views.md_text(prompt)} in this run.",
            "details": empty,
        }
    table = views.details_view(records)
    note = f"{len(records)} answers" + (f", first {len(table)} shown" if len(table) < len(records) else "")
    return {"details_status": note, "details": Table(table, link_models=False)}
