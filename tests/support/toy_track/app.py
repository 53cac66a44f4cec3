"""The toy track's app side: its parser, its export and its tab."""

from __future__ import annotations

from collections.abc import Mapping

import gradio as gr
import pandas as pd

from leaderboard.export import ExportOptions, ExportTable, hidden_runs_note
from leaderboard.state import PageState
from leaderboard.ui.common import Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Rendered, Tab, TabParts
from tests.support.toy_track.schema import ToyResults
from tests.support.toy_track.spec import TRACK


def parse_results_file(data: bytes, path: str) -> ToyResults:
    return ToyResults.from_json(data, path)


def _table(records: Mapping[str, ToyResults], include_noncomparable: bool) -> pd.DataFrame:
    rows = [
        {"model": r.model.id, "score": round(r.score * 100, 2), "worker": r.run.worker_id, "data": r.run.data}
        for r in records.values()
        if include_noncomparable or r.comparable
    ]
    return pd.DataFrame(rows, columns=["model", "score", "worker", "data"])


def export_results(records: Mapping[str, ToyResults], options: ExportOptions) -> ExportTable:
    table = _table(records, options.include_noncomparable)
    hidden = 0 if options.include_noncomparable else sum(not r.comparable for r in records.values())
    return ExportTable(table, frozenset({"score"}), hidden_runs_note(hidden, "sample data"))


def about_markdown() -> str:
    return "### Toy track\n\nScores the length of a model id: a track for the tests."


class ToyTab(Tab):
    id = "toy"
    label = "Toy"

    def build(self, page: Page) -> TabParts:
        scores = gr.Dataframe(interactive=False, elem_id="toy-scores")
        return TabParts(controls={}, outputs={"scores": scores})

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        return Rendered({"scores": Table(_table(ctx.track_records(TRACK), True), link_models=False)})
