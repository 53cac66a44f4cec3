"""About: the tasks (paper Table 1), the metrics (paper §5), how to reproduce a row, citation."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gradio as gr

from leaderboard.state import PageState
from leaderboard.tracks.evalita.app import views
from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.ui.context import AppContext
from leaderboard.ui.page import Page
from leaderboard.ui.tab import Rendered, Tab, TabParts

BIBTEX = """@misc{magnini2025evalitallm,
  title         = {Evalita-LLM: Benchmarking Large Language Models on Italian},
  author        = {Magnini, Bernardo and Zanoli, Roberto and Resta, Michele and Cimmino, Martin and
                   Albano, Paolo and Madeddu, Marco and Patti, Viviana},
  year          = {2025},
  eprint        = {2502.02289},
  archivePrefix = {arXiv},
  primaryClass  = {cs.CL}
}"""

METRICS = r"""
### Metrics (paper §5)

Every task is run with several prompts (six for multiple-choice tasks, two for generative ones).
With $\epsilon(M, T, i) \in [0, 1]$ the score of model $M$ on task $T$ with prompt $i$ (accuracy, F1
or ROUGE-1 as the task's metric says):

| Metric | Model side (over the task's prompts $I_T$) | Prompt side (over the models shown $M_T$) |
| --- | --- | --- |
| **MinP** | — | $\mathrm{MinP}_I = \min_{m \in M_T} \epsilon(I, T, m)$ |
| **MaxP** | $\mathrm{MaxP}_M = \max_{i \in I_T} \epsilon(M, T, i)$ | $\mathrm{MaxP}_I = \max_{m \in M_T} \epsilon(I, T, m)$ |
| **AvgP** | $\mathrm{AvgP}_M = \frac{1}{\lvert I_T \rvert} \sum_{i \in I_T} \epsilon(M, T, i)$ | $\mathrm{AvgP}_I = \frac{1}{\lvert M_T \rvert} \sum_{m \in M_T} \epsilon(I, T, m)$ |
| **Sat** | $\mathrm{Sat}_M = 1 - (\mathrm{MaxP}_M - \mathrm{AvgP}_M)$ | $\mathrm{Sat}_I = 1 - (\mathrm{MaxP}_I - \mathrm{AvgP}_I)$ |
| **CPS** | $\mathrm{CPS}_M = \mathrm{Sat}_M \cdot \mathrm{MaxP}_M$ | $\mathrm{CPS}_I = \mathrm{Sat}_I \cdot \mathrm{MaxP}_I$ |

CPS (Combined Performance Score) rewards a high best score *and* robustness to the prompt: a model
whose best prompt is far above its average is penalised.  A model's **average CPS** is the mean of its
ten task CPS values; a model missing a task is shown but not ranked.  Scores are stored on the 0–1
scale, exactly as lm-evaluation-harness reports them, and shown here as 0–100 with two decimals, as
in the paper.  Runs on the bundled *sample* data or with a `--limit` are not comparable with full
runs: they are kept off the ranking unless you ask to see them, and always marked.
"""

REPRODUCE = """
### Reproduce a row locally

```bash
scripts/setup.sh                                   # .venv with the UI, the worker and lm-eval
.venv/bin/python -m eval_queue submit ORG/MODEL --revision REV --precision bfloat16 --fewshot 0 --fewshot 5
.venv/bin/python -m backend --once                 # claim and evaluate one request (repeat per setting)
.venv/bin/python -m leaderboard export --format csv --fewshot 0    # the ranked rows, 0–100
.venv/bin/python -m leaderboard export --format csv --fewshot 0 --prompts   # MinP/MaxP/AvgP/CPS per prompt
```

`python -m backend --once` runs on the official data (`--data hub`, comparable) when the Hub or a
pre-filled cache is reachable; `--data sample` uses the small bundled copy of every task and labels
the result *sample*.  `python app.py` serves this page on http://127.0.0.1:7860 from the same store
(`EVALITA_DATA_DIR`, default `./eval-data`).
"""


def tasks_markdown() -> str:
    lines = [
        "### The ten tasks (paper Table 1)",
        "",
        "| # | Task | Core competence | Domain | LLM eval | Metric | Prompts |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for number, task in enumerate(SUITE, start=1):
        lines.append(
            f"| {number} | **{views.md_text(task.abbrev)}** {views.md_text(task.name)} | "
            f"{views.md_text(task.competence)} | {views.md_text(task.domain)} | {views.md_text(task.kind)} | "
            f"{views.md_text(task.metric_label)} | {len(task.prompts)} |"
        )
    return "\n".join(lines)


class AboutTab(Tab):
    id = "about"
    label = "About"

    def __init__(self, sections: Sequence[Callable[[], str]] = ()) -> None:
        #: Other tracks' sections (Markdown from their definitions), after Evalita's text.
        self.sections = tuple(sections)

    def build(self, page: Page) -> TabParts:
        _layout()
        for number, section in enumerate(self.sections, start=1):
            gr.Markdown(section(), elem_id=f"about-track-{number}")
        return TabParts(controls={}, outputs={})

    def render(self, ctx: AppContext, state: PageState) -> Rendered:
        return Rendered({})  # static text, laid out once


def _layout() -> None:
    gr.Markdown(
        "## About Evalita-LLM\n\n"
        "Evalita-LLM (Magnini et al.) evaluates Large Language Models on **native Italian** tasks taken from "
        "the Evalita campaigns: no translated data, multiple-choice *and* generative tasks, and every task "
        "asked with several prompts so that no model is favoured by one lucky wording.  This leaderboard runs "
        "the benchmark with lm-evaluation-harness, zero-shot and 5-shot."
    )
    gr.Markdown(tasks_markdown(), elem_id="about-tasks")
    gr.Markdown(
        METRICS,
        latex_delimiters=[{"left": "$", "right": "$", "display": False}],
        elem_id="about-metrics",
    )
    gr.Markdown(REPRODUCE, elem_id="about-reproduce")
    gr.Markdown("### Citation")
    gr.Code(BIBTEX, language=None, label="BibTeX", interactive=False, elem_id="about-bibtex")
