"""``python -m backend rescore``: every metric of stored Evalita runs again, from their details.

    python -m backend rescore RESULTS_PATH [RESULTS_PATH ...] [--metric-set S] [--dry-run]
    python -m backend rescore --all [--metric-set S] [--dry-run]

No model, no GPU, no network: it reads the results and details stores of ``Settings.from_env()``
(``EVALITA_DATA_DIR`` or the hub repos) and, per run and metric set
(:mod:`leaderboard.tracks.evalita.metric_sets`; default: both):

* ``lm-eval`` (version 1, the harness's own numbers) is **checked**: every prompt score is
  recomputed from the details and compared, bit for bit, with the file's ``tasks``, which are
  never rewritten.
* ``as-specified`` is **filled**: its block of the current version is added to the file when
  the file has none (the original ``tasks`` and every older block stay as they are).  A file
  that already holds an equal block is left untouched (idempotent); one whose block of the same
  version differs is reported, never overwritten.  The block carries the intervals of the
  set's scores (``uncertainty``: prompt scores, task CPS, mean CPS with both draw sets),
  bootstrapped from the set's per-item statistics (computed from the details) on the items of
  the run's per-item file; a stored block of equal scores without them (or with outdated
  ones) gets them added in place, its scores untouched.  A run without a per-item file gets
  its block without intervals (said in its line, not a problem).

* the results file's ``uncertainty`` block (the lm-eval scores' intervals, checked with the
  ``lm-eval`` set) is **refreshed** when it predates the current interval method (its
  ``method`` does not name :data:`~leaderboard.tracks.evalita.cps_intervals.METHOD_VERSION`:
  percentile intervals and mean-CPS draws the app no longer pairs, so such a run gets no tier),
  or keeps no per-task draws (written before issue 32: no custom average's interval or tier):
  it is recomputed from the run's per-item file (``items.parquet`` in its details folder) and
  rewritten in place, only if those items reproduce the published scores.  ``tasks`` is never
  touched; a current block is left as it is.

A run whose details are missing, or lack what a metric needs (older details keep no LS
annotator counts; a NER or RE target holding a separator, without the structured gold), is
named with the reason and skipped for that task or set.  Each run is reported as one of
(:class:`RunStatus`, the rule :meth:`RunOutcome.status`):

* ``checked`` — every requested set scored every task of the run it scores;
* ``partly checked`` — some task of some set was skipped (each named, with why), or a set
  scored nothing while another scored something;
* ``not checkable`` — the run kept no details, or no set could score any task.

Exit codes, the worst run deciding: 0 — every run checked; 1 — a check found a difference, a
block conflicts, an outdated uncertainty block cannot be recomputed, or a file could not be
read or written; 2 — bad usage; 3 — some run only
partly checked (none worse); 4 — some run not checkable (none with a problem).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from eval_queue.errors import (
    ConfigurationError,
    EvalitaError,
    MalformedFileError,
    NotFoundError,
    StorageError,
)
from eval_queue.redact import install_log_redaction
from eval_queue.requests import isoformat, utc_now
from eval_queue.safe_json import DETAILS_FILE_MAX_BYTES, RESULTS_LIMITS, load_object
from eval_queue.settings import Settings
from eval_queue.storage import Stores, open_stores
from eval_queue.storage.paths import is_results_file, results_files
from leaderboard.core.items import ITEMS_FILE_NAME, RunItems, items_from_parquet
from leaderboard.core.migrations import track_of, upgrade
from leaderboard.core.numbers import percent
from leaderboard.core.summary import UncertaintySummary
from leaderboard.core.uncertainty import DrawCache
from leaderboard.tracks.evalita.cps_intervals import METHOD_VERSION
from leaderboard.tracks.evalita.definition import TASK_IDS, TRACK
from leaderboard.tracks.evalita.metric_sets import (
    METRIC_SETS,
    MetricSet,
    MetricSetSpec,
    block_of,
    run_prompts,
    score_run,
)
from leaderboard.tracks.evalita.schema import (
    DetailRecord,
    MetricSetBlock,
    PromptScore,
    ResultsFile,
    TaskResult,
    details_file_name,
    parse_details,
)
from leaderboard.tracks.evalita.uncertainty import cps_figure, evalita_summary, metric_set_summary

log = logging.getLogger("backend.tracks.evalita.rescore")

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, EXIT_PARTLY, EXIT_NOT_CHECKABLE = 0, 1, 2, 3, 4


class RunStatus(StrEnum):
    """How much of a run rescoring could check (see the module docstring)."""

    CHECKED = "checked"
    PARTLY = "partly checked"
    NOT_CHECKABLE = "not checkable"


class Action(StrEnum):
    """What rescoring did with one metric set of one run."""

    WRITTEN = "written"
    WOULD_WRITE = "would be written"  # --dry-run
    UNCHANGED = "unchanged"  # the file already holds an equal block
    CHECKED = "checked"  # lm-eval: every recomputed score equals the file's
    DIFFERS = "differs"  # lm-eval: a recomputed score differs; or a block of the same version does
    SKIPPED = "skipped"  # nothing could be scored (the reason says why)


@dataclass
class SetOutcome:
    metric_set: MetricSet
    version: int
    action: Action
    #: Tasks scored, and tasks skipped with the reason.
    scored: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    #: lm-eval: prompt scores compared / identical bit for bit / equal as shown (two decimals).
    compared: int = 0
    identical: int = 0
    shown_equal: int = 0
    differences: list[str] = field(default_factory=list)
    #: The set's intervals, when they were computed (None: the block's are current, or it differs).
    intervals: IntervalsOutcome | None = None

    @property
    def problem(self) -> bool:
        return self.action is Action.DIFFERS or (self.intervals is not None and self.intervals.problem)


@dataclass
class IntervalsOutcome:
    """What rescoring did with intervals: the file's outdated ``uncertainty`` block, or a metric
    set block's (computed with the block, or added to a stored block that has none)."""

    #: WRITTEN, WOULD_WRITE (--dry-run) or SKIPPED (they could not be computed: ``why``).
    action: Action
    why: str = ""
    #: Whether not computing them is a problem (unreadable per-item file, items that do not
    #: reproduce the scores), not merely a run without per-item data.
    problem: bool = False
    #: What the file keeps when nothing is written.
    instead: str = "no intervals"
    #: Tasks left without an interval (the others have theirs), with why.
    without: dict[str, str] = field(default_factory=dict)
    #: Which intervals: a set's (its block's), or the lm-eval scores' (the file's block).
    label: str = "intervals"

    def describe(self) -> str:
        if self.action is Action.SKIPPED:
            return f"{self.instead} ({self.why})"
        return f"{self.label} ({METHOD_VERSION}) {self.action}"


@dataclass
class RunOutcome:
    """What rescoring did with one results file."""

    path: str
    sets: list[SetOutcome] = field(default_factory=list)
    #: Why the run was not rescored at all (no details…).
    skipped: str | None = None
    failed: str | None = None
    #: The file belongs to another track (no metric sets): not rescored, not an Evalita run.
    other_track: str | None = None
    #: The file's ``uncertainty`` block, when it was outdated (None: current, or none at all).
    intervals: IntervalsOutcome | None = None

    @property
    def problem(self) -> bool:
        return (
            self.failed is not None
            or any(s.problem for s in self.sets)
            or (self.intervals is not None and self.intervals.problem)
        )

    @property
    def written(self) -> bool:
        intervals = [self.intervals, *(s.intervals for s in self.sets)]
        return any(s.action is Action.WRITTEN for s in self.sets) or any(
            i is not None and i.action is Action.WRITTEN for i in intervals
        )

    @property
    def status(self) -> RunStatus | None:
        """Checked, partly checked or not checkable (None: it failed, or is another track's)."""
        if self.failed is not None or self.other_track is not None:
            return None
        if self.skipped is not None or not any(s.scored for s in self.sets):
            return RunStatus.NOT_CHECKABLE
        if any(s.skipped or not s.scored for s in self.sets):
            return RunStatus.PARTLY
        return RunStatus.CHECKED


# --------------------------------------------------------------------------- one run


class _Details:
    """A run's details files, each read and parsed once (both sets share them)."""

    def __init__(self, stores: Stores, folder: str) -> None:
        self.stores = stores
        self.folder = folder
        self._read: dict[tuple[str, str], list[DetailRecord]] = {}

    def __call__(self, task_id: str, prompt_id: str) -> list[DetailRecord]:
        key = (task_id, prompt_id)
        if key not in self._read:
            path = f"{self.folder}/{details_file_name(task_id, prompt_id)}"
            self._read[key] = parse_details(
                self.stores.details.read(path, max_bytes=DETAILS_FILE_MAX_BYTES), path
            )
        return self._read[key]


#: How the report names the results file's own ``uncertainty`` block (the lm-eval scores').
FILE_INTERVALS = "lm-eval intervals"
#: The largest per-item file rescoring reads (a full Evalita run's is about 3 MB).
ITEMS_FILE_MAX_BYTES = 64 * 2**20


class _PerItemFile:
    """A run's per-item file, read and parsed once (``None``: the run kept none)."""

    def __init__(self, stores: Stores, folder: str, name: str = ITEMS_FILE_NAME) -> None:
        self.path = f"{folder}/{name}"
        self.stores = stores
        self._read = False
        self._items: RunItems | None = None

    def get(self) -> RunItems | None:
        """Raises :class:`MalformedFileError` or :class:`StorageError` (other than not found)."""
        if not self._read:
            try:
                data = self.stores.details.read(self.path, max_bytes=ITEMS_FILE_MAX_BYTES)
            except NotFoundError:
                data = None
            self._items = None if data is None else items_from_parquet(data, self.path)
            self._read = True
        return self._items


def outdated(summary: UncertaintySummary | None) -> bool:
    """Whether an ``uncertainty`` block predates the current interval method (its ``method`` does
    not name :data:`METHOD_VERSION`), or keeps a task's CPS interval without that task's draws
    (a block written before issue 32: a custom average over some tasks gets no interval or tier
    from it); an absent block is not outdated (the run has no per-item data)."""
    if summary is None:
        return False
    if METHOD_VERSION not in summary.method:
        return True
    return any(cps_figure(t) in summary.intervals and cps_figure(t) not in summary.draws for t in TASK_IDS)


def _published(tasks: Mapping[str, TaskResult]) -> dict[str, dict[str, float | None]]:
    return {t: {p: s.score for p, s in r.prompts.items()} for t, r in tasks.items()}


def recomputed_intervals(
    results: ResultsFile, per_item: _PerItemFile, cache: DrawCache | None = None
) -> tuple[UncertaintySummary | None, str]:
    """The file's ``uncertainty`` block computed again from the per-item file, or ``(None, why)``.

    The per-item data must reproduce the published ``tasks`` scores
    (:func:`~leaderboard.tracks.evalita.uncertainty.evalita_summary` refuses otherwise): an
    interval around another number would be a made-up one.
    """
    try:
        run_items = per_item.get()
    except (MalformedFileError, StorageError) as exc:
        return None, f"its per-item file cannot be read: {exc}"
    if run_items is None or not run_items.tasks:
        return None, f"no per-item file ({per_item.path})"
    try:
        return evalita_summary(run_items, _published(results.tasks), cache=cache), ""
    except ValueError as exc:
        return None, str(exc)


def current(summary: UncertaintySummary | None) -> bool:
    """Whether a metric set block's intervals are there, of the current method."""
    return summary is not None and not outdated(summary)


def set_intervals(
    spec: MetricSetSpec,
    results: ResultsFile,
    block: MetricSetBlock,
    read: _Details,
    per_item: _PerItemFile,
    cache: DrawCache | None = None,
) -> tuple[UncertaintySummary | None, IntervalsOutcome]:
    """A set block's intervals (:func:`~leaderboard.tracks.evalita.uncertainty.metric_set_summary`)
    and what to report; ``None`` when they cannot be computed (the outcome says why)."""
    try:
        like = per_item.get()
    except (MalformedFileError, StorageError) as exc:
        return None, IntervalsOutcome(Action.SKIPPED, f"its per-item file cannot be read: {exc}", True)
    if like is None or not like.tasks:
        return None, IntervalsOutcome(Action.SKIPPED, f"no per-item file ({per_item.path})")
    try:
        summary, without = metric_set_summary(spec, results.tasks, block, read, like, cache=cache)
    except ValueError as exc:
        return None, IntervalsOutcome(Action.SKIPPED, str(exc), True)
    except (MalformedFileError, StorageError, EvalitaError) as exc:
        return None, IntervalsOutcome(Action.SKIPPED, f"reading its details: {exc}", True)
    if summary is None:
        return None, IntervalsOutcome(Action.SKIPPED, "no task could be bootstrapped", without=without)
    return summary, IntervalsOutcome(Action.WRITTEN, without=without)


def _same_score(stored: PromptScore, computed: PromptScore) -> tuple[bool, bool]:
    """(identical bit for bit, equal as shown): the score, and NER's per-domain scores."""
    pairs = [(stored.score, computed.score)]
    if stored.parts is not None:
        pairs += [(stored.parts.get(k), v) for k, v in (computed.parts or {}).items()]
    identical = all(a == b for a, b in pairs)
    shown = all(percent(a) == percent(b) for a, b in pairs)
    return identical, shown


def check_harness_set(spec: MetricSetSpec, results: ResultsFile, read: _Details) -> SetOutcome:
    """Recompute a harness-native set from the details and compare it with the file's ``tasks``."""
    scores = score_run(spec, run_prompts(results), read)
    outcome = SetOutcome(spec.id, spec.version, Action.CHECKED, list(scores.tasks), dict(scores.skipped))
    for task_id, computed in scores.tasks.items():
        for prompt_id, score in computed.prompts.items():
            stored = results.tasks[task_id].prompts[prompt_id]
            identical, shown = _same_score(stored, score)
            outcome.compared += 1
            outcome.identical += identical
            outcome.shown_equal += shown
            if not identical:
                outcome.differences.append(
                    f"{task_id}/{prompt_id}: stored {stored.score!r}, recomputed {score.score!r}"
                )
    if outcome.differences:
        outcome.action = Action.DIFFERS
    elif not scores.tasks:
        outcome.action = Action.SKIPPED
    return outcome


def _same_block(a: MetricSetBlock, b: MetricSetBlock) -> bool:
    """Equal numbers and skipped tasks (who computed them, and when, does not matter)."""
    keep = {"tasks", "skipped"}
    return a.model_dump(include=keep) == b.model_dump(include=keep)


def fill_set(
    spec: MetricSetSpec,
    results: ResultsFile,
    read: _Details,
    now: str,
    per_item: _PerItemFile,
    cache: DrawCache | None = None,
) -> tuple[SetOutcome, MetricSetBlock | None, UncertaintySummary | None]:
    """A set's block for the run with its intervals, and what the file needs: the block to append
    (None: the file has an equal one), or the intervals to add to its stored block (None: it
    has current ones, or they cannot be computed).  The stored block's scores are never rewritten."""
    scores = score_run(spec, run_prompts(results), read)
    outcome = SetOutcome(spec.id, spec.version, Action.WRITTEN, list(scores.tasks), dict(scores.skipped))
    if not scores.tasks:
        outcome.action = Action.SKIPPED
        return outcome, None, None
    block = block_of(spec, scores, "rescore", now)
    stored = results.metric_set_block(spec.id.value, spec.version)
    if stored is not None and not _same_block(stored, block):
        outcome.action = Action.DIFFERS
        outcome.differences.append(
            f"the file's {spec.id}/{spec.version} block (by {stored.computed_by}) differs from the "
            "details' scores; not overwritten (a change of metrics needs a new version)"
        )
        return outcome, None, None
    if stored is not None and current(stored.uncertainty):
        outcome.action = Action.UNCHANGED
        return outcome, None, None
    summary, outcome.intervals = set_intervals(spec, results, block, read, per_item, cache)
    if stored is None:
        return outcome, block.model_copy(update={"uncertainty": summary}), None
    outcome.action = Action.UNCHANGED  # its scores; the intervals are added to it
    return outcome, None, summary


def _apply(
    data: bytes,
    path: str,
    blocks: Sequence[MetricSetBlock],
    intervals: UncertaintySummary | None = None,
    block_intervals: Sequence[tuple[MetricSetBlock, UncertaintySummary]] = (),
) -> bytes:
    """The file with ``blocks`` appended to its ``metric_sets``, ``block_intervals`` as the
    ``uncertainty`` of its stored blocks of the same (name, version) (the last, the one read)
    and, if given, ``intervals`` as its ``uncertainty`` block; every other key (``tasks`` first,
    the blocks' scores) kept as it was."""
    raw = load_object(data, path, RESULTS_LIMITS)
    present = raw.get("metric_sets") or []
    for block, summary in block_intervals:
        same = [p for p in present if _same_key(p, block)]
        if same:
            same[-1]["uncertainty"] = summary.model_dump(mode="json")
    kept = [b for b in blocks if not any(_same_key(p, b) for p in present)]  # a racing rescore wrote it
    raw["metric_sets"] = [*present, *(b.model_dump(mode="json") for b in kept)]
    if intervals is not None:
        raw["uncertainty"] = intervals.model_dump(mode="json")
    ResultsFile.from_raw(upgrade(dict(raw), path), path)  # still a valid file
    return (json.dumps(raw, indent=2, ensure_ascii=False) + "\n").encode()


def _same_key(present: Any, block: MetricSetBlock) -> bool:
    return isinstance(present, dict) and (present.get("name"), present.get("version")) == (
        block.name,
        block.version,
    )


def rescore_file(
    stores: Stores,
    path: str,
    sets: Iterable[MetricSet],
    *,
    dry_run: bool = False,
    now: str | None = None,
    cache: DrawCache | None = None,
) -> RunOutcome:
    """Rescore one results file (see the module docstring); never raises for a bad run.

    ``cache`` keeps the bootstrap draws between files (runs on the same items share them).
    """
    outcome = RunOutcome(path)
    try:
        data = stores.results.read(path, max_bytes=RESULTS_LIMITS.max_bytes)
        raw = load_object(data, path, RESULTS_LIMITS)
        track = track_of(raw.get("schema"), raw.get("track"), path)
        if track != TRACK:
            outcome.other_track = track
            return outcome
        results = ResultsFile.from_raw(upgrade(raw, path), path)
    except (MalformedFileError, StorageError) as exc:
        outcome.failed = f"cannot read it: {exc}"
        return outcome
    if not results.run.details_path:
        outcome.skipped = "the run kept no details (run.details_path is empty)"
        return outcome
    read = _Details(stores, results.run.details_path)
    per_item = _PerItemFile(
        stores,
        results.run.details_path,
        results.uncertainty.items_file if results.uncertainty is not None else ITEMS_FILE_NAME,
    )
    now = now or isoformat(utc_now())
    blocks: list[MetricSetBlock] = []
    block_intervals: list[tuple[MetricSetBlock, UncertaintySummary]] = []
    try:
        for name in sets:
            spec = METRIC_SETS[name]
            if spec.harness_native:
                outcome.sets.append(check_harness_set(spec, results, read))
            else:
                done, block, added = fill_set(spec, results, read, now, per_item, cache)
                outcome.sets.append(done)
                if block is not None:
                    blocks.append(block)
                stored = results.metric_set_block(spec.id.value, spec.version)
                if added is not None and stored is not None:
                    block_intervals.append((stored, added))
    except (MalformedFileError, StorageError, EvalitaError) as exc:
        outcome.failed = f"reading its details: {exc}"
        return outcome
    intervals = None
    # The file's block holds the lm-eval scores' intervals: refreshed with that set's check.
    if MetricSet.LM_EVAL in sets and outdated(results.uncertainty):
        intervals, why = recomputed_intervals(results, per_item, cache)
        outcome.intervals = (
            IntervalsOutcome(Action.WRITTEN, label=FILE_INTERVALS)
            if intervals is not None
            else IntervalsOutcome(
                Action.SKIPPED, why, problem=True, instead=f"outdated {FILE_INTERVALS} kept"
            )
        )
    changes = (
        [f"{b.name}/{b.version}" for b in blocks]
        + [f"{b.name}/{b.version} intervals" for b, _ in block_intervals]
        + (["intervals"] if intervals is not None else [])
    )
    if changes and dry_run:
        for set_outcome in outcome.sets:
            if set_outcome.action is Action.WRITTEN:
                set_outcome.action = Action.WOULD_WRITE
        for done in [outcome.intervals, *(s.intervals for s in outcome.sets)]:
            if done is not None and done.action is Action.WRITTEN:
                done.action = Action.WOULD_WRITE
    elif changes:
        try:
            message = f"rescore: {', '.join(changes)} for {path}"
            stores.results.update(
                path,
                lambda data: _apply(data, path, blocks, intervals, block_intervals),
                message=message,
            )
        except (MalformedFileError, StorageError) as exc:
            outcome.failed = f"writing it: {exc}"
    return outcome


def rescore(
    stores: Stores, paths: Iterable[str], sets: Sequence[MetricSet], *, dry_run: bool = False
) -> list[RunOutcome]:
    """:func:`rescore_file` of every path, in order (one time stamp for the whole pass)."""
    now = isoformat(utc_now())
    cache = DrawCache()  # runs on the same test items share their draws
    return [rescore_file(stores, path, sets, dry_run=dry_run, now=now, cache=cache) for path in paths]


def all_results_paths(stores: Stores) -> list[str]:
    """Every results file of the store (of any track: the others are named and skipped)."""
    return list(results_files(stores.results))


# --------------------------------------------------------------------------- the report


def describe(outcome: RunOutcome) -> str:
    """One line (and indented details) saying what happened to a run."""
    if outcome.failed:
        return f"{outcome.path}: FAILED, {outcome.failed}"
    if outcome.other_track:
        return f"{outcome.path}: not rescored, a {outcome.other_track} results file (only Evalita runs have metric sets)"
    if outcome.skipped:
        return f"{outcome.path}: {RunStatus.NOT_CHECKABLE}, {outcome.skipped}"
    parts = []
    notes = []
    for s in outcome.sets:
        head = f"{s.metric_set}/{s.version}"
        if s.action in (Action.CHECKED, Action.DIFFERS) and s.compared:
            parts.append(
                f"{head} {s.action}: {s.identical} of {s.compared} prompt scores identical"
                + (f", {s.shown_equal} equal to two decimals" if s.identical != s.compared else "")
            )
        else:
            parts.append(f"{head} {s.action}" + (f" ({', '.join(s.scored)})" if s.scored else ""))
        if s.intervals is not None:
            parts[-1] += f", {s.intervals.describe()}"
            notes += [f"  {head}: {task} has no interval: {why}" for task, why in s.intervals.without.items()]
        notes += [f"  {head}: {task} skipped: {why}" for task, why in s.skipped.items()]
        notes += [f"  {head}: {line}" for line in s.differences[:10]]
    if outcome.intervals is not None:
        parts.append(outcome.intervals.describe())
    status = outcome.status
    if status is RunStatus.PARTLY:
        skipped = sorted({task for s in outcome.sets for task in s.skipped})
        unscored = [f"{s.metric_set}/{s.version}" for s in outcome.sets if not s.scored]
        head = f"{status} (skipped: {', '.join(skipped + unscored)})"
    else:
        head = str(status)
    return "\n".join([f"{outcome.path}: {head}: " + "; ".join(parts), *notes])


def summary(outcomes: Sequence[RunOutcome]) -> str:
    written = sum(o.written for o in outcomes)
    failed = sum(o.failed is not None for o in outcomes)
    differ = sum(any(s.problem for s in o.sets) for o in outcomes)
    kept = sum(o.intervals is not None and o.intervals.problem for o in outcomes)  # the file's block
    others = sum(o.other_track is not None for o in outcomes)
    counts = {status: sum(o.status is status for o in outcomes) for status in RunStatus}
    return (
        f"{len(outcomes) - others} Evalita results file(s): "
        + ", ".join(f"{n} {status}" for status, n in counts.items())
        + f"; {written} written, {differ} with differences, {failed} failed"
        + (f", {kept} with outdated {FILE_INTERVALS} kept" if kept else "")
        + (f"; {others} of other tracks left alone" if others else "")
    )


def exit_status(outcomes: Sequence[RunOutcome]) -> int:
    """The worst run decides: a problem (1), then not checkable (4), partly checked (3), else 0."""
    if any(o.problem for o in outcomes):
        return EXIT_PROBLEMS
    statuses = {o.status for o in outcomes}
    if RunStatus.NOT_CHECKABLE in statuses:
        return EXIT_NOT_CHECKABLE
    if RunStatus.PARTLY in statuses:
        return EXIT_PARTLY
    return EXIT_OK


# --------------------------------------------------------------------------- command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m backend rescore",
        description="Recompute the metrics of stored Evalita runs from their details (no model, offline).",
        epilog="Exit codes (the worst run decides): 0 every run checked; 1 a difference, a conflict or "
        "an unreadable file; 2 bad usage; 3 some run partly checked (tasks skipped, named with why); "
        "4 some run not checkable (no details, or nothing scorable).",
    )
    parser.add_argument(
        "paths", nargs="*", metavar="RESULTS_PATH", help="results files, as `eval_queue list` shows them"
    )
    parser.add_argument("--all", action="store_true", help="every results file of the store")
    parser.add_argument(
        "--metric-set",
        choices=[m.value for m in MetricSet],
        action="append",
        help="lm-eval: check the harness's numbers (and refresh an outdated uncertainty block); "
        "as-specified: add its block (default: both)",
    )
    parser.add_argument("--dry-run", action="store_true", help="compute and report, write nothing")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="with --all, also name other tracks' files"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    install_log_redaction()
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    parser = _parser()
    args = parser.parse_args(argv)
    if bool(args.paths) == bool(args.all):
        parser.print_usage(sys.stderr)
        print("rescore: name results files or give --all (not both)", file=sys.stderr)
        return EXIT_USAGE
    try:
        settings = Settings.from_env()
    except ConfigurationError as exc:
        log.error("%s", exc)
        return EXIT_USAGE
    install_log_redaction(*settings.secrets)
    stores = open_stores(settings)
    sets = [MetricSet(m) for m in dict.fromkeys(args.metric_set or [m.value for m in MetricSet])]
    try:
        paths = all_results_paths(stores) if args.all else list(args.paths)
    except StorageError as exc:
        log.error("cannot list the results store: %s", exc)
        return EXIT_PROBLEMS
    not_results = [p for p in paths if not is_results_file(p)]
    if not_results:
        print(f"rescore: not a results file (results_*.json): {', '.join(not_results)}", file=sys.stderr)
        return EXIT_USAGE
    outcomes = []
    now = isoformat(utc_now())
    cache = DrawCache()
    for path in paths:
        outcome = rescore_file(stores, path, sets, dry_run=args.dry_run, now=now, cache=cache)
        outcomes.append(outcome)
        if not (args.all and outcome.other_track and not args.verbose):
            print(describe(outcome), flush=True)
    print(summary(outcomes) + (" (dry run: nothing written)" if args.dry_run else ""))
    return exit_status(outcomes)


if __name__ == "__main__":
    sys.exit(main())
