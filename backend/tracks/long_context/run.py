"""Evaluate one model on the long-context track: data → harness (once) → results + details.

The worker calls :func:`evaluate` (the spec's runner), which runs :func:`run_long_context`::

    evaluation = run_long_context(request, ["10k", "full"], "sample", workdir, RunOptions(...))
    evaluation.run            # LongContextRunInfo (what ran, on which data)
    evaluation.settings       # the results body: per setting, the sets' scores and the truncation
    evaluation.details        # {harness task: [LongContextDetail, ...]}
    evaluation.details_jsonl()  # {"<task>.jsonl": bytes}

The harness runs through :func:`backend.runner.run_harness` with the track's model class
(:data:`backend.tracks.long_context.lm.MODEL_NAME`: the ``hf`` model that reads what lm-eval's
``hf`` reads — the prompt's last tokens when it does not fit — and shares each book's
prefill), the model loaded once for every setting; progress and an ETA per setting go to the
log.  Only ``hf`` is supported.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.config import WorkerConfig
from backend.options import HarnessError, ModelRef, RunOptions
from backend.tracks import Evaluation, RunContext, StageError
from backend.tracks.long_context.data import LongContextData, prepare_long_context
from eval_queue.requests import EvalRequest
from leaderboard.core.datasource import DataSource, DataSourceError
from leaderboard.core.schema import RunInfo
from leaderboard.core.summary import ITEMS_FILE_NAME, UncertaintySummary
from leaderboard.tracks.long_context.definition import (
    PAPER_KEPT_SIDE,
    ContextSetting,
    KeptSide,
    Metric,
    parse_settings,
)
from leaderboard.tracks.long_context.schema import LongContextDetail, LongContextRunInfo, SettingResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LongContextEvaluation:
    """One run's run block, results body (per setting) and details, before the worker stamps them."""

    run: LongContextRunInfo
    settings: dict[ContextSetting, SettingResult]
    details: dict[str, list[LongContextDetail]]
    data: LongContextData
    architecture: str | None = None
    #: The per-item file's bytes and the intervals computed from it (None: no per-item data).
    items: bytes | None = None
    uncertainty: UncertaintySummary | None = None

    def evaluation(self, variant: str | None) -> Evaluation:
        """What the worker publishes (:class:`~backend.tracks.Evaluation`) for a run of ``variant``."""
        body: dict[str, Any] = {"settings": self.settings}
        details = self.details_jsonl()
        if self.items is not None and self.uncertainty is not None:
            body["uncertainty"] = self.uncertainty
            details[ITEMS_FILE_NAME] = self.items
        return Evaluation(self.run, body, details, variant, self.architecture)

    def details_jsonl(self) -> dict[str, bytes]:
        """One JSONL file per harness task, named ``<task>.jsonl``."""
        return {
            f"{task}.jsonl": "".join(r.model_dump_json() + "\n" for r in records).encode()
            for task, records in self.details.items()
        }


#: What lm-eval keeps of each request in a logged sample that repeats the prompt (the whole
#: book, per question): ``arguments`` holds (prompt, generation settings), ``resps`` the
#: raw answers that ``filtered_resps`` repeats.  Nothing downstream reads them.
PROMPT_FIELDS = ("arguments", "resps")


def drop_prompts(samples: Mapping[str, Sequence[MutableMapping[str, Any]]]) -> None:
    """Remove the prompt text from lm-eval's logged samples, in place.

    A logged sample's ``arguments`` holds the prompt: the book, up to 250K tokens, once per
    question (about 10 GB over the real data's ``full`` setting).  While the harness runs
    those strings are the requests' own (no copy); this drops the last reference to them
    as soon as it returns, before anything converts, keeps or writes the samples.  The
    doc keeps the book's file path, never its text.
    """
    for task_samples in samples.values():
        for sample in task_samples:
            for name in PROMPT_FIELDS:
                sample.pop(name, None)


def _run_info(data: LongContextData, run: RunInfo, report: dict[str, Any]) -> LongContextRunInfo:
    """The harness's run block plus what a long-context run adds."""
    return LongContextRunInfo(
        **run.model_dump(exclude={"data"}),
        data=data.label,
        context_settings=sorted({t.setting for t in data.tasks}, key=list(parse_settings(None)).index),
        model_class=report.get("model_class"),
        prefix_reuse=report.get("reuse_prefix"),
        prefill_tokens=report.get("prefill_tokens"),
        window_tokens=report.get("max_length"),
        kept_side=report.get("kept_side"),
        decode_cache=report.get("decode_cache"),
        data_sha256=data.revision.sha256 if data.revision else None,
        data_commit=data.revision.commit if data.revision else None,
        data_mismatches=list(data.revision.mismatches)
        if data.revision and data.revision.mismatches is not None
        else None,
    )


def run_long_context(
    request: EvalRequest,
    settings: str | Sequence[str] | None,
    source: str | DataSource,
    workdir: Path,
    options: RunOptions,
    *,
    keep: str | KeptSide = KeptSide.END,
    reuse_prefix: bool = True,
    on_progress: Callable[[str], None] | None = None,
) -> LongContextEvaluation:
    """Prepare the data for ``settings`` (default all three), run the harness once, convert.

    ``keep``: which end of a prompt longer than the model's window is kept (``end``, the
    paper's harness, or the ``start`` variant; :class:`KeptSide`).

    Raises :class:`~leaderboard.core.datasource.DataSourceError` for bad data (before the model loads),
    :class:`HarnessError` when the harness cannot run, and
    :class:`~backend.tracks.IncompleteRunError` when a task or score is missing.
    """
    from backend import runner
    from backend.tracks.long_context import convert
    from backend.tracks.long_context.lm import MODEL_NAME

    if options.backend != "hf":
        raise HarnessError(f"the long-context track runs on the hf backend only (asked: {options.backend})")
    chosen = parse_settings(settings if settings is None or isinstance(settings, str) else list(settings))
    data = prepare_long_context(source, workdir, chosen)
    model = ModelRef(request.model, request.revision, request.precision.value)
    output = runner.run_harness(
        model,
        data.task_names,
        0,
        options,
        # The track's own tasks only: no built-in task is indexed or could be read instead.
        task_manager_kwargs={"include_path": str(data.include_path), "include_defaults": False},
        model_class=MODEL_NAME,
        model_kwargs={
            "reuse_prefix": reuse_prefix,
            "keep": KeptSide.parse(str(keep)).value,
            "progress_interval_s": options.progress_interval_s,
        },
        on_progress=on_progress,
    )
    drop_prompts(output.samples)
    report = output.model_report
    windows = report.get("windows", [])
    settings_body = convert.settings_body(
        data.tasks,
        output.results,
        output.samples,
        windows,
        data.book_words,
        report.get("max_length"),
        KeptSide(report["kept_side"]) if report.get("kept_side") else None,
    )
    run = _run_info(data, output.run, report)
    for setting, result in settings_body.items():
        cut = result.truncation
        log.info(
            "setting %s: %d items, %d cut to the setting's words, %d cut to the window (its %s kept); "
            "the model saw %.0f of %.0f context tokens on average",
            setting.value,
            cut.items,
            cut.words_cut,
            cut.window_cut,
            cut.kept_side.value if cut.kept_side else "?",
            cut.seen_tokens_mean,
            cut.context_tokens_mean,
        )
    details = convert.detail_records(data.tasks, output.samples, windows)
    items, uncertainty = per_item_outputs(output.samples, settings_body)
    return LongContextEvaluation(run, settings_body, details, data, output.architecture, items, uncertainty)


def per_item_outputs(
    samples: Mapping[str, Sequence[Mapping[str, Any]]], settings: Mapping[ContextSetting, SettingResult]
) -> tuple[bytes | None, UncertaintySummary | None]:
    """The per-item file and the intervals of every mean, from the logged samples.

    ``(None, None)``, with a warning in the log, when the samples do not reproduce the published
    means: the run is then published without intervals, never with made-up ones.
    """
    from leaderboard.core.items import items_to_parquet
    from leaderboard.tracks.long_context.uncertainty import long_context_run_items, long_context_summary

    published = {
        setting.value: {
            question_set.value: scores.model_dump(include={m.value for m in Metric})
            for question_set, scores in result.sets.items()
        }
        for setting, result in settings.items()
    }
    try:
        run_items = long_context_run_items(samples)
        if not run_items.tasks:
            log.warning("no per-item data in the harness output: the run has no intervals")
            return None, None
        summary = long_context_summary(run_items, published)
    except ValueError as exc:
        log.warning("no intervals for this run: %s", exc)
        return None, None
    return items_to_parquet(run_items), summary


def check_data(config: WorkerConfig, request: EvalRequest | None = None) -> None:
    """Before claiming a long-context request: can the worker's data source be read and prepared?

    Reads and checks every book and question (:func:`~.data.read_books`); raises
    :class:`~leaderboard.core.datasource.DataSourceError` naming the problem, before any model loads.
    """
    from backend.tracks.long_context.data import read_books

    read_books(DataSource.parse(config.data))


def evaluate(request: EvalRequest, config: WorkerConfig, context: RunContext) -> Evaluation:
    """The track's runner (its spec's ``runner``): the request's settings on the worker's data.

    No ``context_settings`` means all three; the worker's ``--long-context-keep`` (the spec's
    worker option) says which end of a prompt longer than the window is kept.  One details file
    per harness task (question, references, answer, letter, scores and tokens seen; never the book).
    """
    chosen = request.options.context_settings
    settings = [s.value for s in chosen] if chosen else None
    try:
        evaluation = run_long_context(
            request,
            settings,
            config.data,
            context.workdir,
            config.harness,
            keep=config.track_options.get("long_context_keep", PAPER_KEPT_SIDE),
            on_progress=context.progress.beat,
        )
    except DataSourceError as exc:  # anything else is the worker's "running the harness" failure
        raise StageError("preparing the data", exc) from exc
    return evaluation.evaluation(request.variant)
