"""The Submit & queue tab: the submission form and the evaluation queue."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import os
import re
import secrets
import time
from typing import Any

import gradio as gr

from eval_queue.errors import StorageError, SubmissionRejected
from eval_queue.requests import ModelType, Precision
from eval_queue.vocabulary import RUN_SETTINGS
from leaderboard import views
from leaderboard.state import PageState
from leaderboard.ui.common import Table
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Rendered, Tab, TabParts

logger = logging.getLogger(__name__)

AUTO_TYPE = "auto (from the model card)"


#: What ``/submit`` takes, by name (the form's fields), in order.
FORM_FIELDS = ("model", "revision", "precision", "fewshot", "model_type")
QUEUE_OUTPUTS = ("summary", "pending", "running", "finished", "failed", "problems")


class SubmitTab(Tab):
    id = "submit"
    label = "Submit & queue"
    #: The queue changes without new results: re-render it on every refresh while it is open.
    live = True

    def build(self, page: Page) -> TabParts:
        gr.Markdown(
            "Submit a model from the Hugging Face Hub. It is evaluated on the ten Evalita-LLM tasks, every "
            "prompt, in the setting(s) you choose; the results appear in the ranking when the run finishes."
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
            fewshot = gr.CheckboxGroup(
                [(s.label, s.value) for s in RUN_SETTINGS],
                value=[s.value for s in RUN_SETTINGS],
                label="Setting(s)",
                elem_id="submit-fewshot",
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
        form = dict(zip(FORM_FIELDS, (model, revision, precision, fewshot, model_type), strict=True))
        queue = dict(zip(QUEUE_OUTPUTS, (summary, pending, running, finished, failed, problems), strict=True))
        page.bind(
            [button.click], do_submit, form, {"result": result, **queue}, api_name="submit", request=True
        )
        return TabParts(controls={}, outputs=queue)

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


def do_submit(
    ctx: AppContext,
    model: str | None,
    revision: str | None,
    precision: str | None,
    fewshot: list[str] | None,
    model_type: str | None,
    request: gr.Request | None = None,
    profile: gr.OAuthProfile | None = None,
) -> dict[str, object]:
    """Run the submission; the refusal message is shown exactly as the validator wrote it, and a
    store that cannot be reached is named as such (nothing is written in either case).

    The submitter (for the per-submitter rate limit and queue fairness) comes from the
    Hugging Face login when there is one, else from a salted hash of the client address:
    see :func:`submitter_identity`.
    """
    who = submitter_identity(profile, request)
    try:
        created = ctx.submit(
            model=(model or "").strip(),
            revision=(revision or "").strip() or "main",
            precision=precision or "",
            fewshot=[int(k) for k in (fewshot or [])],
            model_type=None if model_type in (None, "", AUTO_TYPE) else model_type,
            submitted_by=who,
        )
    except SubmissionRejected as exc:
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


# -- who is submitting -----------------------------------------------------------------

# What reading a request's session, client or headers raises when the part is absent or
# shaped otherwise (gr.Request proxies attributes, and test stand-ins differ): "not there".
_ABSENT = (AttributeError, KeyError, TypeError, ValueError)

# "hf-alice" (a Hugging Face login) and "web-0123456789ab" (a salted hash of the address):
# the prefixes keep logged-in and anonymous submitters apart, and both pass the queue's
# submitter rule (SUBMITTER_RE), which a test checks.
HF_PREFIX = "hf-"
WEB_PREFIX = "web-"
SALT_ENV = "EVALITA_SUBMITTER_SALT"
_HASH_HEX = 12
_PROCESS_SALT = secrets.token_bytes(32)  # used when no salt is configured: ids change on restart


def submitter_identity(
    profile: gr.OAuthProfile | None, request: gr.Request | None, *, salt: str | bytes | None = None
) -> str:
    """The submitter id recorded in request files (which are public).

    In order: the Hugging Face login (``hf:<username>``) when the Space runs with
    ``hf_oauth: true`` and the user signed in; else the client address — the first
    ``X-Forwarded-For`` entry when present (Spaces sit behind a proxy), else
    ``request.client.host`` — as ``web:<12 hex>``, an HMAC under a secret salt so the raw
    address never appears (IPv6 addresses count per /64, what one host usually gets).
    The salt is ``salt``, else ``$EVALITA_SUBMITTER_SALT``, else a random per-process one.
    """
    username = _profile_username(profile) or _profile_username(_profile_from_session(request))
    if username:
        clean = re.sub(r"[^A-Za-z0-9._-]", "_", username)[:90]
        return HF_PREFIX + clean
    address = _client_address(request)
    if address is None:
        return WEB_PREFIX + "unknown"
    key = _salt(salt)
    digest = hmac.new(key, address.encode("utf-8"), hashlib.sha256).hexdigest()
    return WEB_PREFIX + digest[:_HASH_HEX]


def _profile_username(profile: Any) -> str | None:
    if profile is None:
        return None
    username = getattr(profile, "username", None)
    if username is None and isinstance(profile, dict):
        username = profile.get("preferred_username")
    if not isinstance(username, str):
        return None
    return username.strip() or None


def _profile_from_session(request: gr.Request | None) -> dict | None:
    """The OAuth user info Gradio keeps in the session, for handlers not declaring a profile.

    Mirrors how Gradio injects ``gr.OAuthProfile`` (the session's ``oauth_info``, unless
    expired); any surprise means "not logged in".
    """
    if request is None:
        return None
    try:
        underlying = getattr(request, "request", None) or request
        scope = getattr(underlying, "scope", None)
        session = scope.get("session") if isinstance(scope, dict) else getattr(underlying, "session", None)
        info = session.get("oauth_info") if session else None
        if not isinstance(info, dict):
            return None
        expires_at = info.get("expires_at")
        if isinstance(expires_at, int | float) and expires_at < time.time():
            return None
        userinfo = info.get("userinfo")
        return userinfo if isinstance(userinfo, dict) else None
    except _ABSENT:
        return None


def _client_address(request: gr.Request | None) -> str | None:
    if request is None:
        return None
    raw = _forwarded_for(request)
    if not raw:
        try:
            client = request.client
            raw = getattr(client, "host", None) or (client.get("host") if isinstance(client, dict) else None)
        except _ABSENT:
            raw = None
    if not raw:
        return None
    return _normalise_address(str(raw).strip())


def _forwarded_for(request: gr.Request) -> str | None:
    try:
        headers = request.headers
    except _ABSENT:
        return None
    if headers is None:
        return None
    value = None
    try:
        value = headers.get("x-forwarded-for")
    except _ABSENT:
        value = None
    if value is None:
        try:
            value = next((v for k, v in dict(headers).items() if str(k).lower() == "x-forwarded-for"), None)
        except _ABSENT:
            value = None
    if not isinstance(value, str):
        return None
    first = value.split(",")[0].strip()
    return first or None


def _normalise_address(raw: str) -> str:
    try:
        ip = ipaddress.ip_address(raw.strip("[]"))
    except ValueError:
        return raw.lower()  # not an address (a hostname, "testclient"): hash it as given
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip)


def _salt(salt: str | bytes | None) -> bytes:
    if salt is None:
        salt = os.environ.get(SALT_ENV) or None
    if salt is None:
        return _PROCESS_SALT
    return salt.encode("utf-8") if isinstance(salt, str) else salt


def _quota_line(ctx: AppContext, who: str) -> str:
    settings = ctx.settings
    return (
        f"Queued as {views.md_text(who)}; limit {settings.submission_limit} per "
        f"{_period(settings.submission_period_s)}."
    )


def _period(seconds: float) -> str:
    seconds = int(seconds)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}" + ("s" if count != 1 else "")
    return f"{seconds} seconds"
