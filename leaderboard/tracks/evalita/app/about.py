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

**What is estimated.**  The test sets are samples: a few hundred items for several tasks.  A
model's CPS on a task is estimated for the *population* of items the test set was drawn from:
Sat · MaxP of the scores its prompts would get there; its mean CPS is the mean of those over the
ten tasks.  The number shown is always the published score (the harness's, on the test items);
the **95 % interval** (95% CI) is where the population figure plausibly lies.

**How.**  The worker keeps, for every run, each item's result under every prompt (`items.parquet`
beside its answers).  The project draws 1,000 resamples of the test items (with replacement,
fixed seed, the *same* items for every prompt of a task and for every model on the same test set)
and recomputes each metric exactly as lm-evaluation-harness aggregates it (an F1 over the
resampled answers, not a mean of per-item F1s).  Items that belong together are drawn together:
WiC's pairs of one lemma and LS's contexts of one target word (the other tracks do the same
with their books and documents); the other tasks' items are independent.  A prompt score's interval is the 2.5th–97.5th percentile of its
resamples.

**Ties between prompts.**  MaxP is a maximum of noisy prompt scores, so it is biased upwards
exactly when prompts are close: with six tied prompts the best observed prompt is the luckiest.
A resample adds the same luck again, so a plain percentile interval of CPS misses the truth when
prompts tie (36 % coverage for the mean CPS with tied prompts, in a simulation with a known truth).  The interval of
CPS and of the mean CPS is therefore the union of two *reflected* intervals (θ̂ − (θ* − θ̂)):
one removes the bias the observed prompt gaps imply (right when prompts are far apart), the
other first shrinks the prompt scores towards their mean by the share of their spread that noise
explains, so that prompts noise cannot tell apart count as tied (right at a tie).  The truth's
bias lies between the two.  When prompts tie, the interval may sit below the published score:
the published MaxP overstates the best prompt there.  Checked by simulation over {distinct,
near-tie, tied prompts} × {no, moderate, strong cluster effect} × {accuracy, F1-macro, NER F1,
ROUGE-like} (`bench/bench_calibration.py`; figures in the README).

**A tier** is 1 + the number of runs significantly better than this one: tier 1 means no run of
the setting is significantly better, tier 3 that two are.  It is the upper end of the run's rank
range (as Chatbot Arena's "rank (UB)"); the rank still orders the table.  "Significantly better":
a paired test on the mean CPS (the two runs' resampled differences on the same items), which
calls two runs different only if every centring between the two bias estimates says so, with
Holm's correction over the run's comparisons with every other run (α = 0.05), so that for each
run the chance that its tier counts a run that is not truly better is meant to be at most 5 %
(in the simulation a single comparison of two equal runs was called different 4.8 % of the time
on average, 8 % in the worst setting); input order changes nothing, and adding a run far below
changes no other run's tier.  Tiers are not
contiguous blocks: a noisy run may have tier 1 just below a run with tier 2.

**The smallest gap the data can detect.**  Each task page gives, for its CPS and for the mean
CPS, the smallest true difference between two models that a test at α = 0.05 finds with 80 %
power (Miller 2024, "Adding error bars to evals": 2.80 × the standard error of the difference),
from the intervals of the runs shown.  A gap below it between two models may be real, but these
test sets cannot show it.

A run without per-item data (results imported from elsewhere, older runs) shows "—": no interval
is ever made up.  **A vs B** (its own tab, or from the ranking and a model's page) does the same
per task: the difference of CPS, its interval and p-value (Holm over the tasks), the items on
which the two models' answers differ, and one line such as "A better on 3 tasks, no difference
on 6, B better on 1".
"""

USER_VIEWS = """
### Your own views of the ranking

**A custom average** over the tasks you pick is the mean of their CPS.  Its interval and tier are
computed as the mean CPS's: every run keeps each task's CPS resampled (the first 200 of its 1,000
resamples, on the same items for every run), a resample of the custom average is the mean of the
chosen tasks' resamples, and the tier is the same paired test among the setting's runs.  With
200 resamples the interval's ends carry a little more Monte Carlo noise (about 0.2 of a standard
error) than the ranking's, and the simulation above has not yet checked its coverage; with all
ten tasks picked it *is* the ranking's mean CPS, interval and tier.  **Complete results only** hides the runs without a CPS on every task in view and says how
many it hid and what they miss.  **Chat and base models** are kept apart by what a run records:
*chat* when it applied the model's chat template or its submitter called it instruction-tuned,
*base* when it is pretrained and ran without one, *unknown* otherwise.

**Best of N from an organisation.**  An organisation (the part of a model id before "/") that
submits many variants of its model and keeps its best score at the top gets an inflated score:
each run's score is its skill plus test-set noise, and the maximum of N noisy scores sits above
a typical one even when every variant is equally good — the more submissions, the larger the
lift ("The Leaderboard Illusion", Singh et al. 2025, found such selective submission on Chatbot
Arena).  So the ranking counts each organisation's comparable runs in the setting (*Org runs*)
and marks its best ranked run "best of N from ORG": read that score as the best of N draws, and
compare it with the organisation's other runs (or show only each organisation's best run, which
makes every organisation one entry).
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
            USER_VIEWS.strip(),
            METRIC_SETS.strip(),
            REPRODUCE.strip(),
            "### Citation",
            f"```bibtex\n{BIBTEX}\n```",
        )
    )
