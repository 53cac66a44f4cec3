"""The Submit & queue tab: the submission form and the evaluation queue.

The form is derived from the tracks' specs: a track choice, the few-shot settings (shown for a
track that has them), then each track's request options (``TrackSpec.option_fields`` that are
on the form; a subset as checkboxes, free text as a box), each shown only while its track is
chosen and sent to ``/submit`` under its key (the option's flag without dashes).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import gradio as gr

from eval_queue.errors import StorageError, StoreUnavailableError, SubmissionRejected
from eval_queue.identity import signin_prompt
from eval_queue.ledger import duration_text
from eval_queue.requests import ModelType, Precision
from eval_queue.tracks import DEFAULT_TRACK, OptionField, TrackSpec, track_registry
from eval_queue.vocabulary import fewshot_label
from leaderboard.state import PageState
from leaderboard.ui.common import Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Rendered, Tab, TabParts
from leaderboard.views import common
from leaderboard.views import queue as queue_views

logger = logging.getLogger(__name__)

AUTO_TYPE = "auto (from the model card)"


#: What ``/submit`` takes first, by name, in order; the track and its options follow (with
#: defaults: a client that sends only these five submits a default-track run, as before tracks).
BASE_FIELDS = ("model", "revision", "precision", "fewshot", "model_type")


def form_options(specs: tuple[TrackSpec, ...]) -> list[tuple[TrackSpec, OptionField]]:
    """Every track's options that the web form shows, in registry order."""
    return [(spec, option) for spec in specs for option in spec.option_fields if option.form]


QUEUE_OUTPUTS = ("summary", "pending", "running", "finished", "failed", "problems")


class SubmitTab(Tab):
    id = "submit"
    label = "Submit & queue"
    #: The queue changes without new results: re-render it on every refresh while it is open.
    live = True

    def build(self, page: Page) -> TabParts:
        specs = track_registry().specs()
        gr.Markdown(
            "Submit a model from the Hugging Face Hub to a track; each track has its own tables and is never "
            "mixed into another's scores.\n\n" + "\n".join(f"* **{s.label}**: {s.summary}." for s in specs)
        )
        track = gr.Radio(
            [(spec.label, spec.name) for spec in specs],
            value=DEFAULT_TRACK,
            label="Track",
            elem_id="submit-track",
        )
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
            # Every setting a track runs (each request is checked against its own track's spec).
            shots = sorted({k for spec in specs for k in spec.fewshot})
            fewshot = gr.CheckboxGroup(
                [(fewshot_label(k), str(k)) for k in shots],
                value=[str(k) for k in track_registry().spec(DEFAULT_TRACK).fewshot],
                label="Setting(s)",
                visible=track_registry().spec(DEFAULT_TRACK).has_fewshot,
                elem_id="submit-fewshot",
            )
            options = {option.key: _option_component(spec, option) for spec, option in form_options(specs)}
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
        shown_for = [(fewshot, [s.name for s in specs if s.has_fewshot])] + [
            (options[option.key], [spec.name]) for spec, option in form_options(specs)
        ]
        track.change(
            lambda chosen: [gr.update(visible=chosen in tracks) for _, tracks in shown_for],
            inputs=track,
            outputs=[component for component, _ in shown_for],
            api_visibility="private",
            queue=False,
        )
        fields = (model, revision, precision, fewshot, model_type)
        form = {**dict(zip(BASE_FIELDS, fields, strict=True)), "track": track, **options}
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
                common.md_text(signin_prompt(ctx.settings.require_signin, None)), elem_id="submit-signin-note"
            )

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        return Rendered(render_queue(ctx))


def render_queue(ctx: AppContext) -> dict[str, object]:
    """The queue's tables and lines by output name (the listing is cached by the context)."""
    view = queue_views.queue_view(ctx.queue_listing(), ctx.now())
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


def _option_component(spec: TrackSpec, option: OptionField) -> gr.components.Component:
    """A track's option on the form: a subset as checkboxes (all ticked), one choice as radio buttons
    (the first, the default, chosen), free text as a box; hidden until its track is chosen."""
    elem_id = "submit-" + option.key.replace("_", "-")
    visible = spec.name == DEFAULT_TRACK
    if option.choices and not option.multiple:
        return gr.Radio(
            list(option.choices),
            value=option.choices[0][1],
            label=option.label,
            visible=visible,
            elem_id=elem_id,
        )
    if option.choices:
        values = [value for _, value in option.choices]
        return gr.CheckboxGroup(
            list(option.choices), value=values, label=option.label, visible=visible, elem_id=elem_id
        )
    return gr.Textbox(
        value="", label=option.label, placeholder=option.placeholder, visible=visible, elem_id=elem_id
    )


def track_fields(track: str | None, fewshot: list[str] | None, values: Mapping[str, Any]) -> dict[str, Any]:
    """The submission's track fields from the form: the chosen track, its settings and only its options.

    ``values`` are the form's option values by key.  An option left empty is the whole track
    (an empty text box, or every box ticked); an empty subset is refused (nothing ticked is a
    mistake, not "all"): :class:`SubmissionRejected` naming what to tick.  An unknown track is
    refused by the submission's own check.
    """
    chosen = (track or DEFAULT_TRACK).strip()
    registry = track_registry()
    spec = registry.spec(chosen) if chosen in registry else None
    if spec is None or spec.has_fewshot:
        fields: dict[str, Any] = {"track": chosen, "fewshot": [int(k) for k in (fewshot or [])]}
    else:
        fields = {"track": chosen, "fewshot": [0]}
    options: dict[str, Any] = {}
    for option in spec.option_fields if spec is not None else ():
        if not option.form:
            continue
        value = values.get(option.key)
        if option.multiple:
            if not value:
                labels = " or ".join(label for label, _ in option.choices)
                raise SubmissionRejected(f"tick at least one of the {option.label.lower()} ({labels}).")
            options[option.name] = list(value)
        elif isinstance(value, str) and value.strip():
            options[option.name] = value.strip()
    if options:
        fields["options"] = options
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
    track: str | None = DEFAULT_TRACK,
    **option_values: Any,
) -> dict[str, object]:
    """Run the submission; the refusal message is shown exactly as the validator wrote it, and a
    store that cannot be reached is named as such (nothing is written in either case).

    ``option_values`` are the tracks' options by form key (each option's flag without dashes).
    The submitter (for the per-submitter rate limit and queue fairness) is the Hugging Face
    sign-in when there is one, else a salted hash of the client address; with sign-in
    required an anonymous submission is refused (:mod:`eval_queue.identity`).
    """
    try:
        fields = track_fields(track, fewshot, option_values)
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
        return {"result": queue_views.rejected_markdown(exc.message), **render_queue(ctx)}
    except StorageError as exc:
        logger.warning("submission of %r not queued: the store failed: %s", model, exc)
        return {
            "result": queue_views.rejected_markdown(
                f"The queue could not be written ({exc}); nothing was submitted, try again later."
            ),
            **render_queue(ctx),
        }
    result = queue_views.submitted_markdown(created) + "\n\n" + _quota_line(ctx, who)
    return {"result": result, **render_queue(ctx)}


def _quota_line(ctx: AppContext, who: str) -> str:
    settings = ctx.settings
    return (
        f"Queued as {common.md_text(who)}; limit {settings.submission_limit} per "
        f"{duration_text(settings.submission_period_s)}."
    )
