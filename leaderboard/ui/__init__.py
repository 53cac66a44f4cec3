"""The Gradio web app, one module per tab; :func:`build_app` assembles them.

Layout (``layout.py``): a status line with a Refresh button, then the tabs

* ``ranking``  — CPS ranking, 0-shot / 5-shot / both (with Δ), filters, column chooser, CSV;
* ``task``     — a task's description, metric, baselines, Italian prompts, models × prompts,
  the prompt side (MinP/MaxP/AvgP/CPS per prompt) and a heatmap;
* ``model``    — one model against the field, prompt spread, 0- vs 5-shot, run metadata and
  its answers (details store);
* ``plots_tab``— average CPS vs size, radar of up to six models, prompt sensitivity;
* ``submit``   — the submission form (``eval_queue.submission.submit``) and the queue;
* ``about``    — paper Table 1, the metrics, how to reproduce a row, the citation.

``context.AppContext`` holds the stores, the queue and the latest results snapshot
(``views.Board``); the timer, the Refresh button and a visitor after a quiet spell re-read
the stores incrementally.  Page state lives in the URL (``leaderboard.state.PageState``).

Named API endpoints (``gradio_client``): ``/ranking``, ``/task``, ``/model``, ``/details``,
``/plots``, ``/submit``, ``/refresh`` (status and queue).
"""

from leaderboard.ui.layout import build_app

__all__ = ["build_app"]
