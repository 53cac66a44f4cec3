"""The Gradio web app, one module per tab; :func:`build_app` assembles them.

Layout (``layout.py``): a status line with a Refresh button, a notice line (a link's value
that could not be used), then the tabs :func:`registry.default_registry` lists:

* ``ranking``  — CPS ranking, 0-shot / 5-shot / both (with Δ), search, sort, filters, column
  chooser, pages of 25 rows, CSV of the whole view;
* ``task``     — a task's description, metric, baselines, prompts as the model reads them,
  models × prompts (paged), the prompt side (MinP/MaxP/AvgP/CPS per prompt) and a heatmap;
* ``model``    — one model against its field, prompt scores ± stderr, 0- vs 5-shot, what the
  run used, and its answers (details store);
* ``plots_tab``— average CPS vs size, radar of up to six models, prompt sensitivity;
* ``submit``   — the submission form (``eval_queue.submission.submit``) and the queue;
* ``about``    — paper Table 1, the metrics, how to reproduce a row, the citation.

``tab.py`` is the protocol and ``page.py`` the mechanism: :class:`~leaderboard.ui.tab.Tab` (a tab declares its controls
and outputs by name), :class:`~leaderboard.ui.tab.Panel` (a block another track adds to the
task or model page), :class:`~leaderboard.ui.page.Page` (wiring by name, one server-side
:class:`~leaderboard.ui.page.Session` per visitor, only changed values sent, only the open tab
computed).  ``context.AppContext`` holds the stores, the queue and the latest results snapshot
(``views.Board``); the timer, the Refresh button and a visitor after a quiet spell re-read the
stores, at most once per interval however many ask.  Page state lives in the URL
(``leaderboard.state.PageState``).

Named API endpoints (``gradio_client``, parameters by name): ``/ranking``, ``/task``,
``/model``, ``/details``, ``/plots``, ``/submit``, ``/refresh`` (status and queue).
"""

from leaderboard.ui.layout import build_app

__all__ = ["build_app"]
