"""Export a results store as Every Eval Ever records, and validate them with the package's validator.

``export_store(results, details, out_dir)`` writes every run of every track (one aggregate JSON,
and an instance-level JSONL where the run's details are in the details store) and returns what it
wrote and what it could not read.  ``run_records(...)`` builds one run's files (what the worker
publishes with ``--publish-eee``).  A results file or details file that cannot be read is named
and skipped, as every reader of the store does.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from eval_queue.errors import MalformedFileError, NotFoundError, StorageError
from eval_queue.safe_json import DETAILS_FILE_MAX_BYTES, RESULTS_LIMITS
from eval_queue.storage.base import Storage
from eval_queue.storage.paths import results_files
from eval_queue.tracks import TrackRegistry, track_registry
from leaderboard.core.contents import rows_of, track_contents
from leaderboard.core.contents_io import parse_results
from leaderboard.core.schema import ResultsEnvelope
from leaderboard.eee.build import (
    RunRecords,
    aggregate_record,
    datastore_folder,
    instance_lines,
    record_uuid,
)
from leaderboard.eee.model import Figure, TrackEee
from leaderboard.eee.validate import ValidationProblem, schema_version, validate_tree

logger = logging.getLogger(__name__)

#: Where the worker publishes EEE files in the results store (beside ``contents.parquet``).
STORE_FOLDER = "eee"


@dataclass
class EeeExport:
    """What an export wrote (paths relative to its folder) and what it skipped or found invalid."""

    written: list[str] = field(default_factory=list)
    runs: int = 0
    instances: int = 0
    problems: list[MalformedFileError] = field(default_factory=list)
    invalid: list[ValidationProblem] = field(default_factory=list)
    warnings: list[ValidationProblem] = field(default_factory=list)


def contents_figures(
    results: ResultsEnvelope, path: str, registry: TrackRegistry | None = None
) -> list[Figure]:
    """A track without an EEE part: every score column of its contents rows, with its interval.

    The scale is not known here, so no bounds are claimed (``min``/``max`` unbounded) and higher
    is taken as better; a track whose figures need more says so through its own ``eee`` part.
    """
    part = track_contents(registry).get(results.track)
    if part is None:
        return []
    numeric = {
        f.name: (f.metadata or {}).get(b"description", b"").decode()
        for f in part.columns
        if pa.types.is_floating(f.type)
    }
    figures = []
    for row in rows_of(results, path, None, registry):
        setting = row.get("setting") or ""
        for name, description in numeric.items():
            if name.endswith(("_low", "_high")) or not isinstance(row.get(name), int | float):
                continue
            low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
            figures.append(
                Figure(
                    result_id=f"{setting}/{name}" if setting else name,
                    name=f"{results.track} {setting} {name}".replace("  ", " "),
                    value=float(row[name]),
                    metric_id=f"evalita-llm.{results.track}.{name}",
                    metric_name=name,
                    description=description,
                    min_score=None,
                    max_score=None,
                    low=low if isinstance(low, float) else None,
                    high=high if isinstance(high, float) else None,
                    interval_method="paired item bootstrap",
                )
            )
    return figures


def track_eee(track: str, registry: TrackRegistry | None = None) -> TrackEee | None:
    """The track's EEE part (its spec's ``eee``), None when it has none."""
    spec = (registry or track_registry()).spec(track)
    return spec.load("eee")


def run_records(
    results: ResultsEnvelope,
    path: str,
    details: Storage | None,
    *,
    registry: TrackRegistry | None = None,
    retrieved_at: str | None = None,
    problems: list[MalformedFileError] | None = None,
) -> RunRecords:
    """One run's EEE files.  Details files that cannot be read are added to ``problems`` and left out."""
    part = track_eee(results.track, registry)
    benchmark = part.benchmark if part else f"evalita-llm-{results.track}"
    dataset = part.dataset if part else (f"Evalita-LLM {results.track}", None)
    figures = part.figures(results) if part else contents_figures(results, path, registry)
    version = schema_version()
    folder = datastore_folder(benchmark, results.model.id)
    uid = record_uuid(path)
    evaluation_id = f"{benchmark}/{results.model.id}/{uid}"
    lines: list[dict] = []
    if part is not None and part.items is not None and details is not None and results.run.details_path:
        for figure in figures:
            if figure.details_file is None:
                continue
            details_path = f"{results.run.details_path.rstrip('/')}/{figure.details_file}"
            try:
                data = details.read(details_path, max_bytes=DETAILS_FILE_MAX_BYTES)
                items = list(part.items(results, figure.details_file, data))
            except NotFoundError:
                continue  # a run published without details (or an older one): aggregate only
            except MalformedFileError as exc:
                logger.warning("EEE: skipping details %s", exc)
                if problems is not None:
                    problems.append(exc)
                continue
            lines += instance_lines(
                items, figure, evaluation_id=evaluation_id, model_id=results.model.id, schema_version=version
            )
    samples_path = f"{folder}/{uid}_samples.jsonl" if lines else None
    records = RunRecords(f"{folder}/{uid}.json", {}, samples_path, tuple(lines))
    samples = None
    if samples_path is not None:
        samples = (samples_path, len(lines), hashlib.sha256(records.samples_bytes()).hexdigest())
    aggregate = aggregate_record(
        results,
        path,
        benchmark=benchmark,
        dataset=dataset,
        figures=figures,
        schema_version=version,
        retrieved_at=retrieved_at or str(int(time.time())),
        samples=samples,
    )
    # The evaluation id names the record's file: one id, whoever reads which file first.
    aggregate["evaluation_id"] = evaluation_id
    return RunRecords(records.aggregate_path, aggregate, samples_path, tuple(lines))


def export_store(
    results: Storage,
    details: Storage | None,
    out_dir: Path,
    *,
    registry: TrackRegistry | None = None,
    retrieved_at: str | None = None,
    validate: bool = True,
) -> EeeExport:
    """Write every run of ``results`` as EEE files under ``out_dir`` (``data/…``), then validate them."""
    registry = registry or track_registry()
    report = EeeExport()
    versions = results_files(results)
    for path in sorted(versions):
        try:
            parsed = parse_results(results.read(path, max_bytes=RESULTS_LIMITS.max_bytes), path, registry)
        except NotFoundError:
            continue
        except MalformedFileError as exc:
            logger.warning("EEE: skipping results file %s", exc)
            report.problems.append(exc)
            continue
        except StorageError as exc:
            report.problems.append(MalformedFileError(path, str(exc)))
            continue
        if parsed is None:
            continue
        records = run_records(
            parsed, path, details, registry=registry, retrieved_at=retrieved_at, problems=report.problems
        )
        _write(out_dir, records.aggregate_path, records.aggregate_bytes())
        report.written.append(records.aggregate_path)
        if records.samples_path is not None:
            _write(out_dir, records.samples_path, records.samples_bytes())
            report.written.append(records.samples_path)
            report.instances += len(records.lines)
        report.runs += 1
    if validate and report.written:
        report.invalid, report.warnings = validate_tree(out_dir, report.written)
    return report


def _write(root: Path, relative: str, data: bytes) -> None:
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(target)
