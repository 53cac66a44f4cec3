"""Submit a model for evaluation, and watch the queue."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import gradio as gr

from eval_queue.errors import StoreUnavailableError, SubmissionRejected
from eval_queue.ledger import duration_text
from eval_queue.requests import ModelType, Precision
from leaderboard import views
from leaderboard.ui.common import table_update
from leaderboard.ui.context import AppContext

logger = logging.getLogger(__name__)

AUTO_TYPE = "auto (from the model card)"


@dataclass
class SubmitTab:
    model: gr.Textbox
    revision: gr.Textbox
    precision: gr.Dropdown
    fewshot: gr.CheckboxGroup
    model_type: gr.Dropdown
    button: gr.Button
    result: gr.Markdown
    summary: gr.Markdown
    pending: gr.Dataframe
    running: gr.Dataframe
    finished: gr.Dataframe
    failed: gr.Dataframe
    problems: gr.Markdown

    @property
    def form(self) -> list[gr.components.Component]:
        return [self.model, self.revision, self.precision, self.fewshot, self.model_type]

    @property
    def queue_outputs(self) -> list[gr.components.Component]:
        return [self.summary, self.pending, self.running, self.finished, self.failed, self.problems]


def build() -> SubmitTab:
    gr.Markdown(
        "Submit a model from the Hugging Face Hub. It is evaluated on the ten Evalita-LLM tasks, every "
        "prompt, in the setting(s) you choose; the results appear in the ranking when the run finishes."
    )
    with gr.Row():
        model = gr.Textbox(label="Model id", placeholder="org/model-name", elem_id="submit-model", scale=3)
        revision = gr.Textbox(label="Revision", value="main", elem_id="submit-revision", scale=1)
    with gr.Row():
        precision = gr.Dropdown(
            [p.value for p in Precision],
            value=Precision.BFLOAT16.value,
            label="Precision",
            elem_id="submit-precision",
        )
        fewshot = gr.CheckboxGroup(
            [("0-shot", "0"), ("5-shot", "5")], value=["0", "5"], label="Setting(s)", elem_id="submit-fewshot"
        )
        model_type = gr.Dropdown(
            [(AUTO_TYPE, AUTO_TYPE), *[(t.value, t.value) for t in ModelType]],
            value=AUTO_TYPE,
            label="Model type",
            elem_id="submit-type",
        )
    button = gr.Button("Submit for evaluation", variant="primary", elem_id="submit-button")
    result = gr.Markdown(elem_id="submit-result")
    gr.Markdown("### Queue")
    summary = gr.Markdown(elem_id="queue-summary")
    with gr.Tabs():
        with gr.Tab("Pending", id="q-pending"):
            pending = gr.Dataframe(interactive=False, elem_id="queue-pending")
        with gr.Tab("Running", id="q-running"):
            running = gr.Dataframe(interactive=False, elem_id="queue-running")
        with gr.Tab("Finished", id="q-finished"):
            finished = gr.Dataframe(interactive=False, elem_id="queue-finished")
        with gr.Tab("Failed / cancelled", id="q-failed"):
            failed = gr.Dataframe(interactive=False, wrap=True, elem_id="queue-failed")
    problems = gr.Markdown(elem_id="queue-problems")
    return SubmitTab(
        model,
        revision,
        precision,
        fewshot,
        model_type,
        button,
        result,
        summary,
        pending,
        running,
        finished,
        failed,
        problems,
    )


def render_queue(ctx: AppContext):
    view = views.queue_view(ctx.queue_listing(), ctx.now())
    return (
        view.summary,
        table_update(view.pending, link_models=False),
        table_update(view.running, link_models=False),
        table_update(view.finished, link_models=False),
        table_update(view.failed, link_models=False),
        view.problems,
    )


def do_submit(
    ctx: AppContext,
    model,
    revision,
    precision,
    fewshot,
    model_type,
    request: gr.Request | None = None,
    profile: gr.OAuthProfile | None = None,
):
    """Run the submission; the refusal message is shown exactly as the validator wrote it.

    The submitter (for the per-submitter rate limit and queue fairness) is the Hugging Face
    sign-in when there is one, else a salted hash of the client address; with sign-in
    required an anonymous submission is refused (:mod:`eval_queue.identity`).
    """
    try:
        who = ctx.submitter(request, profile)
        created = ctx.submit(
            model=(model or "").strip(),
            revision=(revision or "").strip() or "main",
            precision=precision,
            fewshot=[int(k) for k in (fewshot or [])],
            model_type=None if model_type in (None, "", AUTO_TYPE) else model_type,
            submitted_by=who,
        )
    except (SubmissionRejected, StoreUnavailableError) as exc:
        return views.rejected_markdown(exc.message), *render_queue(ctx)
    return views.submitted_markdown(created) + "\n\n" + _quota_line(ctx, who), *render_queue(ctx)


def _quota_line(ctx: AppContext, who: str) -> str:
    settings = ctx.settings
    return (
        f"Queued as {views.md_text(who)}; limit {settings.submission_limit} per "
        f"{duration_text(settings.submission_period_s)}."
    )
