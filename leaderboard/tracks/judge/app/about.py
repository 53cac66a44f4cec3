"""The judge track's About text (the spec's ``about``): what it measures, and each criterion's guideline."""

from __future__ import annotations

from leaderboard.tracks.judge.definition import (
    EXPLANATION_KEY,
    LEVEL_NAMES_EN,
    SCORE_KEY,
    SCORE_MAX,
    SCORE_MIN,
    SCORES,
)
from leaderboard.tracks.judge.prompts import ANSWER_PREFIX, MAX_ANSWER_TOKENS
from leaderboard.tracks.judge.rubric import RUBRIC


def about_markdown() -> str:
    """The About text: what the track measures and the annotation guideline of each criterion."""
    lines = [
        "### LLM as judge (Donati et al.)",
        "",
        "A model acts as a **judge** of Italian summaries: for each (article, summary) it scores five "
        f"criteria from {SCORE_MIN} to {SCORE_MAX} and explains each score in Italian, answering "
        f'`{{"{SCORE_KEY}": …, "{EXPLANATION_KEY}": …}}`. Each criterion has its own prompt '
        "(impartial evaluator, definition, sub-criteria, the five score levels, the output format). An "
        "answer whose JSON cannot be read, or whose score is not a whole number from 1 to 5, is counted "
        "as **unparsed**, never as a score; the unparsed rate is shown beside every figure.",
        "",
        "**Judges leaderboard.** Judges are compared with human scores on an annotated set: Spearman's ρ "
        "(with its p-value) and mean absolute error per criterion and over all criteria, the positive bias "
        "(mean judge score − mean human score: the paper found judges too generous, above all on fluency "
        "and coherence), the agreement between judges (Spearman's ρ on the same items) and the score "
        "distributions. With fewer than three scored items, or when the scores do not vary, a figure is "
        "*not enough data*.",
        "",
        "**Judged generations.** A judge scores the summaries that models wrote for the Evalita SUM task; "
        "the mean score per criterion is shown beside ROUGE on the SUM page and on the model's page.",
        "",
        "**Two protocols.** *paper* is the protocol of the paper's Table 1: each criterion's English "
        "prompt from its Appendix A (quoted with attribution; the explanation is asked for in Italian), "
        "few-shot, with the paper's worked examples in its slots, the model's own generation settings (its "
        "`generation_config`, greedy when it has none) and a token budget a reasoning model can think in (8,192 "
        "tokens for a model that thinks in a `<think>` block, 1,024 for any other; the think block is "
        "set aside before the answer is read, and kept in the details).  The paper's "
        "examples are published under a no-derivatives licence and are not part of this project: a worker "
        "whose maintainer holds them serves paper requests with `--judge-examples FILE` (JSONL: "
        "`criterion`, `document`, `summary`, `score`, `explanation`), and each run records the file's "
        "name and digest.  *project* (the default, and what the bundled sample and small models run) is "
        "the project's own Italian rubric (its guidelines below), zero-shot, with the judge's answer started for it with "
        f"`{ANSWER_PREFIX}` so that even a small judge gives the score first, in at most "
        f"{MAX_ANSWER_TOKENS} greedy tokens; `python -m backend.tracks.judge MODEL --few-shot FILE` runs "
        "it with examples.  Only paper runs in full on a real annotated set are comparable with Table 1; "
        "judges are ranked only beside judges of the same set (identified by its SHA-256).",
        "",
        "**Submitting a judge.** `python -m eval_queue submit ORG/MODEL --track judge` (the annotated "
        "set; `--judge-protocol paper` for Table 1's protocol); `--judge-target RESULTS_PATH` scores the "
        "SUM outputs of that Evalita run instead.",
        "",
        "#### Annotation guidelines (after the paper's Appendix B)",
    ]
    for spec in RUBRIC.values():
        g = spec.guideline
        lines += ["", f"**{spec.label}** ({spec.label_it}). {g.task} *{g.definition}*", ""]
        lines += [f"- *{s.name}*: {s.text}" for s in g.subcriteria]
        scale = "; ".join(
            f"{score} {LEVEL_NAMES_EN[score - 1]}: {text}"
            for score, text in zip(SCORES, g.scale, strict=True)
        )
        lines += ["", f"Scale: {scale}."]
    return "\n".join(lines)
