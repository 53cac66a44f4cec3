"""The landing tab: the CPS ranking with setting switch, search, sort, filters, columns, pages, CSV."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import ClassVar

import gradio as gr
import pandas as pd

from eval_queue.requests import ModelType, Precision
from leaderboard.state import PageState, UrlField
from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.evalita.app.link import URL_FIELDS, EvalitaLink
from leaderboard.tracks.evalita.app.tab.compare import compare_state
from leaderboard.tracks.evalita.app.tab.controls import metrics_switch
from leaderboard.tracks.evalita.app.views import subsets
from leaderboard.tracks.evalita.app.views.marked import mark_task_cells
from leaderboard.tracks.evalita.app.views.metrics import metrics_banner
from leaderboard.tracks.evalita.definition import SUITE, TASKS
from leaderboard.tracks.evalita.metric_sets import DEFAULT_METRIC_SET
from leaderboard.tracks.evalita.vocabulary import RANKING_AGGREGATES, Setting
from leaderboard.ui.common import KEYED_TABLE, LazyFile, Table, write_csv
from leaderboard.ui.context import AppContext
from leaderboard.ui.markers import collect_markers
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Api, Rendered, Tab, TabParts

#: What ``/ranking`` takes (by name) and returns, for ``gradio_client``.
RANKING_API = Api(
    fields=(
        "setting",
        "types",
        "sizes",
        "precisions",
        "search",
        "columns",
        "all_runs",
        "sort",
        "ranking_page",
        "metrics",
        "avg_tasks",
        "complete",
        "kinds",
        "org_best",
    ),
    outputs=("banner", "table", "csv", "caption"),
)


def filters_of(state: PageState) -> views.RankingFilters:
    link = EvalitaLink.of(state)
    return views.RankingFilters(
        model_types=link.types,
        sizes=link.sizes,
        precisions=link.precisions,
        search=link.search,
        columns=link.columns,
        show_noncomparable=link.all_runs,
        average_over=link.avg_tasks,
        complete_only=link.complete,
        kinds=link.kinds,
        org_best=link.org_best,
    )


def open_clicked_run(state: PageState, evt: gr.SelectData) -> PageState:
    """A clicked row opens its model's page: the row's hidden key (its last cell) names the run."""
    row = evt.row_value or []
    key = row[-1] if row else None
    if not isinstance(key, str) or key == views.KEY_COLUMN:
        return state
    return replace(state.with_values(model=key), tab="model")


def compare_first_two(ctx: AppContext, state: PageState) -> PageState:
    """Open "A vs B" on the first two rows of the ranking as shown (after search, filters, sort)."""
    link = EvalitaLink.of(state)
    view = views.ranking_view(views.current_board(ctx), link.setting, filters_of(state), link.sort)
    # The rows' order and keys (the partial table: no custom tier needs filling for them).
    keys = list(view.partial[views.KEY_COLUMN][:2])
    if len(keys) < 2:
        return state
    shots = link.setting if link.setting.num_fewshot is not None else link.shots
    return compare_state(state.with_values(shots=shots), keys[0], keys[1])


def caption(view: views.RankingView, page: views.TablePage, filters: views.RankingFilters) -> str:
    """What the table shows, or why it shows nothing (a search with no match says so)."""
    if not view.total:
        return "No results for this setting yet."
    if page.total == 0:
        if filters.search.strip():
            return f"No run matches “{views.md_text(filters.search.strip())}”" + (
                " with these filters." if filters.model_types or filters.sizes or filters.precisions else "."
            )
        return "No run matches these filters."
    pages = f" · page {page.number} of {page.count}" if page.count > 1 else ""
    custom = ""
    if filters.average_over:
        names = ", ".join(TASKS[t].abbrev for t in subsets.chosen_tasks(filters.average_over))
        custom = (
            f"  \n*Avg CPS (custom)* = the mean CPS over {names} only, ordering the rows; its interval and "
            "tier are recomputed from each run's resampled task scores (*Rank* stays the ten-task rank)."
        )
    return f"{page.caption} shown{pages} · click a row to open the model's page{custom}  \n{TIER_SENTENCE}  \n{BEST_OF_SENTENCE}"


#: What the Tier column means, in one sentence (the definition ``leaderboard.core.tiers`` implements).
TIER_SENTENCE = (
    "*Tier* = 1 + the number of runs significantly better than this one (paired test on the mean "
    "CPS, Holm-corrected, α = 0.05): tier 1 means no run is significantly better."
)


#: What the Best-of-N column means (the About page says why it matters).
BEST_OF_SENTENCE = (
    "*Best of N from ORG* marks an organisation's best run among its N runs in this setting (the part "
    "of the model id before “/”): a best of many submissions is a selected score, not a typical one."
)


def _views() -> dict[str, gr.components.Component]:
    """The issue-32 views: custom average, complete results only, model kind, organisations."""
    with gr.Accordion(
        "Custom average, complete results, chat vs base, organisations", open=False, elem_id="ranking-views"
    ):
        avg_tasks = gr.CheckboxGroup(
            [(f"{t.abbrev}", t.id) for t in SUITE],
            value=[],
            label="Custom average over these tasks (none = the ten-task mean only)",
            elem_id="ranking-avg-tasks",
        )
        with gr.Row():
            kinds = gr.CheckboxGroup(
                [(subsets.KIND_LABELS[k], k) for k in subsets.MODEL_KINDS],
                value=[],
                label="Model kind (none = all; unknown: the run does not say)",
                elem_id="ranking-kinds",
            )
            complete = gr.Checkbox(
                label="Only runs with complete results (every task of the average in view)",
                value=False,
                elem_id="ranking-complete",
            )
            org_best = gr.Checkbox(
                label="Only each organisation's best run",
                value=False,
                elem_id="ranking-org-best",
            )
    return {"avg_tasks": avg_tasks, "kinds": kinds, "complete": complete, "org_best": org_best}


def _filters() -> dict[str, gr.components.Component]:
    """The folded filters and column chooser, keyed by the state field each sets."""
    with gr.Accordion("Filters and columns", open=False, elem_id="ranking-filters"):
        with gr.Row():
            types = gr.CheckboxGroup(
                [t.value for t in ModelType],
                value=[],
                label="Model type (none = all)",
                elem_id="ranking-types",
            )
            sizes = gr.CheckboxGroup(
                [b.label for b in views.SIZE_BUCKETS],
                value=[],
                label="Size (none = all)",
                elem_id="ranking-sizes",
            )
            precisions = gr.CheckboxGroup(
                [p.value for p in Precision],
                value=[],
                label="Precision (none = all)",
                elem_id="ranking-precisions",
            )
        columns = gr.CheckboxGroup(
            [(a.label, a.value) for a in RANKING_AGGREGATES],
            value=[RANKING_AGGREGATES[0].value],
            label="Per-task columns",
            elem_id="ranking-columns",
        )
    return {"types": types, "sizes": sizes, "precisions": precisions, "columns": columns}


def marked_table(ctx: AppContext, board: views.Board, rows: pd.DataFrame) -> Table:
    """The page of rows shown, its task cells marked by other tracks (``TrackSpec.ranking_markers``:
    evidence about the run), each marker a link to its evidence; the CSV stays plain."""
    markers = board.memo(("ranking-markers",), lambda: collect_markers(ctx.registry.specs(), ctx.store()))
    marked, html_columns = mark_task_cells(rows, markers)
    return Table(marked, html_columns=html_columns)


class RankingTab(Tab):
    id = "ranking"
    label = "Ranking"
    #: Evalita's link fields (:mod:`leaderboard.tracks.evalita.app.link`), shared by its tabs.
    url_fields: ClassVar[Mapping[str, UrlField]] = URL_FIELDS
    shared_render = True
    #: The other setting too: most visitors' second view (the plain one is warmed anyway).
    warm_queries: ClassVar[tuple[Mapping[str, str], ...]] = ({"setting": Setting.FIVE.value},)
    apis: ClassVar[Mapping[str, Api]] = MappingProxyType({"ranking": RANKING_API})

    def __init__(self) -> None:
        self._csv: dict[tuple, str] = {}

    def build(self, page: Page) -> TabParts:
        with gr.Row():
            setting = gr.Radio(
                [(s.label, s.value) for s in Setting],
                value=Setting.ZERO.value,
                label="Setting",
                scale=2,
                elem_id="ranking-setting",
            )
            search = gr.Textbox(
                value="", label="Search model", placeholder="e.g. llama", scale=2, elem_id="ranking-search"
            )
            sort = gr.Dropdown(
                [(label, key) for key, label in views.RANKING_SORTS.items()],
                value=views.DEFAULT_SORT,
                label="Sort by",
                scale=2,
                elem_id="ranking-sort",
            )
            all_runs = gr.Checkbox(
                label="Show sample / limited runs (not comparable)",
                value=False,
                scale=1,
                elem_id="ranking-all-runs",
            )
        metrics = metrics_switch("ranking-metrics")
        filters = _filters()
        user_views = _views()
        banner = gr.Markdown(elem_id="ranking-banner")
        shown = gr.Markdown(elem_id="ranking-caption")
        table = gr.Dataframe(
            interactive=False,
            wrap=False,
            max_height=640,
            pinned_columns=2,
            elem_id="ranking-table",
            elem_classes=[KEYED_TABLE],
            show_search="none",
            buttons=["fullscreen"],
        )
        with gr.Row(visible=False, elem_id="ranking-pager") as pager:
            previous = gr.Button("◀ Previous", size="sm", scale=0, elem_id="ranking-previous")
            following = gr.Button("Next ▶", size="sm", scale=0, elem_id="ranking-next")
        with gr.Row():
            # The file is made when asked (every row's custom tier tests the whole board): the
            # button makes it and clicks the hidden download button that holds it (Page.download).
            csv_button = gr.Button("Download CSV (this view, every row)", size="sm", elem_id="ranking-csv")
            csv = gr.DownloadButton("CSV", visible="hidden", elem_id="ranking-csv-file")
            compare = gr.Button(
                "A vs B: compare the first two rows shown", size="sm", elem_id="ranking-compare"
            )

        page.transition([table.select], open_clicked_run, event_data=True)
        page.transition(
            [previous.click],
            lambda state: state.with_values(ranking_page=max(1, EvalitaLink.of(state).ranking_page - 1)),
        )
        page.transition(
            [following.click],
            lambda state: state.with_values(ranking_page=EvalitaLink.of(state).ranking_page + 1),
        )
        page.transition([compare.click], lambda state: compare_first_two(page.ctx, state))
        page.download([csv_button.click], self, "csv")
        return TabParts(
            controls={
                "setting": setting,
                "search": search,
                "sort": sort,
                "all_runs": all_runs,
                "metrics": metrics,
                **filters,
                **user_views,
            },
            outputs={
                "banner": banner,
                "caption": shown,
                "table": table,
                "pager": pager,
                "csv": csv,
            },
        )

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        link = EvalitaLink.of(state)
        filters = filters_of(state)
        board = views.current_board(ctx, link.metrics)
        view = views.ranking_view(board, link.setting, filters, link.sort)
        page = view.page(link.ranking_page)  # its rows' custom tiers only (the CSV asks for all)
        banner = "\n\n".join(text for text in (metrics_banner(board, link.setting), view.banner) if text)
        return Rendered(
            values={
                "banner": banner,
                "caption": caption(view, page, filters),
                "table": marked_table(ctx, board, page.rows),
                "pager": gr.update(visible=page.count > 1),
                "csv": self._lazy_csv(ctx, state, board),
            },
            state=state.with_values(ranking_page=page.number),
        )

    def _lazy_csv(self, ctx: AppContext, state: PageState, board: views.Board) -> LazyFile:
        """The view's CSV, made when asked (:class:`LazyFile`): kept with the render, it holds the
        board weakly (a kept render must not keep an old snapshot alive) and the view's state."""
        link = EvalitaLink.of(state)
        key = (ctx.version, link.setting, filters_of(state), link.sort, link.metrics)
        snapshot = weakref.ref(board)

        def make() -> str:
            # The snapshot shown, while it is in memory; else the current one (newer results).
            shown = snapshot() or views.current_board(ctx, link.metrics)
            view = views.ranking_view(shown, link.setting, filters_of(state), link.sort)
            return self._csv_of(ctx, key, link, view)

        return LazyFile(repr(key), make)

    def _csv_of(self, ctx: AppContext, key: tuple, link: EvalitaLink, view: views.RankingView) -> str:
        """The view's CSV file, every row's tiers filled, written once per results version and view
        (not once per page)."""
        if key not in self._csv:
            if len(self._csv) > 64:
                self._csv.clear()
            suffix = "" if link.metrics == DEFAULT_METRIC_SET else f"-{link.metrics}"
            name = f"evalita-ranking-{link.setting.value}{suffix}"
            self._csv[key] = write_csv(ctx.download_dir, name, view.table)
        return self._csv[key]
