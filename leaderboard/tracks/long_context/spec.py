"""The long-context track's spec (INDAQA2): what the rest of the product knows of it (registered in
:data:`eval_queue.tracks.TRACKS`)."""

from __future__ import annotations

from eval_queue.tracks import TrackSpec, WorkerOption
from leaderboard.tracks.long_context.definition import (
    HUB_DATASET,
    HUB_DATASET_CONFIG,
    TRACK,
    KeptSide,
    LongContextOptions,
)

_APP = "leaderboard.tracks.long_context.app"

SPEC = TrackSpec(
    name=TRACK,
    label="Long context (INDAQA2)",
    summary="INDAQA2 questions over whole Italian books at 10K words, 50K words and the full book",
    options=LongContextOptions,
    worker_options=(
        WorkerOption(
            "--long-context-keep",
            "long-context: which end of a prompt longer than the model's window is kept — end (the "
            "paper's harness, default) or start (a variant, never ranked beside end runs)",
            parse=KeptSide.parse,
        ),
    ),
    hub_datasets=((HUB_DATASET, HUB_DATASET_CONFIG),),
    results_type="leaderboard.tracks.long_context.schema:LongContextResults",
    runner="backend.tracks.long_context.run:evaluate",
    check_data="backend.tracks.long_context.run:check_data",
    parse_results=f"{_APP}.results:parse_results_file",
    export=f"{_APP}.export:export_results",
    tabs=(f"{_APP}.tab:LongContextTab",),
    about="leaderboard.tracks.long_context.app.about:about_markdown",
    contents="leaderboard.tracks.long_context.contents:CONTENTS",
    eee="leaderboard.tracks.long_context.eee:EEE",
)
