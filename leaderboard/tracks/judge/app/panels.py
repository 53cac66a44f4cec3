"""What the judge track adds to the Evalita pages (``Panel``s registered in ``leaderboard.ui.registry``).

* :class:`TaskJudgePanel` — on a generative task's page (SUM): per judged run, each judge's
  mean score per criterion (judge id and revision, unparsed rate) beside the run's own
  metric per prompt (ROUGE-1 for SUM);
* :class:`ModelJudgePanel` — on a model's page: its five criterion means from every judge.

Both read the judge records of the app's latest store read; the Evalita pages never import
this module.  A mean over no parsed answer is empty (shown "—", with the unparsed rate 1).
"""

from __future__ import annotations

from collections.abc import Mapping

import gradio as gr
import pandas as pd

from eval_queue.vocabulary import RunRef, short_revision
from leaderboard.core.numbers import percent
from leaderboard.state import PageState
from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.evalita.app.link import EvalitaLink
from leaderboard.tracks.evalita.definition import TASKS
from leaderboard.tracks.judge.app.records import JudgeRun
from leaderboard.tracks.judge.app.tables import (
    OVERALL,
    criterion_means_table,
    mean_column,
    unparsed_column,
)
from leaderboard.tracks.judge.definition import TRACK
from leaderboard.tracks.judge.rubric import CRITERIA
from leaderboard.ui.common import Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.tab import Component, Panel

#: Criterion means as headed in both panels (the overall mean pools the five).
MEAN_LABELS: Mapping[str, str] = {
    **{mean_column(c): c.label.lower() for c in CRITERIA},
    mean_column(OVERALL): "mean",
    unparsed_column(OVERALL): "unparsed",
}
NO_SCORE_NOTE = "— : no parsed answer (the unparsed share is in its own column, never counted as a score)."


def _judge_label(frame: pd.DataFrame) -> list[str]:
    return [f"{j}@{short_revision(r)}" for j, r in zip(frame["judge"], frame["judge_revision"], strict=True)]


def _judge_runs(ctx: AppContext) -> list[JudgeRun]:
    return list(ctx.track_records(TRACK).values())


def task_panel_table(ctx: AppContext, task_id: str, num_fewshot: int) -> pd.DataFrame:
    """One row per (judged run, judge) of ``task_id`` in this setting: its metric per prompt, then the means."""
    means = criterion_means_table(_judge_runs(ctx), task=task_id)
    means = means[means["num_fewshot"] == num_fewshot]
    task = TASKS[task_id]
    scores = views.current_board(ctx).loaded.prompt_scores
    shown = pd.DataFrame({"model": means["model"], "data": means["data"], "judge": _judge_label(means)})
    for prompt in task.prompt_ids:
        column = f"{task.metric_label} {prompt}"
        shown[column] = [
            percent(scores.get((m, r, p, k), {}).get(task_id, {}).get(prompt))
            for m, r, p, k in zip(
                means["model"],
                means["model_revision"],
                means["model_precision"],
                means["num_fewshot"],
                strict=True,
            )
        ]
        shown[column] = shown[column].astype("Float64")
    for column, label in MEAN_LABELS.items():
        shown[label] = means[column].to_numpy()
    return shown.reset_index(drop=True)


def model_panel_table(ctx: AppContext, run: RunRef, num_fewshot: int) -> pd.DataFrame:
    """The judged runs of ``run`` in this setting: per task and judge, the five criterion means."""
    means = criterion_means_table(_judge_runs(ctx), model=run.model)
    means = means[
        (means["model_revision"] == run.revision)
        & (means["model_precision"] == run.precision)
        & (means["num_fewshot"] == num_fewshot)
    ]
    shown = pd.DataFrame(
        {
            "task": [TASKS[t].abbrev for t in means["task"]],
            "data": means["data"],
            "judge": _judge_label(means),
        }
    )
    for column, label in MEAN_LABELS.items():
        shown[label] = means[column].to_numpy()
    return shown.reset_index(drop=True)


def _build_panel(panel_id: str, title: str) -> dict[str, Component]:
    """A hidden box (shown when there are judge scores) with a title, a caption and a table;
    elem ids ``<panel_id>-panel``, ``-caption``, ``-table``."""
    with gr.Column(visible=False, elem_id=f"{panel_id}-panel") as box:
        gr.Markdown(f"#### {title}")
        caption = gr.Markdown(elem_id=f"{panel_id}-caption")
        table = gr.Dataframe(interactive=False, elem_id=f"{panel_id}-table")
    return {"box": box, "caption": caption, "table": table}


class TaskJudgePanel(Panel):
    id = "judge-task"

    def build(self) -> Mapping[str, Component]:
        return _build_panel(self.id, "Rubric scores from LLM judges (1–5, Donati et al.)")

    def render(self, ctx: AppContext, state: PageState) -> Mapping[str, object]:
        link = EvalitaLink.of(state)
        num_fewshot = link.shots.num_fewshot
        assert num_fewshot is not None
        shown = task_panel_table(ctx, link.task, num_fewshot)
        caption = (
            f"Each judge's mean score per criterion over the run's outputs of {views.md_text(TASKS[link.task].abbrev)}, "
            f"beside the task's own metric (0–100). {NO_SCORE_NOTE}"
        )
        return {"box": gr.update(visible=not shown.empty), "caption": caption, "table": Table(shown)}


class ModelJudgePanel(Panel):
    id = "judge-model"

    def build(self) -> Mapping[str, Component]:
        return _build_panel(self.id, "Rubric scores of this model's outputs (LLM judges, 1–5)")

    def render(self, ctx: AppContext, state: PageState) -> Mapping[str, object]:
        link = EvalitaLink.of(state)
        num_fewshot = link.shots.num_fewshot
        assert num_fewshot is not None
        board = views.current_board(ctx)
        run = views.run_of_key(board, link.model) if link.model else None
        if run is None:
            best = views.top_runs(board, 1)
            run = views.run_of_key(board, best[0]) if best else None
        shown = model_panel_table(ctx, run, num_fewshot) if run is not None else pd.DataFrame()
        return {
            "box": gr.update(visible=not shown.empty),
            "caption": f"The five criterion means each judge gave this model's outputs. {NO_SCORE_NOTE}",
            "table": Table(shown, link_models=False),
        }
