"""``python -m eval_queue doctor [--fix]``: name the debris in the stores, and remove it on request.

What it looks for (:func:`examine`):

* **unreferenced details folders** — a details folder that no results file's
  ``run.details_path`` names, and that no queued or running request can still write
  (a folder starting with :func:`~eval_queue.publication.details_prefix` of a PENDING
  or RUNNING request is left alone): left by a publish that never got to its results
  file.  ``--fix`` deletes their files.  A folder beside an unreadable results file is
  kept: what that file points at cannot be known.
* **stale temporary files** of the local store's atomic writes (a writer killed between
  syncing and renaming its file).  ``--fix`` removes them.
* **expired leases** — RUNNING requests whose worker stopped renewing.  ``--fix`` reaps
  them as the next claim would: a run that was publishing and whose results are in the
  store is completed to FINISHED, one that never started goes back to PENDING uncounted.
* reported only: FINISHED requests whose results file is missing, and requests named by
  more than one results file (older runs, superseded on the board).

Nothing is removed without ``--fix``; what was found and what was done is printed.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TextIO

from eval_queue.errors import MalformedFileError, NotFoundError
from eval_queue.publication import details_prefix
from eval_queue.queue import QueueState, RequestQueue
from eval_queue.requests import ACTIVE_STATUSES, Status
from eval_queue.safe_json import RESULTS_LIMITS, read_object
from eval_queue.storage import LocalStorage, Stores
from eval_queue.storage.paths import DETAILS_FOLDER
from eval_queue.text import printable

logger = logging.getLogger(__name__)


@dataclass
class Findings:
    """What :func:`examine` found (paths relative to their store)."""

    #: details folder → its files, for folders nothing references.
    orphan_details: dict[str, list[str]] = field(default_factory=dict)
    #: ``<store>/<path>`` of stale temporary files (local stores only).
    stale_temps: list[str] = field(default_factory=list)
    #: request ids of RUNNING requests whose lease has expired.
    expired: list[str] = field(default_factory=list)
    #: request id → its missing results path.
    finished_without_results: dict[str, str] = field(default_factory=dict)
    #: request id → the results files whose ``run.request_id`` names it (more than one).
    duplicate_results: dict[str, list[str]] = field(default_factory=dict)
    #: results files that could not be read.
    unreadable: list[MalformedFileError] = field(default_factory=list)

    @property
    def fixable(self) -> int:
        return len(self.orphan_details) + len(self.stale_temps) + len(self.expired)


def examine(stores: Stores, queue: RequestQueue) -> Findings:
    """Everything the module docstring lists; reads the stores, writes nothing.

    Leases are read by the queue's clock.
    """
    findings = Findings()
    listing = queue.listing()
    referenced, by_request = _read_results(stores, findings)
    results_paths = set(stores.results.list())
    # Runs that may still write details: every active request's outputs.
    active = tuple(details_prefix(r) for r in listing.requests if r.status in ACTIVE_STATUSES)
    unreadable_models = {p.path.rsplit("/", 1)[0] + "/" for p in findings.unreadable}
    folders: dict[str, list[str]] = defaultdict(list)
    for path in stores.details.list():
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        folders[folder].append(path)
    for folder, files in sorted(folders.items()):
        if folder in referenced or folder.startswith(active):
            continue
        if any(folder.startswith(model) for model in unreadable_models):
            continue
        findings.orphan_details[folder] = sorted(files)
    for request in listing.requests:
        if listing.state(request) is QueueState.EXPIRED:
            findings.expired.append(request.request_id)
            continue
        missing = request.results_path is not None and request.results_path not in results_paths
        if request.status is Status.FINISHED and missing:
            findings.finished_without_results[request.request_id] = str(request.results_path)
    findings.duplicate_results = {rid: sorted(paths) for rid, paths in by_request.items() if len(paths) > 1}
    for name, store in (
        ("requests", stores.requests),
        ("results", stores.results),
        ("details", stores.details),
    ):
        if isinstance(store, LocalStorage):
            findings.stale_temps += [f"{name}/{p}" for p in store.sweep_temp_files(dry_run=True)]
    return findings


def _read_results(stores: Stores, findings: Findings) -> tuple[set[str], dict[str, list[str]]]:
    """(details folders the results files name, request id → results files), every file read once."""
    referenced: set[str] = set()
    by_request: dict[str, list[str]] = defaultdict(list)
    for path in stores.results.list():
        name = path.rsplit("/", 1)[-1]
        if path.startswith(DETAILS_FOLDER) or not (name.startswith("results_") and name.endswith(".json")):
            continue
        try:
            raw = read_object(stores.results, path, RESULTS_LIMITS)
        except NotFoundError:
            continue  # removed since the listing
        except MalformedFileError as exc:
            findings.unreadable.append(exc)
            continue
        run = raw.get("run")
        if not isinstance(run, dict):
            by_request["(no run block)"].append(path)
            continue
        if isinstance(run.get("details_path"), str):
            referenced.add(run["details_path"])
        by_request[str(run.get("request_id") or f"(no request id) {path}")].append(path)
    return referenced, by_request


@dataclass
class Repairs:
    details_files_removed: int = 0
    temps_removed: int = 0
    reaped: list[str] = field(default_factory=list)


def repair(stores: Stores, queue: RequestQueue, findings: Findings) -> Repairs:
    """Remove what :func:`examine` found removable and reap the expired leases."""
    done = Repairs()
    for folder, files in findings.orphan_details.items():
        for path in files:
            try:
                stores.details.delete(path, message=f"doctor: remove unreferenced details {folder}")
                done.details_files_removed += 1
            except NotFoundError:
                continue
    for store in (stores.requests, stores.results, stores.details):
        if isinstance(store, LocalStorage):
            done.temps_removed += len(store.sweep_temp_files())
    if findings.expired:
        done.reaped = [f"{r.request_id}: {r.status.value}" for r in queue.reap_expired()]
    return done


def report(findings: Findings, out: TextIO, repairs: Repairs | None = None) -> None:
    """What was found (and, after ``--fix``, done), one readable line per item."""

    def line(text: str) -> None:
        out.write(printable(text) + "\n")

    for folder, files in findings.orphan_details.items():
        line(f"unreferenced details folder: {folder} ({len(files)} files)")
    for temp in findings.stale_temps:
        line(f"stale temporary file: {temp}")
    for rid in findings.expired:
        line(f"expired lease: {rid}")
    for rid, path in findings.finished_without_results.items():
        line(f"FINISHED without its results file: {rid} (results_path {path})")
    for rid, paths in findings.duplicate_results.items():
        line(f"{len(paths)} results files for {rid}: {', '.join(paths)} (the board shows one)")
    for problem in findings.unreadable:
        line(f"unreadable results file: {problem}")
    if repairs is not None:
        line(
            f"removed {repairs.details_files_removed} details files and {repairs.temps_removed} "
            f"temporary files; reaped {len(repairs.reaped)} expired leases"
        )
        for reaped in repairs.reaped:
            line(f"  reaped {reaped}")
    elif findings.fixable:
        line(f"{findings.fixable} items can be fixed: run again with --fix")
    if (
        not findings.fixable
        and repairs is None
        and not (findings.finished_without_results or findings.duplicate_results or findings.unreadable)
    ):
        line("nothing to report")
