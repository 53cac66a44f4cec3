"""The contamination track's spec: what the rest of the product knows of it (registered in
:data:`eval_queue.tracks.TRACKS`)."""

from __future__ import annotations

from eval_queue.tracks import PanelRef, TrackSpec, WorkerOption
from leaderboard.tracks.contamination.definition import TRACK


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError(f"must be a positive integer, got {text!r}")
    return value


def _set_ids(text: str) -> tuple[str, ...]:
    from eval_queue.text import unknown_name
    from leaderboard.tracks.contamination.suite import suite_sets

    known = [s.id for s in suite_sets()]
    chosen = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not chosen:
        raise ValueError("no set named; valid: " + ", ".join(known))
    for name in chosen:
        if name not in known:
            raise ValueError(unknown_name("contamination set", name, known))
    return chosen


_APP = "leaderboard.tracks.contamination.app"

SPEC = TrackSpec(
    name=TRACK,
    label="Contamination",
    summary="evidence that the model has seen the suite's public test sets in their published order "
    "(Oren et al.'s order test, CoDeC)",
    worker_options=(
        WorkerOption(
            "--contamination-sets",
            "contamination: test only these sets (comma-separated set ids: wic, te, …, ner-adg, …); "
            "default every set of the suite (a subset run is labelled, never comparable)",
            parse=_set_ids,
            metavar="IDS",
        ),
        WorkerOption(
            "--contamination-permutations",
            "contamination: random orders per shard in the order test (default 10)",
            parse=_positive_int,
            metavar="N",
        ),
    ),
    results_type="leaderboard.tracks.contamination.schema:ContaminationResults",
    runner="backend.tracks.contamination.run:evaluate",
    check_data="backend.tracks.contamination.run:check_data",
    parse_results=f"{_APP}.results:parse_results_file",
    export=f"{_APP}.export:export_results",
    tabs=(f"{_APP}.tab:ContaminationTab",),
    panels=(
        PanelRef("task", f"{_APP}.panels:TaskContaminationPanel"),
        PanelRef("model", f"{_APP}.panels:ModelContaminationPanel"),
    ),
    ranking_markers=f"{_APP}.markers:ranking_markers",
    about="leaderboard.tracks.contamination.app.about:about_markdown",
)
