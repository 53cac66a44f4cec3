""" "A vs B": two runs of one setting compared task by task, with a verdict and a shareable link.

Opened from the ranking ("Compare the top two rows"), from a model's page ("Compare with…") or
by a link ``?tab=compare&a=<run key>&b=<run key>[&shots=5]``.  Without ``a``/``b`` it compares
the two best ranked runs of the setting.  The views are
:mod:`leaderboard.tracks.evalita.app.views.compare`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import ClassVar

import gradio as gr
import pandas as pd

from eval_queue.vocabulary import RunRef
from leaderboard.state import Notice, PageState, UrlField
from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.evalita.app.link import URL_FIELDS, EvalitaLink
from leaderboard.tracks.evalita.app.tab.controls import setting_radio
from leaderboard.tracks.evalita.app.views import compare
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.ui.common import Choices, Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Api, Rendered, Tab, TabParts

#: The link fields of the two runs (a run key each: ``RunRef.key``).
A_FIELD, B_FIELD = "a", "b"
INTRO = (
    "Is **A** better than **B**?  Per task, the difference of their CPS on the items both answered, "
    "its 95 % interval and p-value from a paired bootstrap (both runs scored on the same resampled "
    "items), Holm-adjusted over the tasks; a task's verdict is a difference only where the adjusted "
    "p-value is at most 0.05.  The address of this page links to this comparison."
)


def compare_state(state: PageState, a: str, b: str) -> PageState:
    """``state`` on the compare tab with runs ``a`` and ``b`` (run keys)."""
    return replace(state.with_values(**{A_FIELD: a, B_FIELD: b}), tab=CompareTab.id)


class CompareTab(Tab):
    id = "compare"
    label = "A vs B"
    shared_render = True
    url_fields: ClassVar[Mapping[str, UrlField]] = MappingProxyType(
        {**URL_FIELDS, A_FIELD: UrlField("", None), B_FIELD: UrlField("", None)}
    )
    apis: ClassVar[Mapping[str, Api]] = MappingProxyType(
        {"compare": Api(fields=(A_FIELD, B_FIELD, "shots"), outputs=("verdict", "table", "mean", "note"))}
    )

    def __init__(self) -> None:
        self._items = compare.ItemsCache()

    def build(self, page: Page) -> TabParts:
        gr.Markdown(INTRO, elem_id="compare-intro")
        with gr.Row():
            a = gr.Dropdown([], label="A", elem_id="compare-a", scale=3, allow_custom_value=True)
            b = gr.Dropdown([], label="B", elem_id="compare-b", scale=3, allow_custom_value=True)
            shots = setting_radio("compare-setting", scale=1)
        swap = gr.Button("⇄ Swap A and B", size="sm", scale=0, elem_id="compare-swap")
        verdict = gr.Markdown(elem_id="compare-verdict")
        note = gr.Markdown(elem_id="compare-note")
        table = gr.Dataframe(interactive=False, wrap=True, elem_id="compare-table")
        mean = gr.Markdown(elem_id="compare-mean")
        gr.Markdown("#### Items where they differ")
        task = gr.Dropdown(
            list(compare.task_choices()), value=SUITE[0].id, label="Task", elem_id="compare-task"
        )
        disagreements = gr.Dataframe(interactive=False, wrap=True, elem_id="compare-items")
        page.transition(
            [swap.click],
            lambda state: compare_state(state, str(state.get(B_FIELD) or ""), str(state.get(A_FIELD) or "")),
        )
        return TabParts(
            controls={A_FIELD: a, B_FIELD: b, "shots": shots, "task": task},
            outputs={
                A_FIELD: a,  # also their choices (the evaluated runs)
                B_FIELD: b,
                "verdict": verdict,
                "note": note,
                "table": table,
                "mean": mean,
                "disagreements": disagreements,
            },
        )

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        link = EvalitaLink.of(state)
        board = views.current_board(ctx)
        num_fewshot = link.shots.num_fewshot
        assert num_fewshot is not None
        (a, b), notices = _pair(board, state, num_fewshot)
        choices = views.shown_choices(board, [ref.key for ref in (a, b) if ref is not None])
        values: dict[str, object] = {
            A_FIELD: Choices(choices, a.key if a else None),
            B_FIELD: Choices(choices, b.key if b else None),
        }
        if a is None or b is None:
            values |= {
                "verdict": "Two evaluated runs are needed to compare.",
                "note": "",
                "table": Table(pd.DataFrame(columns=compare.COMPARE_HEADERS), link_models=False),
                "mean": "",
                "disagreements": Table(compare.disagreements_table(None, link.task), link_models=False),
            }
            return Rendered(values, notices=notices)
        view = compare.compare_view(board, ctx.stores.details, self._items, a, b, num_fewshot)
        values |= {
            "verdict": f"**A** = {views.md_text(compare.run_label(board, a))} · **B** = "
            f"{views.md_text(compare.run_label(board, b))} ({link.shots.label})\n\n### {view.verdict}",
            "note": view.note,
            "table": Table(view.table, link_models=False),
            "mean": view.mean,
            "disagreements": Table(
                compare.disagreements_table(view.comparison, link.task), link_models=False
            ),
        }
        shown = compare_state(state, a.key, b.key)
        return Rendered(values, state=replace(shown, tab=state.tab), notices=notices)


def _pair(
    board: views.Board, state: PageState, num_fewshot: int
) -> tuple[tuple[RunRef | None, RunRef | None], tuple[Notice, ...]]:
    """The runs the page compares: the link's, else the two best ranked of the setting (with a
    notice for a key that names no evaluated run)."""
    best = [views.run_of_key(board, key) for key in views.top_runs(board, 3, num_fewshot)]
    notices = []
    chosen: list[RunRef | None] = []
    for name in (A_FIELD, B_FIELD):
        given = str(state.get(name) or "")
        run = views.run_of_key(board, given) if given else None
        fallback = next((r for r in best if r is not None and r not in chosen), None)
        if given and run is None:
            notices.append(Notice(name, given, fallback.model if fallback else "no run"))
        chosen.append(run or fallback)
    return (chosen[0], chosen[1]), tuple(notices)
