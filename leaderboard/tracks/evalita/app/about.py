"""The Evalita track's section of the About page: the tasks (paper Table 1), the metrics (paper §5),
how to reproduce a row, and the citation.  Static text: every value comes from the suite."""

from __future__ import annotations

from leaderboard.tracks.evalita.definition import SUITE
from leaderboard.views.common import md_text

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

UNCERTAINTY = """
### Intervals, tiers and "A vs B"

**An interval** (95 % CI) is the range a score would plausibly take on another draw of test items
of the same kind: the test sets are small (a few hundred items for several tasks), so a score
is an estimate, not a fact.  Two models whose intervals overlap a lot may well be equally good.

**A tier** groups the models of a setting that the data cannot tell apart: tier 1 is the best
ranked model and every model not significantly below it; the first model that is significantly
below starts tier 2, and so on.  The rank still orders the table; the tier says which differences
between ranks are real.

**How they are computed.**  The worker keeps, for every run, each item's result under every prompt
(`items.parquet` beside its answers).  From it the project draws 1,000 resamples of the test items
(with replacement, fixed seed, the *same* items for every prompt of a task, and for every model on
the same test set), recomputes each metric exactly as lm-evaluation-harness aggregates it (an F1
over the resampled answers, not a mean of per-item F1s), then CPS = Sat · MaxP per task and the mean
over tasks; an interval is the 2.5th–97.5th percentile of the resampled values.  Two models are
compared on the difference of their resampled mean CPS (the same resamples for both: a paired
test, with the bootstrap's standard error), and the p-values of a tier's comparisons are
Holm-corrected.  A run without per-item data (results imported from elsewhere, older runs) shows
"—": no interval is ever made up.  **A vs B** (its own tab, or from the ranking and a model's
page) does the same per task: the difference of CPS, its interval and p-value, the items on which
the two models' answers differ, and one line such as "A better on 3 tasks, no difference on 6, B
better on 1".  Known limit: when several prompts tie for the best score, the interval of CPS is a
little too narrow (a bootstrap of a maximum).
"""

METRIC_SETS = """
### Two metric sets: lm-eval and as specified

The ranking, task and model pages have a switch **Metrics: lm-eval | as specified** (kept in the
link as `metrics=`).  **lm-eval** (the default) is what lm-evaluation-harness 0.4.13 computes: the
numbers of the paper's tables and of the official board, stored exactly as the harness reported
them.  **As specified** (version 2) scores six tasks the way the paper specifies them; MaxP, AvgP,
CPS and the ranking are then computed the same way from those scores.  Each difference, with one
example (each pinned by a test):

| Task | lm-eval | As specified | Example |
| --- | --- | --- | --- |
| **WIC**, **HS** | binary F1 of the positive option ("same meaning", "hate") | F1-macro over both classes (Table 1; §3.1, §3.4) | Gold *Sì, No, Sì, No*. A model that always answers *No* scores 0.00 with lm-eval, one that always answers *Sì* 66.67; as specified both score 33.33 — a prompt that nudges a model towards *No* no longer looks like a failure of the model. |
| **LS** | out-of-ten F1 that credits a substitute named twice twice | the same oot F1, each substitute credited once per context (§3.7: "*Out-of-Ten (oot)*, which considers the top 10 guesses") | Gold *pieno* (3 annotators), *colmo* (1) on two contexts; answers *pieno, pieno* and *colmo*: 87.50 with lm-eval, 50.00 as specified — what *pieno* and *colmo* score. |
| **NER** | upstream's slot labels: when the answer names more entities than the gold has, a missed entity counts as a found PER | entity-level F1 of PER, LOC and ORG on (text, type) matches, macro-averaged (§3.8: "F1-macro scores evaluate system performance on person, location, and organization entities"); every span that is not a gold (span, type) pair is a false positive, one with no type or another type a false positive of every averaged type | Gold *Mario Rossi$PER*, answer *Roma$LOC, Milano$LOC*: 50.00 with lm-eval (the missed person counts as found), 0.00 as specified.  Gold *Roma$LOC, Mario Rossi$PER*, answer *Roma$LOC, Mario Rossi$PER, la città, il sindaco, ieri, domani*: 66.67 with lm-eval, 33.33 as specified. |
| **RE** | F1-macro of "relation" and a synthetic "no relation" slot class, in an order-dependent matching | relation-level F1 = 2TP / (2TP + FP + FN) over (result, test) pairs, pooled over the test set, in any order (§3.9: "Performance is assessed using Precision, Recall, and F1 score") | One relation in four documents, the answer *&&NOREL&&* everywhere: 42.86 with lm-eval, 0.00 as specified. |
| **SUM** | ROUGE-1 on rouge_score's tokens, which keep only `a-z0-9`: *città* → *citt*, *è* vanishes | ROUGE-1 on Italian tokens: letters with accents kept | Reference *Però il sindaco è contrario*, summary *Per il sindaco, contrario*: 100.00 with lm-eval (*però* becomes the preposition *per*, *è* is dropped), 66.67 as specified. |

The other four are scored alike in both sets: **TE**, **FAQ**, **AT** (accuracy) and **SA** (the
mean F1 of the positive and negative polarities, as §3.3 says).  The as-specified scores are
computed from each run's stored answers — by the worker when it publishes a run, by
`python -m backend rescore` for older runs (version 1 of the set, issue 20, scored LS and RE as
lm-eval: its blocks are kept and no longer read) — and written beside the harness's numbers,
never over them; a run that has none yet shows those six tasks empty and is not ranked in that
view.  They are not comparable with the paper's tables or the official board.  The
as-specified view has its own intervals and tiers, computed as the lm-eval ones are: each of its
metrics is a function of per-item statistics (F1-macro: per-label counts; NER: per type the
entities found, given and named, and the invalid spans; RE: relations found, extra and missed;
LS: the three oot sums with each substitute once; SUM: each document's ROUGE-1), taken from the
stored answers and resampled on the same items with the same draws as the lm-eval scores.  A
run whose as-specified scores were written without them shows "—" and no tier until
`python -m backend rescore` adds them.
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
            f"| {number} | **{md_text(task.abbrev)}** {md_text(task.name)} | "
            f"{md_text(task.competence)} | {md_text(task.domain)} | {md_text(task.kind)} | "
            f"{md_text(task.metric_label)} | {len(task.prompts)} |"
        )
    return "\n".join(lines)


INTRODUCTION = (
    "## Evalita-LLM\n\n"
    "Evalita-LLM (Magnini et al.) evaluates Large Language Models on **native Italian** tasks taken from "
    "the Evalita campaigns: no translated data, multiple-choice *and* generative tasks, and every task "
    "asked with several prompts so that no model is favoured by one lucky wording.  This leaderboard runs "
    "the benchmark with lm-evaluation-harness, zero-shot and 5-shot."
)


def about_markdown() -> str:
    """The track's About section (the spec's ``about``)."""
    return "\n\n".join(
        (
            INTRODUCTION,
            tasks_markdown(),
            METRICS.strip(),
            UNCERTAINTY.strip(),
            METRIC_SETS.strip(),
            REPRODUCE.strip(),
            "### Citation",
            f"```bibtex\n{BIBTEX}\n```",
        )
    )
