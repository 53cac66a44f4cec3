"""The "Long context" tab: the paper's Table 5 layout, a score-by-setting plot, each question's answer.

Reads the long-context results from the app's one read of the store (``ctx.track_records``:
the shared reader, this track's parser), and the details through :func:`views.read_answers` (size-capped, safe
reader).  The view values come from :mod:`leaderboard.tracks.long_context.app.views` (escaped).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

import gradio as gr

from eval_queue.errors import MalformedFileError, NotFoundError, StorageError
from leaderboard.state import PageState, UrlField
from leaderboard.tracks.long_context.app import views as lc
from leaderboard.tracks.long_context.definition import CONTEXT_SETTINGS, TRACK
from leaderboard.tracks.long_context.schema import LongContextResults
from leaderboard.ui.common import Choices, Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.tab import Rendered, Tab, TabParts

if TYPE_CHECKING:  # a tab's build receives the page it is wired into
    from leaderboard.ui.page import Page

logger = logging.getLogger(__name__)

SETTING_CHOICES = tuple((spec.label, spec.id.value) for spec in CONTEXT_SETTINGS)


class LongContextTab(Tab):
    id = "long-context"
    label = "Long context"
    url_fields: ClassVar[Mapping[str, UrlField]] = MappingProxyType(
        {
            "lc_plot": UrlField(lc.DEFAULT_PLOT_COLUMN, tuple(v for _, v in lc.PLOT_CHOICES)),
            "lc_setting": UrlField(SETTING_CHOICES[0][1], tuple(v for _, v in SETTING_CHOICES)),
            "lc_set": UrlField(lc.ANSWER_SETS[0][1], tuple(v for _, v in lc.ANSWER_SETS)),
        }
    )

    def build(self, page: Page) -> TabParts:
        gr.Markdown(
            "INDAQA2 narrative QA over whole Italian books (CALAMITA 2026), laid out like the paper's "
            "Table 5: per context setting, a row per run; scores 0–100, the best of each column per "
            "setting in **bold**. Not part of the Evalita-LLM CPS ranking."
        )
        table = gr.HTML(elem_id="lc-table5")
        gr.Markdown(lc.METEOR_NOTE, elem_id="lc-meteor-note")
        plot_column = gr.Dropdown(
            list(lc.PLOT_CHOICES), value=lc.DEFAULT_PLOT_COLUMN, label="Plot", elem_id="lc-plot-pick"
        )
        plot = gr.Plot(elem_id="lc-plot", visible=False)
        gr.Markdown("#### Answers (per run, context setting and question set)")
        with gr.Row():
            run = gr.Dropdown([], label="Run", elem_id="lc-run", scale=3, allow_custom_value=True)
            setting = gr.Dropdown(
                list(SETTING_CHOICES), value=SETTING_CHOICES[0][1], label="Context", elem_id="lc-setting"
            )
            answer_set = gr.Dropdown(
                list(lc.ANSWER_SETS), value=lc.ANSWER_SETS[0][1], label="Question set", elem_id="lc-set"
            )
        status = gr.Markdown(elem_id="lc-answers-status")
        answers = gr.Dataframe(interactive=False, wrap=True, max_height=520, elem_id="lc-answers")
        return TabParts(
            controls={"lc_plot": plot_column, "lc_run": run, "lc_setting": setting, "lc_set": answer_set},
            outputs={
                "table": table,
                "plot": plot,
                "lc_run": run,  # also its choices (the runs in the store)
                # Also the values shown: a link without these fields shows their defaults.
                "lc_plot": plot_column,
                "lc_setting": setting,
                "lc_set": answer_set,
                "status": status,
                "answers": answers,
            },
        )

    def records(self, ctx: AppContext) -> Mapping[str, LongContextResults]:
        """The track's runs by results path, from the app's one read of the store."""
        return ctx.track_records(TRACK)

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        records = self.records(ctx)
        choices = lc.run_choices(records)
        chosen = state.get("lc_run")
        path = chosen if chosen in records else (choices[0][1] if choices else None)
        shown = {name: str(state.get(name) or spec.default) for name, spec in self.url_fields.items()}
        setting, answer_set = shown["lc_setting"], shown["lc_set"]
        status, table = _answers(ctx, records.get(path) if path else None, setting, answer_set)
        return Rendered(
            values={
                "table": lc.table5_html(records),
                "plot": lc.score_plot(records, shown["lc_plot"]),
                **shown,
                "lc_run": Choices(choices, path),
                "status": status,
                "answers": Table(table, link_models=False),
            }
        )


def _answers(
    ctx: AppContext, run: LongContextResults | None, setting: str, answer_set: str
) -> tuple[str, object]:
    """The drill-down's status line and table for one run, setting and question set."""
    empty = lc.answers_view([])
    if run is None:
        return "No long-context run yet.", empty
    if setting not in {s.value for s in run.run.context_settings}:
        return f"This run did not evaluate the {setting} setting.", empty
    if not run.run.details_path:
        return "This run kept no per-question details.", empty
    try:
        records = lc.read_answers(ctx.stores.details, run, answer_set, setting)
    except NotFoundError:
        return "No details for this question set in this run.", empty
    except MalformedFileError as exc:
        logger.warning("malformed details %s: %s", exc.path, exc.reason)
        return "The details of this question set could not be read (malformed file).", empty
    except StorageError as exc:
        logger.warning("details unavailable: %s", exc)
        return "The details store could not be read; try again later.", empty
    shown = lc.answers_view(records)
    return f"{len(records)} answers" + (
        f" (first {len(shown)} shown)" if len(shown) < len(records) else ""
    ), shown
