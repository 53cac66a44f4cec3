"""The "Contamination" tab: per model × set, the order test's p-values, CoDeC with its band, the cost.

Reads the track's records from the app's one read of the store (``ctx.track_records``); the table
comes from :mod:`.tables` (no gradio).  Cells are shown as text by the Dataframe (never as HTML).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import gradio as gr

from leaderboard.state import PageState
from leaderboard.tracks.contamination.app.tables import set_table, shown_table
from leaderboard.tracks.contamination.definition import ALPHA, EVIDENCE, TRACK
from leaderboard.ui.common import Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.tab import Rendered, Tab, TabParts

if TYPE_CHECKING:  # a tab's build receives the page it is wired into
    from leaderboard.ui.page import Page

INTRO = (
    "Does a model show **" + EVIDENCE + "**? Per public test set of the suite: the sharded order test "
    f"(Oren et al. 2023; Holm-adjusted over a run's sets, flagged below {ALPHA:.0%}) and CoDeC (Zawalski et "
    "al. 2026: the share of items whose log-likelihood drops when other items of the set come first, with "
    "its 95 % interval, placed against the band of the board's other models on the same set). A signal "
    "about one published order, never an accusation: a model trained on shuffled or paraphrased items "
    "passes the order test. It changes no score; the Ranking marks a run's task cell with ⚑ only when the order "
    "test flags that task's set. The About tab says what each test can and cannot show."
)
EMPTY = "No contamination run yet: `python -m eval_queue submit MODEL --track contamination`."


class ContaminationTab(Tab):
    id = "contamination"
    label = "Contamination"

    def build(self, page: Page) -> TabParts:
        gr.Markdown(INTRO, elem_id="ct-intro")
        status = gr.Markdown(elem_id="ct-status")
        table = gr.Dataframe(interactive=False, wrap=True, max_height=640, elem_id="ct-table")
        return TabParts(controls={}, outputs={"status": status, "table": table})

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        records = ctx.track_records(TRACK)
        frame = set_table(records)
        if frame.empty:
            status = EMPTY
        else:
            flagged = int((frame["evidence"] == EVIDENCE).sum())
            status = (
                f"{len(records)} run(s), {len(frame)} set result(s); {flagged} with evidence at the "
                f"{ALPHA:.0%} family-wise level. Runs on sample data or with a limit are labelled in *data*."
            )
        return Rendered(
            {"status": status, "table": Table(shown_table(frame), link_models=False, precision=1)}
        )
