"""What the contamination track adds to the Evalita pages: evidence panels on the task and model pages.

:class:`TaskContaminationPanel` shows each model's latest result on the task's test set(s);
:class:`ModelContaminationPanel` shows the sets of the model's latest contamination run (the
revision of the run the page shows; any revision when it has none of that one), with the same
wording as the tab.  The Evalita pages never import this module.
"""

from __future__ import annotations

from collections.abc import Mapping

import gradio as gr
import pandas as pd

from leaderboard.state import PageState
from leaderboard.tracks.contamination.app.tables import model_evidence, task_evidence
from leaderboard.tracks.contamination.definition import ALPHA, EVIDENCE, TRACK
from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.evalita.app.link import EvalitaLink
from leaderboard.ui.common import Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.tab import Component, Panel

CAPTION = (
    f"Whether this model shows {EVIDENCE} (order test, Holm-adjusted, flagged below {ALPHA:.0%}), and its "
    "CoDeC score against the other models' band. A signal about one published order, not an accusation; "
    "see the Contamination tab and the About page."
)


def _build(panel_id: str, title: str) -> dict[str, Component]:
    """A hidden box (shown when there are rows) with a title, a caption and a table."""
    with gr.Column(visible=False, elem_id=f"{panel_id}-panel") as box:
        gr.Markdown(f"#### {title}")
        caption = gr.Markdown(elem_id=f"{panel_id}-caption")
        table = gr.Dataframe(interactive=False, wrap=True, elem_id=f"{panel_id}-table")
    return {"box": box, "caption": caption, "table": table}


class TaskContaminationPanel(Panel):
    """A task's page: each model's latest contamination result on the task's test set(s)."""

    id = "contamination-task"

    def build(self) -> Mapping[str, Component]:
        return _build(self.id, "Contamination evidence on this task's test set")

    def render(self, ctx: AppContext, state: PageState) -> Mapping[str, object]:
        link = EvalitaLink.of(state)
        shown = task_evidence(ctx.track_records(TRACK), str(link.task)) if link.task else pd.DataFrame()
        return {
            "box": gr.update(visible=not shown.empty),
            "caption": CAPTION.replace("this model shows", "each model shows"),
            "table": Table(shown, link_models=False, precision=1),
        }


class ModelContaminationPanel(Panel):
    id = "contamination-model"

    def build(self) -> Mapping[str, Component]:
        return _build(self.id, "Contamination evidence (public test sets)")

    def render(self, ctx: AppContext, state: PageState) -> Mapping[str, object]:
        link = EvalitaLink.of(state)
        board = views.current_board(ctx)
        run = views.run_of_key(board, link.model) if link.model else None
        if run is None:
            best = views.top_runs(board, 1)
            run = views.run_of_key(board, best[0]) if best else None
        records = ctx.track_records(TRACK)
        shown = pd.DataFrame()
        if run is not None:
            shown = model_evidence(records, run.model, run.revision)
            if shown.empty:
                shown = model_evidence(records, run.model, None)
        return {
            "box": gr.update(visible=not shown.empty),
            "caption": CAPTION,
            "table": Table(shown, link_models=False, precision=1),
        }
