"""The "Judges" tab: the judges table (paper Table 1), their agreement heatmap, score distributions.

Views are computed by :mod:`leaderboard.tracks.judge.app.tables` from the judge records of the
app's latest store read (``AppContext.track_records``); this module only lays them out.
A figure that could not be computed is shown as *not enough data*, never as NaN or 0.
Only paper-protocol runs in full are listed unless "all runs" is ticked — those comparable with
Table 1 (on the data pinned as the paper's) first, those on other data beside them, labelled; the table shows one annotated set at a time (the selector, kept in the
link as ``judge_set``: the set's SHA-256), so judges of different sets are never ranked together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

import gradio as gr
import pandas as pd

from eval_queue.vocabulary import short_revision
from leaderboard.state import Notice, PageState, UrlField
from leaderboard.tracks.judge.app.intervals import (
    FiguresCache,
    interval_column,
    interval_table,
    vs_best_column,
)
from leaderboard.tracks.judge.app.plots import (
    MAX_DISTRIBUTION_JUDGES,
    agreement_heatmap,
    distributions_figure,
)
from leaderboard.tracks.judge.app.records import JudgeRun, latest
from leaderboard.tracks.judge.app.tables import (
    ALL_ANSWERS_COLUMNS,
    NOT_ENOUGH_DATA,
    OVERALL,
    SCOPES,
    AnnotatedSetChoice,
    TableFigure,
    agreement_table,
    annotated_sets,
    distribution_table,
    judges_table,
    stat_column,
)
from leaderboard.tracks.judge.definition import TRACK, Criterion, JudgeMode
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.tracks.judge.schema import JudgeStanding
from leaderboard.ui.common import Choices, Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Api, Rendered, Tab, TabParts
from leaderboard.views.common import interval_text

#: The link field of the heatmap's criterion (``overall`` pools the five).
CRITERION_FIELD = "judge_criterion"
#: The link field of the annotated set shown (its SHA-256; files without one: their data label).
SET_FIELD = "judge_set"
CRITERION_CHOICES: tuple[str, ...] = (OVERALL, *(c.value for c in CRITERIA))

#: How the table's figures are headed (Table 1's symbols).
FIGURE_LABELS: Mapping[TableFigure, str] = MappingProxyType(
    {
        TableFigure.RHO: "ρ",
        TableFigure.P: "p",
        TableFigure.MAE: "MAE",
        TableFigure.BIAS: "bias",
        TableFigure.UNPARSED: "unparsed",
        TableFigure.N: "n",
    }
)
#: The figures shown per criterion (``n`` only overall: every criterion has the set's items).
CRITERION_FIGURES = tuple(f for f in TableFigure if f is not TableFigure.N)

INTRO = (
    "Models acting as **judges** of Italian summaries, compared with people on an annotated set "
    "(Donati et al., Table 1): Spearman's **ρ** with its **p**-value and the mean absolute error "
    "(**MAE**) per criterion and over all criteria, the **bias** (mean judge score − mean human score: "
    "above 0, the judge is more generous than people) and the share of **unparsed** answers, which are "
    "never counted as scores.  Beside ρ and MAE, their 95 % interval (a bootstrap over the annotated "
    "items); **vs best ρ** says whether a judge's overall ρ is *not distinguishable* from the best "
    "judge's on the same set (paired test, Holm-corrected).  Listed by default: judges run with the "
    "**paper's protocol** (Appendix A's few-shot prompts, the model's own generation settings) in full "
    "on a real annotated set — the same measurement as Table 1; judges are ranked only against judges "
    "of the same set.  Click a column header to sort.  The rubric is on the About page."
)


def scope_label(scope: Criterion | str) -> str:
    return "overall" if scope == OVERALL else Criterion(scope).label.lower()


#: The figures shown with their 95 % interval beside them.
CI_FIGURES = (TableFigure.RHO, TableFigure.MAE)
VS_BEST = "vs best ρ"


def display_table(table: pd.DataFrame, intervals: pd.DataFrame | None = None) -> pd.DataFrame:
    """The judges table as shown: judge, revision, data, whether its overall ρ is distinguishable
    from the best judge's, then Table 1's figures per scope, ρ and MAE each followed by its 95 %
    interval (``—`` without one)."""
    if intervals is not None:
        table = table.merge(intervals, on="results_path", how="left")
    columns: dict[str, str] = {
        "judge": "judge",
        "revision": "revision",
        "precision": "precision",
        "protocol": "protocol",
        "data": "data",
        "standing": "standing",
    }
    for scope in SCOPES:
        figures = TableFigure if scope == OVERALL else CRITERION_FIGURES
        for figure in figures:
            columns[stat_column(scope, figure)] = f"{scope_label(scope)} {FIGURE_LABELS[figure]}"
        if scope == OVERALL:
            # ρ with every answer counted (an unparsed one at its worst): Table 1's n.
            columns[ALL_ANSWERS_COLUMNS[0]] = f"{scope_label(scope)} ρ (unparsed at worst)"
    shown = table[list(columns)].rename(columns=columns)
    shown["revision"] = [short_revision(r) for r in shown["revision"]]
    n = f"{scope_label(OVERALL)} {FIGURE_LABELS[TableFigure.N]}"
    shown[n] = shown[n].astype("Int64")
    if intervals is None:
        return shown
    shown.insert(4, VS_BEST, table[vs_best_column(OVERALL)].fillna("—").astype(str).to_numpy())
    for scope in SCOPES:
        for figure in CI_FIGURES:
            label = f"{scope_label(scope)} {FIGURE_LABELS[figure]}"
            ends = (table[interval_column(scope, figure, end)] for end in ("low", "high"))
            texts = [interval_text(low, high, figure.decimals) for low, high in zip(*ends, strict=True)]
            shown.insert(shown.columns.get_loc(label) + 1, f"{label} 95% CI", texts)
    return shown


def chosen_set(sets: Sequence[AnnotatedSetChoice], asked: str | None) -> tuple[str | None, Notice | None]:
    """The set to show: the link's when listed, else the one with most judges (and a notice if the
    link asked for a set that is not listed)."""
    keys = [s.key for s in sets]
    if asked in keys:
        return asked, None
    shown = keys[0] if keys else None
    if asked:
        return shown, Notice(SET_FIELD, asked, sets[0].label if sets else "no set")
    return shown, None


def _criterion(state: PageState) -> Criterion | None:
    value = state.get(CRITERION_FIELD) or OVERALL
    return None if value == OVERALL else Criterion(str(value))


def _caption(
    runs: Sequence[JudgeRun],
    shown: pd.DataFrame,
    all_runs: bool,
    chosen: AnnotatedSetChoice | None,
    n_sets: int,
) -> str:
    meta = [r for r in latest(runs) if r.mode is JudgeMode.META]
    hidden = 0 if all_runs else sum(not r.listed for r in meta)
    if not meta:
        return "No judge has been evaluated yet: submit a model with `--track judge`."
    if chosen is None:
        text = "No paper-protocol judge run yet (the paper protocol, run in full on a real annotated set)."
    else:
        digest = f" (SHA-256 `{chosen.sha256}`)" if chosen.sha256 else ""
        text = f"{len(shown)} judge run(s) on the annotated set **{chosen.name}**{digest}."
        other = sum(
            r.standing is JudgeStanding.PAPER_OTHER_DATA for r in meta if r.annotated_set == chosen.key
        )
        if other and not shown.empty:
            text += (
                f" {other} of them ran the paper protocol on other data (an examples file or set whose "
                "SHA-256 is not the one pinned as the paper's): listed after the comparable ones, "
                "labelled *paper protocol, other data*, never ranked among them."
            )
        if n_sets > 1:
            text += f" {n_sets - 1} other set(s) in the selector: judges of different sets are not ranked together."
    if hidden:
        text += (
            f" {hidden} run(s) not comparable with the paper (the project protocol, the sample, a limit) "
            "are hidden: tick *Show all runs* to see them."
        )
    return text


class JudgesTab(Tab):
    id = "judges"
    label = "Judges"
    url_fields: ClassVar[Mapping[str, UrlField]] = MappingProxyType(
        {
            CRITERION_FIELD: UrlField(OVERALL, CRITERION_CHOICES),
            # The sets come from the results: the tab resolves the value when it renders.
            SET_FIELD: UrlField("", None),
        }
    )
    apis: ClassVar[Mapping[str, Api]] = MappingProxyType(
        {"judges": Api(fields=("all_runs", SET_FIELD), outputs=("table", "heatmap", "distributions"))}
    )

    def __init__(self) -> None:
        self._figures = FiguresCache()  # each judge file's bootstrap, once per parsed file

    def build(self, page: Page) -> TabParts:
        gr.Markdown(INTRO, elem_id="judges-intro")
        all_runs = gr.Checkbox(
            value=False,
            label="Show all runs (the project protocol, the sample, limited runs)",
            elem_id="judges-all-runs",
        )
        annotated = gr.Dropdown(
            [], label="Annotated set", elem_id="judges-set", allow_custom_value=True, interactive=True
        )
        caption = gr.Markdown(elem_id="judges-caption")
        table = gr.Dataframe(interactive=False, max_height=520, pinned_columns=1, elem_id="judges-table")
        gr.Markdown("#### Agreement between judges (Spearman's ρ on the items both scored)")
        criterion = gr.Radio(
            [(scope_label(c), c) for c in CRITERION_CHOICES],
            value=OVERALL,
            label="Criterion",
            elem_id="judges-criterion",
        )
        heatmap_caption = gr.Markdown(elem_id="judges-heatmap-caption")
        heatmap = gr.Plot(elem_id="judges-heatmap", visible=False)
        distributions = gr.Plot(elem_id="judges-distributions", visible=False)
        return TabParts(
            controls={"all_runs": all_runs, SET_FIELD: annotated, CRITERION_FIELD: criterion},
            outputs={
                SET_FIELD: annotated,  # also its choices (the sets in the store)
                "caption": caption,
                "table": table,
                "heatmap_caption": heatmap_caption,
                "heatmap": heatmap,
                "distributions": distributions,
            },
        )

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        runs: list[JudgeRun] = list(ctx.track_records(TRACK).values())
        # The ranking's scope checkbox (a link field of the default track's tabs); unset: comparable only.
        all_runs = bool(state.get("all_runs"))
        sets = annotated_sets(runs, include_noncomparable=all_runs)
        asked = state.get(SET_FIELD)
        data, notice = chosen_set(sets, str(asked) if asked else None)
        chosen = next((s for s in sets if s.key == data), None)
        table = (
            judges_table(runs, include_noncomparable=all_runs, annotated_set=data)
            if data is not None
            else judges_table([], include_noncomparable=True)
        )
        intervals = interval_table(runs, include_noncomparable=all_runs, cache=self._figures)
        criterion = _criterion(state)
        heatmap = distributions = None
        note = ""
        if chosen is not None:
            scope = scope_label(criterion or OVERALL)
            matrix = agreement_table(runs, chosen.key, criterion, include_noncomparable=all_runs)
            heatmap = agreement_heatmap(matrix, f"Agreement on {chosen.name}, {scope}")
            counts = distribution_table(runs, chosen.key, include_noncomparable=all_runs)
            judges = list(dict.fromkeys(counts["judge"]))[:MAX_DISTRIBUTION_JUDGES]
            distributions = distributions_figure(counts, judges)
            note = f"Judges run on the annotated set **{chosen.name}**" + (
                f" (first {MAX_DISTRIBUTION_JUDGES} in the distributions)." if len(judges) > 1 else "."
            )
        # A set the link named is not listed: the link says what is shown.
        shown_state = state.with_values(**{SET_FIELD: None}) if notice is not None else None
        return Rendered(
            state=shown_state,
            notices=(notice,) if notice else (),
            values={
                SET_FIELD: Choices(tuple((s.label, s.key) for s in sets), data),
                "caption": _caption(runs, table, all_runs, chosen, len(sets)),
                "table": Table(
                    display_table(table, intervals), link_models=False, precision=3, na_rep=NOT_ENOUGH_DATA
                ),
                "heatmap_caption": note,
                "heatmap": heatmap,
                "distributions": distributions,
            },
        )
