"""What the contamination track adds to the Evalita pages: the evidence panel of a model's page.

:class:`ModelContaminationPanel` shows the sets of the model's latest contamination run (the
revision of the run the page shows; any revision when it has none of that one), with the same
wording as the tab.  The Evalita pages never import this module.
"""

from __future__ import annotations

from collections.abc import Mapping

import gradio as gr
import pandas as pd

from leaderboard.state import PageState
from leaderboard.tracks.contamination.app.tables import model_evidence
from leaderboard.tracks.contamination.definition import ALPHA, EVIDENCE, TRACK
from leaderboard.tracks.evalita.app import views
from leaderboard.ui.common import Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.tab import Component, Panel

CAPTION = (
    f"Whether this model shows {EVIDENCE} (order test, Holm-adjusted, flagged below {ALPHA:.0%}), and its "
    "CoDeC score against the other models' band. A signal about one published order, not an accusation; "
    "see the Contamination tab and the About page."
)


class ModelContaminationPanel(Panel):
    id = "contamination-model"

    def build(self) -> Mapping[str, Component]:
        with gr.Column(visible=False, elem_id=f"{self.id}-panel") as box:
            gr.Markdown("#### Contamination evidence (public test sets)")
            caption = gr.Markdown(elem_id=f"{self.id}-caption")
            table = gr.Dataframe(interactive=False, wrap=True, elem_id=f"{self.id}-table")
        return {"box": box, "caption": caption, "table": table}

    def render(self, ctx: AppContext, state: PageState) -> Mapping[str, object]:
        board = views.current_board(ctx)
        run = views.run_of_key(board, state.model) if state.model else None
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
