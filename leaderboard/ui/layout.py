"""The whole page: header, tabs, refresh timer, URL state; wires the tabs' handlers.

``build_app(ctx)`` only builds the Blocks: nothing is read from the stores until the
page loads.  Each handler is wrapped so that an unexpected failure is logged with its
traceback and shown to the user as a short message, never as a stack trace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

import gradio as gr

from leaderboard import views
from leaderboard.state import PageState
from leaderboard.ui import about, model, plots_tab, ranking, submit, task
from leaderboard.ui.common import ERROR_TEXT
from leaderboard.ui.context import AppContext

logger = logging.getLogger(__name__)

TAB_LABELS = {
    "ranking": "Ranking",
    "task": "Tasks",
    "model": "Model",
    "plots": "Plots",
    "submit": "Submit & queue",
    "about": "About",
}

# Writes the page state into the address bar without reloading (shareable links).
URL_JS = """(query) => {
  const url = new URL(window.location.href);
  url.search = query ? "?" + query : "";
  window.history.replaceState(window.history.state, "", url);
  return [];
}"""

# Marks the page as fully rendered (every tab filled) for end-to-end tests and monitors.
READY_JS = "() => { document.body.dataset.evalitaReady = '1'; return []; }"

CSS = """
#ranking-table table { font-size: 0.86rem; }
.gradio-container .cell-wrap a, #model-header a { color: var(--link-text-color); text-decoration: underline; }
.prompts { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
.prompts td, .prompts th { border: 1px solid var(--border-color-primary); padding: 4px 8px; vertical-align: top; }
.prompt-text { white-space: pre-wrap; font-family: var(--font-mono); font-size: 0.82rem; }
#header h1 { margin-bottom: 0; }
"""

HEADER = (
    "# Evalita-LLM Leaderboard\n"
    "Large Language Models on **native Italian** tasks — ten tasks from the Evalita campaigns, several prompts "
    "each, ranked by the average **Combined Performance Score** (CPS, 0–100).  See *About* for the metrics."
)


def _bind(fn: Callable, ctx: AppContext) -> Callable:
    """``fn(ctx, *inputs)`` as a gradio handler whose unexpected failures are logged and shown briefly."""

    def handler(*args):
        try:
            return fn(ctx, *args)
        except gr.Error:
            raise
        except Exception as exc:
            logger.exception("UI handler %s failed", fn.__qualname__)
            raise gr.Error(ERROR_TEXT) from exc

    handler.__name__ = fn.__name__
    return handler


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def status_text(ctx: AppContext) -> str:
    board = ctx.results()
    runs = board.runs
    models = runs["model"].nunique() if not runs.empty else 0
    stamp = datetime.now(UTC).strftime("%H:%M:%S UTC")
    text = f"{_count(len(runs), 'run')} of {_count(models, 'model')} · results read at {stamp}"
    if board.problems:
        names = ", ".join(f"{views.md_text(p.path)}" for p in board.problems[:10])
        text += f" · ⚠️ {len(board.problems)} unreadable results file(s) skipped: {names}"
    return text


def tick(ctx: AppContext, *, force: bool = True):
    """Refresh (button or API): re-read results (incrementally) and the queue."""
    before = ctx.version
    version = ctx.refresh(force=force)
    if version != before:
        ctx.warm_in_background()  # score the new snapshot now, before visitors ask for it
    return version, status_text(ctx), *submit.render_queue(ctx)


def timer_tick(ctx: AppContext):
    """An open page's timer: re-read results only if the snapshot is older than the refresh period."""
    return tick(ctx, force=False)


def _constant(value: str) -> Callable[[], str]:
    def constant() -> str:
        return value

    return constant


def build_app(ctx: AppContext) -> gr.Blocks:
    with gr.Blocks(
        title="Evalita-LLM Leaderboard", analytics_enabled=False, delete_cache=(3600, 3600)
    ) as demo:
        with gr.Row():
            gr.Markdown(HEADER, elem_id="header")
        with gr.Row():
            status = gr.Markdown(elem_id="status")
            refresh = gr.Button("↻ Refresh", size="sm", scale=0, elem_id="refresh")
        version = gr.State(0)
        tab_state = gr.State("ranking")
        url_query = gr.Textbox(visible=False, elem_id="url-query")
        with gr.Tabs(selected="ranking", elem_id="tabs") as tabs:
            tab_items = {}
            with gr.Tab(TAB_LABELS["ranking"], id="ranking") as tab_items["ranking"]:
                rk = ranking.build()
            with gr.Tab(TAB_LABELS["task"], id="task") as tab_items["task"]:
                tk = task.build()
            with gr.Tab(TAB_LABELS["model"], id="model") as tab_items["model"]:
                md = model.build()
            with gr.Tab(TAB_LABELS["plots"], id="plots") as tab_items["plots"]:
                pl = plots_tab.build()
            with gr.Tab(TAB_LABELS["submit"], id="submit") as tab_items["submit"]:
                sb = submit.build()
            with gr.Tab(TAB_LABELS["about"], id="about") as tab_items["about"]:
                about.build()
        timer = gr.Timer(ctx.refresh_s)

        state_inputs = [
            tab_state,
            *rk.inputs,
            tk.setting,
            md.setting,
            pl.setting,
            tk.task,
            md.model,
            pl.models,
        ]

        def encode(
            tab,
            setting,
            types,
            sizes,
            precisions,
            search,
            columns,
            all_runs,
            task_shots,
            model_shots,
            plot_shots,
            task_id,
            model_key,
            chosen,
        ):
            """The address of this view; a tab's own choices are written only while it is open."""
            tab = tab or "ranking"
            shots = {"task": task_shots, "model": model_shots, "plots": plot_shots}.get(tab) or "0"
            return (
                PageState(
                    tab=tab,
                    setting=setting or "0",
                    shots=shots,
                    task=task_id or "" if tab == "task" else "",
                    model=model_key or "" if tab == "model" else "",
                    models=tuple(chosen or ()) if tab == "plots" else (),
                    types=tuple(types or ()),
                    sizes=tuple(sizes or ()),
                    precisions=tuple(precisions or ()),
                    search=search or "",
                    columns=tuple(columns or ()),
                    all_runs=bool(all_runs),
                )
                .normalised()
                .to_query()
            )

        def remember(dependency):
            """After a control changed: write the page state into the address bar."""
            return dependency.then(
                encode, state_inputs, url_query, api_visibility="private", queue=False
            ).then(None, url_query, None, js=URL_JS, api_visibility="private", queue=False)

        # --- renderers -------------------------------------------------------------
        r_ranking = _bind(ranking.render, ctx)
        r_task = _bind(task.render, ctx)
        r_model = _bind(model.render, ctx)
        r_details = _bind(model.render_details, ctx)
        r_plots = _bind(plots_tab.render, ctx)
        r_queue = _bind(submit.render_queue, ctx)
        model_inputs = [md.model, md.setting]
        detail_inputs = [md.model, md.setting, md.d_task, md.d_prompt]
        plot_inputs = [pl.setting, pl.models, rk.all_runs]
        task_inputs = [tk.task, tk.setting, rk.all_runs]

        def render_first(ctx_: AppContext, *rank_args):
            """What the landing tab shows: the status line and the ranking."""
            return (status_text(ctx_), *ranking.render(ctx_, *rank_args))

        def render_rest(
            ctx_: AppContext,
            all_runs,
            task_id,
            task_shots,
            model_key,
            model_shots,
            d_task,
            d_prompt,
            chosen,
            plot_shots,
        ):
            """The other tabs, rendered right after the ranking so the landing view comes first."""
            model_dd, model_key = model.choices_update(ctx_, model_key)
            plots_dd, chosen = plots_tab.choices_update(ctx_, chosen)
            return (
                *task.render(ctx_, task_id, task_shots, all_runs),
                model_dd,
                *model.render(ctx_, model_key, model_shots),
                *model.render_details(ctx_, model_key, model_shots, d_task, d_prompt),
                plots_dd,
                *plots_tab.render(ctx_, plot_shots, chosen, all_runs),
            )

        first_outputs = [status, *rk.outputs]
        rest_inputs = [
            rk.all_runs,
            tk.task,
            tk.setting,
            md.model,
            md.setting,
            md.d_task,
            md.d_prompt,
            pl.models,
            pl.setting,
        ]
        rest_outputs = [*tk.outputs, md.model, *md.outputs, *md.detail_outputs, pl.models, *pl.outputs]

        def render_everything(dependency):
            return dependency.then(
                _bind(render_first, ctx),
                rk.inputs,
                first_outputs,
                api_visibility="private",
                show_progress="hidden",
            ).then(
                _bind(render_rest, ctx),
                rest_inputs,
                rest_outputs,
                api_visibility="private",
                show_progress="hidden",
            )

        def on_load(request: gr.Request):
            params = dict(request.query_params) if request is not None else {}
            state = PageState.from_query(params)
            ctx.fresh()  # a visitor after a quiet spell gets re-read results, not a stale snapshot
            return (
                ctx.version,
                gr.Tabs(selected=state.tab),
                state.tab,
                *ranking.apply_state(state),
                state.task or tk.task.value,
                state.shots,
                state.shots,
                state.shots,
                state.model or None,
                list(state.models),
            )

        page_load = demo.load(
            on_load,
            None,
            [
                version,
                tabs,
                tab_state,
                *rk.inputs,
                tk.task,
                tk.setting,
                md.setting,
                pl.setting,
                md.model,
                pl.models,
            ],
            api_visibility="private",
            queue=False,
        )
        loaded_all = render_everything(page_load).then(
            r_queue, None, sb.queue_outputs, api_visibility="private"
        )
        # The address is rewritten once the page settled, so it keeps what the link asked for.
        remember(loaded_all).then(None, None, None, js=READY_JS, api_visibility="private", queue=False)

        remember(
            gr.on(
                [c.input for c in rk.inputs],
                r_ranking,
                rk.inputs,
                rk.outputs,
                api_name="ranking",
                trigger_mode="always_last",
            )
        )
        gr.on([rk.all_runs.input], r_task, task_inputs, tk.outputs, api_visibility="private")
        gr.on([rk.all_runs.input], r_plots, plot_inputs, pl.outputs, api_visibility="private")
        remember(gr.on([tk.task.input, tk.setting.input], r_task, task_inputs, tk.outputs, api_name="task"))
        remember(
            gr.on([md.model.input, md.setting.input], r_model, model_inputs, md.outputs, api_name="model")
        )
        gr.on(
            [md.model.input, md.setting.input],
            r_details,
            detail_inputs,
            md.detail_outputs,
            api_visibility="private",
        )
        md.d_task.input(
            model.prompt_choices, md.d_task, md.d_prompt, api_visibility="private", queue=False
        ).then(r_details, detail_inputs, md.detail_outputs, api_visibility="private")
        md.d_prompt.input(r_details, detail_inputs, md.detail_outputs, api_name="details")
        remember(
            gr.on([pl.setting.input, pl.models.input], r_plots, plot_inputs, pl.outputs, api_name="plots")
        )
        for name, tab in tab_items.items():
            remember(tab.select(_constant(name), None, tab_state, api_visibility="private", queue=False))

        def on_row_select(evt: gr.SelectData):
            """A click on a ranking row (outside the Hub link) opens that model's page."""
            try:
                key = views.run_of_row(ctx.results(), evt.row_value or [])
            except Exception as exc:
                logger.exception("opening a model from the ranking failed")
                raise gr.Error(ERROR_TEXT) from exc
            if key is None:
                return gr.Tabs(), gr.skip(), gr.skip()
            return gr.Tabs(selected="model"), "model", key

        remember(
            rk.table.select(on_row_select, None, [tabs, tab_state, md.model], api_visibility="private")
            .then(r_model, model_inputs, md.outputs, api_visibility="private")
            .then(r_details, detail_inputs, md.detail_outputs, api_visibility="private")
        )

        def on_submit(model_id, revision, precision, fewshot, model_type, request: gr.Request):
            try:
                return submit.do_submit(ctx, model_id, revision, precision, fewshot, model_type, request)
            except Exception as exc:
                logger.exception("submission failed unexpectedly")
                raise gr.Error(ERROR_TEXT) from exc

        sb.button.click(on_submit, sb.form, [sb.result, *sb.queue_outputs], api_name="submit")

        # Freshness: the button re-reads the stores; each page's timer re-reads results only when
        # the shared snapshot is older than the period.  Views re-render only on change.
        refresh_outputs = [version, status, *sb.queue_outputs]
        refresh.click(_bind(tick, ctx), None, refresh_outputs, api_name="refresh", show_progress="hidden")
        timer.tick(
            _bind(timer_tick, ctx),
            None,
            refresh_outputs,
            api_visibility="private",
            show_progress="hidden",
        )
        # Fresh data: every tab re-renders (``change`` fires only when the data version moved).
        render_everything(version.change(None, None, None, api_visibility="private", queue=False))
    return demo
