"""The Submit & queue tab: the submission form and the evaluation queue."""

from __future__ import annotations

import logging

import gradio as gr

from eval_queue.errors import StorageError, StoreUnavailableError, SubmissionRejected
from eval_queue.identity import signin_prompt
from eval_queue.ledger import duration_text
from eval_queue.requests import ModelType, Precision
from eval_queue.vocabulary import RUN_SETTINGS, Track
from leaderboard.state import PageState
from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.long_context.definition import CONTEXT_SETTINGS
from leaderboard.ui.common import Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Rendered, Tab, TabParts

logger = logging.getLogger(__name__)

AUTO_TYPE = "auto (from the model card)"


#: What ``/submit`` takes, by name (the form's fields), in order; the track's fields come last
#: (with defaults: a client that sends only the first five submits an Evalita run, as before).
FORM_FIELDS = ("model", "revision", "precision", "fewshot", "model_type", "track", "context", "judge_target")

#: The tracks a user can submit to, as the form shows them (Evalita first: the default).
TRACK_CHOICES = [(track.label, track.value) for track in Track]
#: The long-context settings' checkboxes, labelled by the track's definition.
CONTEXT_CHOICES = [(spec.label, spec.id.value) for spec in CONTEXT_SETTINGS]
QUEUE_OUTPUTS = ("summary", "pending", "running", "finished", "failed", "problems")


class SubmitTab(Tab):
    id = "submit"
    label = "Submit & queue"
    #: The queue changes without new results: re-render it on every refresh while it is open.
    live = True

    def build(self, page: Page) -> TabParts:
        gr.Markdown(
            "Submit a model from the Hugging Face Hub. On the Evalita-LLM track it is evaluated on the ten "
            "tasks, every prompt, in the setting(s) you choose, and ranked by CPS; the long-context and "
            "judge tracks have their own tables and are never mixed into that ranking."
        )
        track = gr.Radio(TRACK_CHOICES, value=Track.EVALITA.value, label="Track", elem_id="submit-track")
        with gr.Row():
            model = gr.Textbox(
                label="Model id", placeholder="org/model-name", elem_id="submit-model", scale=3
            )
            revision = gr.Textbox(label="Revision", value="main", elem_id="submit-revision", scale=1)
        with gr.Row():
            precision = gr.Dropdown(
                [p.value for p in Precision],
                value=Precision.BFLOAT16.value,
                label="Precision",
                elem_id="submit-precision",
            )
            fewshot = gr.CheckboxGroup(
                [(s.label, s.value) for s in RUN_SETTINGS],
                value=[s.value for s in RUN_SETTINGS],
                label="Setting(s)",
                elem_id="submit-fewshot",
            )
            context = gr.CheckboxGroup(
                CONTEXT_CHOICES,
                value=[value for _, value in CONTEXT_CHOICES],
                label="Context setting(s)",
                visible=False,
                elem_id="submit-context",
            )
            judge_target = gr.Textbox(
                value="",
                label="Judge the outputs of run … (optional results path; empty: the annotated set)",
                placeholder="org/model/results_<timestamp>_<precision>_0shot.json",
                visible=False,
                elem_id="submit-judge-target",
            )
            model_type = gr.Dropdown(
                [(AUTO_TYPE, AUTO_TYPE), *[(t.value, t.value) for t in ModelType]],
                value=AUTO_TYPE,
                label="Model type",
                elem_id="submit-type",
            )
        self._signin(page.ctx)
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
        track.change(
            _track_fields,
            inputs=track,
            outputs=[fewshot, context, judge_target],
            api_visibility="private",
            queue=False,
        )
        fields = (model, revision, precision, fewshot, model_type, track, context, judge_target)
        form = dict(zip(FORM_FIELDS, fields, strict=True))
        queue = dict(zip(QUEUE_OUTPUTS, (summary, pending, running, finished, failed, problems), strict=True))
        page.bind(
            [button.click], do_submit, form, {"result": result, **queue}, api_name="submit", request=True
        )
        return TabParts(controls={}, outputs=queue)

    @staticmethod
    def _signin(ctx: AppContext) -> None:
        """The Hugging Face sign-in, where the Space provides OAuth (``hf_oauth: true``).

        Gradio's button signs in through the Space and keeps the account in the session,
        where :func:`eval_queue.identity.caller_from_request` finds it when the form is sent;
        the button itself then shows who is signed in.  Without OAuth (a local run) there is
        no button and submitters are told apart by their (hashed) network address.
        """
        with gr.Row():
            if ctx.settings.oauth:
                gr.LoginButton(elem_id="submit-signin", scale=0)
            gr.Markdown(
                views.md_text(signin_prompt(ctx.settings.require_signin, None)), elem_id="submit-signin-note"
            )

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        return Rendered(render_queue(ctx))


def render_queue(ctx: AppContext) -> dict[str, object]:
    """The queue's tables and lines by output name (the listing is cached by the context)."""
    view = views.queue_view(ctx.queue_listing(), ctx.now())
    tables = {
        "pending": view.pending,
        "running": view.running,
        "finished": view.finished,
        "failed": view.failed,
    }
    return {
        "summary": view.summary,
        **{name: Table(frame, link_models=False) for name, frame in tables.items()},
        "problems": view.problems,
    }


def _track_fields(track: str | None) -> tuple[dict, dict, dict]:
    """Show the fields of the chosen track only (few-shot settings, context settings, judge target)."""
    return (
        gr.update(visible=track in (None, Track.EVALITA.value)),
        gr.update(visible=track == Track.LONG_CONTEXT.value),
        gr.update(visible=track == Track.JUDGE.value),
    )


def track_fields(
    track: str | None, fewshot: list[str] | None, context: list[str] | None, judge_target: str | None
) -> dict[str, object]:
    """The submission's track fields from the form: only the chosen track's, the others left out.

    Raises :class:`SubmissionRejected` when no context setting is ticked (an empty choice
    is a mistake, not "all"); an unknown track is refused by the submission's own check.
    """
    chosen = (track or Track.EVALITA.value).strip()
    if chosen == Track.EVALITA.value:
        return {"track": chosen, "fewshot": [int(k) for k in (fewshot or [])]}
    fields: dict[str, object] = {"track": chosen, "fewshot": [0]}
    if chosen == Track.LONG_CONTEXT.value:
        if not context:
            raise SubmissionRejected(
                "tick at least one context setting (10K words, 50K words or the full book)."
            )
        fields["context_settings"] = list(context)
    if chosen == Track.JUDGE.value and (judge_target or "").strip():
        fields["judge_target"] = (judge_target or "").strip()
    return fields


def do_submit(
    ctx: AppContext,
    model: str | None,
    revision: str | None,
    precision: str | None,
    fewshot: list[str] | None,
    model_type: str | None,
    request: gr.Request | None = None,
    profile: gr.OAuthProfile | None = None,
    *,
    track: str | None = Track.EVALITA.value,
    context: list[str] | None = None,
    judge_target: str | None = None,
) -> dict[str, object]:
    """Run the submission; the refusal message is shown exactly as the validator wrote it, and a
    store that cannot be reached is named as such (nothing is written in either case).

    The submitter (for the per-submitter rate limit and queue fairness) is the Hugging Face
    sign-in when there is one, else a salted hash of the client address; with sign-in
    required an anonymous submission is refused (:mod:`eval_queue.identity`).
    """
    try:
        fields = track_fields(track, fewshot, context, judge_target)
        who = ctx.submitter(request, profile)
        created = ctx.submit(
            model=(model or "").strip(),
            revision=(revision or "").strip() or "main",
            precision=precision or "",
            model_type=None if model_type in (None, "", AUTO_TYPE) else model_type,
            submitted_by=who,
            **fields,
        )
    except (SubmissionRejected, StoreUnavailableError) as exc:
        return {"result": views.rejected_markdown(exc.message), **render_queue(ctx)}
    except StorageError as exc:
        logger.warning("submission of %r not queued: the store failed: %s", model, exc)
        return {
            "result": views.rejected_markdown(
                f"The queue could not be written ({exc}); nothing was submitted, try again later."
            ),
            **render_queue(ctx),
        }
    result = views.submitted_markdown(created) + "\n\n" + _quota_line(ctx, who)
    return {"result": result, **render_queue(ctx)}


def _quota_line(ctx: AppContext, who: str) -> str:
    settings = ctx.settings
    return (
        f"Queued as {views.md_text(who)}; limit {settings.submission_limit} per "
        f"{duration_text(settings.submission_period_s)}."
    )
