"""The landing tab: the CPS ranking with setting switch, filters, column chooser and CSV."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import gradio as gr

from eval_queue.requests import ModelType, Precision
from leaderboard import views
from leaderboard.state import TASK_COLUMNS, PageState
from leaderboard.ui.common import table_update, write_csv
from leaderboard.ui.context import AppContext

logger = logging.getLogger(__name__)

SETTING_CHOICES = tuple((views.SETTING_LABELS[k], k) for k in ("0", "5", "both"))


@dataclass
class RankingTab:
    setting: gr.Radio
    types: gr.CheckboxGroup
    sizes: gr.CheckboxGroup
    precisions: gr.CheckboxGroup
    search: gr.Textbox
    columns: gr.CheckboxGroup
    all_runs: gr.Checkbox
    banner: gr.Markdown
    table: gr.Dataframe
    download: gr.DownloadButton

    @property
    def inputs(self) -> list[gr.components.Component]:
        return [
            self.setting,
            self.types,
            self.sizes,
            self.precisions,
            self.search,
            self.columns,
            self.all_runs,
        ]

    @property
    def outputs(self) -> list[gr.components.Component]:
        return [self.banner, self.table, self.download]


def build() -> RankingTab:
    with gr.Row():
        setting = gr.Radio(
            list(SETTING_CHOICES), value="0", label="Setting", scale=2, elem_id="ranking-setting"
        )
        search = gr.Textbox(label="Search model", placeholder="e.g. llama", scale=2, elem_id="ranking-search")
        all_runs = gr.Checkbox(
            label="Show sample / limited runs (not comparable)",
            value=False,
            scale=1,
            elem_id="ranking-all-runs",
        )
    with gr.Accordion("Filters and columns", open=False, elem_id="ranking-filters"):
        with gr.Row():
            types = gr.CheckboxGroup(
                [t.value for t in ModelType], label="Model type (none = all)", elem_id="ranking-types"
            )
            sizes = gr.CheckboxGroup(
                [b.label for b in views.SIZE_BUCKETS], label="Size (none = all)", elem_id="ranking-sizes"
            )
            precisions = gr.CheckboxGroup(
                [p.value for p in Precision], label="Precision (none = all)", elem_id="ranking-precisions"
            )
        columns = gr.CheckboxGroup(
            [(views.METRIC_LABELS[c], c) for c in TASK_COLUMNS],
            value=["cps"],
            label="Per-task columns",
            elem_id="ranking-columns",
        )
    banner = gr.Markdown(elem_id="ranking-banner")
    table = gr.Dataframe(
        interactive=False,
        wrap=False,
        max_height=640,
        pinned_columns=2,
        elem_id="ranking-table",
        show_search="none",
        buttons=["fullscreen"],
    )
    download = gr.DownloadButton("Download CSV (this view)", size="sm", elem_id="ranking-csv")
    return RankingTab(setting, types, sizes, precisions, search, columns, all_runs, banner, table, download)


def filters_of(types, sizes, precisions, search, columns, all_runs) -> views.RankingFilters:
    return views.RankingFilters(
        model_types=tuple(types or ()),
        sizes=tuple(sizes or ()),
        precisions=tuple(precisions or ()),
        search=(search or "")[:200],
        columns=tuple(columns or ()) or ("cps",),
        show_noncomparable=bool(all_runs),
    )


def render(ctx: AppContext, setting, types, sizes, precisions, search, columns, all_runs):
    view = views.ranking_view(
        ctx.results(), setting or "0", filters_of(types, sizes, precisions, search, columns, all_runs)
    )
    shown = (
        f"{len(view.table)} of {view.total} evaluated runs shown · click a row to open the model's page"
        if view.total
        else "No results for this setting yet."
    )
    banner = "\n\n".join(part for part in (view.banner, shown) if part)
    csv = write_csv(ctx.download_dir, f"evalita-ranking-{setting}", view.table)
    return banner, table_update(view.table), csv


def apply_state(state: PageState) -> list:
    return [
        state.setting,
        list(state.types),
        list(state.sizes),
        list(state.precisions),
        state.search,
        list(state.columns),
        state.all_runs,
    ]
