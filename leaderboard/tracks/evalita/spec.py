"""The Evalita-LLM track's spec: what the rest of the product knows of it (registered in
:data:`eval_queue.tracks.TRACKS`)."""

from __future__ import annotations

from eval_queue.tracks import TrackSpec, WorkerOption
from leaderboard.tracks.evalita.definition import (
    FEWSHOT_SETTINGS,
    METRIC_SET_NAMES,
    TRACK,
    EvalitaOptions,
    parse_task_ids,
    suite_datasets,
)

_APP = "leaderboard.tracks.evalita.app"

SPEC = TrackSpec(
    name=TRACK,
    label="Evalita-LLM",
    summary="the ten Evalita-LLM tasks, every prompt, in the setting(s) you choose, ranked by CPS",
    options=EvalitaOptions,
    fewshot=FEWSHOT_SETTINGS,
    worker_options=(
        WorkerOption(
            "--tasks",
            "evalita: run only these task ids, e.g. wic,sa (a labelled subset run; default: all ten)",
            parse=parse_task_ids,
        ),
    ),
    hub_datasets=suite_datasets(),
    metric_sets=METRIC_SET_NAMES,
    results_type="leaderboard.tracks.evalita.schema:ResultsFile",
    runner="backend.tracks.evalita.run:evaluate",
    check_data="backend.tracks.evalita.run:check_data",
    rescore="backend.tracks.evalita.rescore:main",
    reproduce="backend.tracks.evalita.reproduce:main",
    parse_results=f"{_APP}.results:parse_results_file",
    export=f"{_APP}.export:export_results",
    snapshot=f"{_APP}.views.board:Board.of_store",
    tabs=(
        f"{_APP}.tab.ranking:RankingTab",
        f"{_APP}.tab.task:TaskTab",
        f"{_APP}.tab.model:ModelTab",
        f"{_APP}.tab.plots:PlotsTab",
        f"{_APP}.tab.compare:CompareTab",
    ),
    about=f"{_APP}.about:about_markdown",
    contents="leaderboard.tracks.evalita.contents:CONTENTS",
    contents_record=f"{_APP}.contents:records_of_table",
    eee="leaderboard.tracks.evalita.eee:EEE",
    hub_results="leaderboard.tracks.evalita.hub_results:HUB_RESULTS",
)
