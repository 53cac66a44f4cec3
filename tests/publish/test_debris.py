"""Debris: stale temporary files of the local store, unreferenced details folders, the doctor command."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eval_queue import cli, doctor
from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, Status, isoformat, utc_now
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage, Stores, open_stores
from eval_queue.storage.local import STALE_TEMP_S
from tests.publish.deployment import LEASE_S, fake_evaluation, local_deployment


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _temp(folder: Path, name: str, pid: int, *, age_s: float = 0.0, tag: str = "abcd1234") -> Path:
    """A temporary file as ``LocalStorage`` names them (``tag``: mkstemp's 8 random characters)."""
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / f".{name}.{pid}.{tag}.tmp"
    temp.write_bytes(b"half a write")
    if age_s:
        then = time.time() - age_s
        os.utime(temp, (then, then))
    return temp


def test_the_next_write_of_a_path_removes_temp_files_its_killed_writers_left(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path)
    dead = _temp(tmp_path / "org", "a.json", _dead_pid())
    alive = _temp(tmp_path / "org", "a.json", os.getppid())  # a live writer: left alone
    old = _temp(
        tmp_path / "org", "a.json", os.getppid(), age_s=STALE_TEMP_S + 60, tag="old_0000"
    )  # too old to be live
    other = _temp(tmp_path / "org", "b.json", _dead_pid())  # another file's: its own next write
    store.write("org/a.json", b"{}")
    assert not dead.exists() and not old.exists()
    assert alive.exists() and other.exists()
    store.create("org/b.json", b"{}")  # a create sweeps too
    assert not other.exists()


def test_sweeping_names_and_removes_every_stale_temp_file_of_the_store(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path)
    stale = _temp(tmp_path / "org" / "deep", "x.jsonl", _dead_pid())
    legacy = tmp_path / "org" / ".y.json.abcd1234.tmp"  # written before pids were kept: by age only
    legacy.write_bytes(b"")
    live = _temp(tmp_path / "org", "z.json", os.getppid())
    assert store.sweep_temp_files(dry_run=True) == [stale.relative_to(tmp_path).as_posix()]
    assert stale.exists()
    assert store.sweep_temp_files() == [stale.relative_to(tmp_path).as_posix()]
    assert not stale.exists() and legacy.exists() and live.exists()


def _stores(root: Path) -> Stores:
    return open_stores(Settings(data_dir=root))


def test_doctor_names_unreferenced_details_and_removes_them_only_when_asked(tmp_path: Path) -> None:
    stores = _stores(tmp_path)
    queue = RequestQueue(stores.requests, results=stores.results)
    finished = EvalRequest(model="org/done", revision="a" * 40, submitted_time=isoformat(utc_now()))
    running = EvalRequest(model="org/busy", revision="b" * 40, submitted_time=isoformat(utc_now()))
    for request in (finished, running):
        queue.add(request)
    # A finished run: its results file names its details folder.
    evaluation = fake_evaluation(queue.get(finished.request_id))
    for path, data in evaluation.details.items():
        stores.details.write(path, data)
    stores.results.write(evaluation.results_path, evaluation.results.to_json())
    # A run still in progress has written details but no results yet: not debris.
    busy = fake_evaluation(queue.get(running.request_id))
    stores.details.write(next(iter(busy.details)), b"{}\n")
    # Debris: details of an old publish that never got to its results file.
    stores.details.write("org/done/2020-01-01T00-00-00Z_bfloat16_0shot/te_p1.jsonl", b"{}\n")
    stores.details.write("org/done/2020-01-01T00-00-00Z_bfloat16_0shot/te_p2.jsonl", b"{}\n")

    findings = doctor.examine(stores, queue)
    assert list(findings.orphan_details) == ["org/done/2020-01-01T00-00-00Z_bfloat16_0shot"]
    out = io.StringIO()
    doctor.report(findings, out)
    assert (
        "unreferenced details folder: org/done/2020-01-01T00-00-00Z_bfloat16_0shot (2 files)"
        in out.getvalue()
    )
    assert "run again with --fix" in out.getvalue()
    assert len(stores.details.list()) == 5  # nothing removed

    doctor.repair(stores, queue, findings)
    assert sorted(stores.details.list()) == sorted([*evaluation.details, next(iter(busy.details))])
    assert doctor.examine(stores, queue).orphan_details == {}


def test_doctor_command_fixes_what_it_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("EVALITA_DATA_DIR", str(tmp_path))
    stores = _stores(tmp_path)
    stores.details.write("org/m/2020-01-01T00-00-00Z_bfloat16_0shot/te_p1.jsonl", b"{}\n")
    temp = _temp(tmp_path / "requests" / "org", "m.json", _dead_pid())
    assert cli.main(["doctor"]) == 0
    shown = capsys.readouterr().out
    assert "unreferenced details folder: org/m/2020-01-01T00-00-00Z_bfloat16_0shot" in shown
    assert f"stale temporary file: requests/org/{temp.name}" in shown
    assert cli.main(["doctor", "--fix"]) == 0
    assert "removed 1 details files and 1 temporary files" in capsys.readouterr().out
    assert not temp.exists() and stores.details.list() == []
    assert cli.main(["doctor"]) == 0
    assert "nothing to report" in capsys.readouterr().out


def test_doctor_completes_a_run_left_publishing_with_its_results_in(tmp_path: Path) -> None:
    deployment = local_deployment(tmp_path)
    (rid,) = deployment.submit(1)

    stores = deployment.open_stores()
    queue = deployment.queue(stores)
    claimed = queue.claim_next("w1", LEASE_S)
    assert claimed is not None
    queue.start(rid, "w1", LEASE_S)
    evaluation = fake_evaluation(claimed)
    queue.begin_publishing(rid, "w1", LEASE_S, evaluation.results_path)
    for path, data in evaluation.details.items():
        stores.details.write(path, data)
    stores.results.write(evaluation.results_path, evaluation.results.to_json())
    # ... and the worker dies before marking it FINISHED.
    deployment.expire_leases()
    queue = deployment.queue(stores)
    findings = doctor.examine(stores, queue)
    assert findings.expired == [rid] and findings.orphan_details == {}
    assert doctor.repair(stores, queue, findings).reaped == [f"{rid}: FINISHED"]
    assert queue.get(rid).status is Status.FINISHED
