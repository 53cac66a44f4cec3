"""The LLM-as-judge track's spec: what the rest of the product knows of it (registered in
:data:`eval_queue.tracks.TRACKS`)."""

from __future__ import annotations

from eval_queue.tracks import PanelRef, TrackSpec, WorkerOption
from leaderboard.core.datasource import DataSource
from leaderboard.tracks.judge.data import examples_option, paper_pins_option
from leaderboard.tracks.judge.definition import TRACK, JudgeOptions

_APP = "leaderboard.tracks.judge.app"

SPEC = TrackSpec(
    name=TRACK,
    label="LLM as judge",
    summary="the model as a judge of Italian summaries on five rubric criteria, measured against people",
    options=JudgeOptions,
    worker_options=(
        WorkerOption(
            "--judge-data",
            "judge: the annotated set, sample | local:<dir> | hub:<org>/<name> "
            "(default: follows --data; local:<dir> reads <dir>/judge/annotated.jsonl)",
            parse=DataSource.parse_spec,
        ),
        WorkerOption(
            "--judge-examples",
            "judge: the paper protocol's few-shot examples (JSONL: criterion, document, summary, score, "
            "explanation; every criterion), a maintainer's copy of the paper's — never bundled. Without it "
            "this worker refuses paper-protocol requests before claiming them",
            parse=examples_option,
            metavar="FILE",
        ),
        WorkerOption(
            "--judge-paper-pins",
            "judge: a maintainer's JSON file pinning the SHA-256 of the paper's examples file and "
            'annotated set ({"examples_sha256": …, "annotated_sha256": …}); only paper-protocol runs on '
            'exactly those bytes are comparable with Table 1 (without it: "paper protocol, other data")',
            parse=paper_pins_option,
            metavar="FILE",
        ),
    ),
    prefetch_options=(
        WorkerOption(
            "--judge-set",
            "also an annotated set for the judge track (the worker's --judge-data hub:ORG/NAME)",
            metavar="ORG/NAME",
        ),
    ),
    results_type="leaderboard.tracks.judge.schema:JudgeResultsFile",
    runner="backend.tracks.judge.run:evaluate",
    check_data="backend.tracks.judge.run:check_data",
    check_submission="leaderboard.tracks.judge.target:check_judge_target",
    parse_results=f"{_APP}.results:parse_results_file",
    export=f"{_APP}.export:export_results",
    tabs=(f"{_APP}.tab:JudgesTab",),
    panels=(
        PanelRef("task", f"{_APP}.panels:TaskJudgePanel"),
        PanelRef("model", f"{_APP}.panels:ModelJudgePanel"),
    ),
    about="leaderboard.tracks.judge.app.about:about_markdown",
    contents="leaderboard.tracks.judge.contents:CONTENTS",
    eee="leaderboard.tracks.judge.eee:EEE",
)
