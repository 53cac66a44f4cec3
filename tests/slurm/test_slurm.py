"""``python -m backend slurm``: the job description, the sbatch submission, and real workers on a local store.

The workers are the real ``python -m backend`` serve loops started through submitit's
local executor (``--cluster local``); only the track runner is a stub
(the toy track of :mod:`tests.support.toy_track`, registered through ``EVALITA_EXTRA_TRACKS``), so no
model and no harness are needed.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from backend.config import ExitCode
from backend.serve import queue_has_work, without_serve_options
from backend.slurm.cli import JOB_OPTIONS, main, parse_time
from backend.slurm.plan import WorkerJob
from eval_queue.queue import RequestQueue
from eval_queue.requests import EvalRequest, Status, isoformat, utc_now
from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from eval_queue.tracks import EXTRA_TRACKS_ENV
from tests.support.toy_track import REGISTRATION

REPO_ROOT = Path(__file__).resolve().parents[2]
SECRET = "hf_" + "SlurmTestTok3nValue"


def _queue(data_dir: Path) -> RequestQueue:
    return RequestQueue(open_stores(Settings(data_dir=data_dir)).requests)


def _add(queue: RequestQueue, *names: str) -> list[EvalRequest]:
    return [
        queue.add(
            EvalRequest(
                model=f"org/{name}", revision="a" * 40, submitted_time=isoformat(utc_now()), track="toy"
            )
        )
        for name in names
    ]


def _worker_env(tmp_path: Path, *, sleep_s: float) -> dict[str, str]:
    """The submitting shell: a local store, offline, a token, and the toy track registered."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALITA_", "HF_"))}
    env.update(
        EVALITA_DATA_DIR=str(tmp_path / "eval-data"),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_HOME=str(tmp_path / "hf"),
        HF_TOKEN=SECRET,
        PYTHONPATH=str(REPO_ROOT),
        **{EXTRA_TRACKS_ENV: REGISTRATION},
        STUB_RECORD=str(tmp_path / "runs.jsonl"),
        STUB_SLEEP_S=str(sleep_s),
    )
    return env


def _runs(tmp_path: Path) -> list[dict[str, object]]:
    path = tmp_path / "runs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _local_workers(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m backend slurm --cluster local …`` (CPU workers), as a maintainer would run it."""
    return subprocess.run(
        [sys.executable, "-m", "backend", "slurm", "--cluster", "local", "--gpus-per-worker", "0", *argv],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def _files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


# --------------------------------------------------------------------------- options and description


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("90", 90), ("90:30", 90), ("4:00:00", 240), ("1-00:00:00", 1440), ("2-6", 3240), ("1-0:30", 1470)],
)
def test_slurm_time_formats_are_read_in_minutes(text: str, minutes: int) -> None:
    assert parse_time(text) == minutes


def test_dry_run_names_partition_gpus_time_array_and_environment_and_masks_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": "hf-cache",  # relative: the job gets it absolute
        "EVALITA_EVAL_DATA": "hub",
        "HF_TOKEN": SECRET,
        "EVALITA_SUBMITTER_SALT": "pepper-" + "s3cret",
    }
    argv = ["--workers", "2", "--partition", "boost_usr_prod", "--gpus-per-worker", "2", "--time", "1:30:00"]
    argv += ["--account", "IscrB_evalita", "--array-parallelism", "1", "--log-dir", "logs", "--dry-run"]

    code = main([*argv, "--", "--data", "hub", "--batch-size", "8"], env=env, cwd=tmp_path)

    out = capsys.readouterr().out
    assert code == ExitCode.OK
    assert SECRET not in out and "s3cret" not in out
    assert "HF_TOKEN=***" in out and "EVALITA_SUBMITTER_SALT=***" in out
    # the description
    assert "dry run: nothing submitted" in out
    assert "partition:        boost_usr_prod" in out and "GPUs per worker:  2" in out
    assert "time per worker:  90 min" in out and "--deadline-s 5100" in out
    # the equivalent plain sbatch script
    script = out.split("# Equivalent sbatch script", 1)[1]
    for line in (
        "#SBATCH --partition=boost_usr_prod",
        "#SBATCH --gpus-per-node=2",
        "#SBATCH --time=90",
        "#SBATCH --array=0-1%1",
        "#SBATCH --account=IscrB_evalita",
        f"#SBATCH --chdir={tmp_path}",
        "#SBATCH --export=ALL",
        f"#SBATCH --output={tmp_path}/logs/%A_%a_0_log.out",
        "export HF_HUB_OFFLINE=1",
        "export HF_DATASETS_OFFLINE=1",
        f"export HF_HOME={tmp_path}/hf-cache",
        "export EVALITA_EVAL_DATA=hub",
        f"export EVALITA_DATA_DIR={tmp_path}/eval-data",
    ):
        assert line in script, line
    [command] = [line for line in script.splitlines() if line.startswith("srun ")]
    assert "-m backend --until-empty --deadline-s 5100" in command
    assert command.endswith(
        '--worker-id "slurm-${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}" --data hub --batch-size 8'
    )
    assert "submitit" not in command  # the worker itself, not submitit's pickle loader
    assert not (tmp_path / "logs").exists()  # nothing submitted, nothing written


def test_dry_run_warns_when_the_workers_would_go_online(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--workers", "2", "--dry-run"], env={}, cwd=tmp_path) == ExitCode.OK
    out = capsys.readouterr().out
    assert "HF_HUB_OFFLINE, HF_DATASETS_OFFLINE not set" in out and "prefetch" in out
    assert "#SBATCH --array=0-1%2" in out and "#SBATCH --time=240" in out and "--partition" not in out


def test_cpu_workers_on_a_hub_store_ask_for_no_gpu_and_get_no_offline_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"EVALITA_REQUESTS_REPO": "org/requests", "EVALITA_RESULTS_REPO": "org/results"}
    assert main(["--workers", "1", "--gpus-per-worker", "0", "--dry-run"], env=env, cwd=tmp_path) == 0
    out = capsys.readouterr().out
    assert "--gpus-per-node" not in out and "warning" not in out
    assert "export EVALITA_REQUESTS_REPO=org/requests" in out


@pytest.mark.parametrize("option", [*JOB_OPTIONS, "--no-such-option"])
def test_worker_options_the_job_sets_or_the_worker_refuses_are_refused(tmp_path: Path, option: str) -> None:
    value = ["7"] if option in ("--deadline-s", "--worker-id") else []
    assert main(["--workers", "1", "--dry-run", "--", option, *value], env={}, cwd=tmp_path) == ExitCode.USAGE


def test_a_stop_margin_longer_than_the_time_is_refused(tmp_path: Path) -> None:
    argv = ["--workers", "1", "--time", "5", "--stop-margin-s", "300", "--dry-run"]
    assert main(argv, env={}, cwd=tmp_path) == ExitCode.USAGE


# --------------------------------------------------------------------------- submitting to Slurm


def test_submission_goes_through_sbatch_as_one_array_and_writes_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fake ``srun``/``sbatch`` stand for the cluster: submitit writes the script and calls sbatch."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "sbatch").write_text(
        f'#!/bin/sh\ncp "$1" {tmp_path}/submitted.sh\necho "Submitted batch job 4242"\n'
    )
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HF_TOKEN", SECRET)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)

    argv = [
        "--workers",
        "3",
        "--partition",
        "gpu",
        "--time",
        "60",
        "--log-dir",
        "logs",
        "--",
        "--data",
        "hub",
    ]
    assert main(argv) == ExitCode.OK

    out = capsys.readouterr().out
    assert "submitted 3 worker(s) as Slurm job 4242 (4242_0, 4242_1, 4242_2)" in out
    script = (tmp_path / "submitted.sh").read_text()
    assert "#SBATCH --array=0-2%3" in script and "#SBATCH --partition=gpu" in script
    assert "export HF_HUB_OFFLINE=1" in script and "# HF_TOKEN: from the submitting environment" in script
    assert "submitit.core._submit" in script  # submitit's own loader runs the pickled job
    written = _files_under(tmp_path / "logs")
    assert written and all(SECRET.encode() not in path.read_bytes() for path in written)
    [pickled] = [p for p in written if p.name == "4242_0_submitted.pkl"]
    job = pickle.loads(pickled.read_bytes()).function
    assert isinstance(job, WorkerJob) and job.id_prefix == "slurm"
    assert job.command[1:] == ("-m", "backend", "--until-empty", "--deadline-s", "3300", "--data", "hub")


def test_without_srun_the_submission_says_how_to_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["--workers", "1"], env={}, cwd=tmp_path) == ExitCode.USAGE
    assert "--dry-run" in caplog.text and "--cluster local" in caplog.text


# --------------------------------------------------------------------------- real workers, local executor


def test_two_local_workers_finish_three_requests_and_none_is_claimed_twice(
    tmp_path: Path, toy_track: object
) -> None:
    env = _worker_env(tmp_path, sleep_s=1.0)
    queue = _queue(tmp_path / "eval-data")
    requests = _add(queue, "a", "b", "c")
    logs = tmp_path / "logs"

    started = time.monotonic()
    done = _local_workers(
        env, "--workers", "2", "--time", "10", "--log-dir", str(logs), "--", "--poll-s", "1"
    )
    elapsed = time.monotonic() - started

    worker_logs = "".join(
        p.read_text(errors="replace") for p in _files_under(logs) if p.suffix in (".out", ".err")
    )
    assert done.returncode == ExitCode.OK, done.stderr[-3000:] + worker_logs[-3000:]
    assert done.stdout.count("ended with 0") == 2
    for request in requests:
        finished = queue.get(request.request_id)
        assert finished.status is Status.FINISHED
        assert [h["status"] for h in finished.history].count(Status.RUNNING.value) == 1  # claimed once
    runs = _runs(tmp_path)
    assert Counter(run["request"] for run in runs) == Counter(r.request_id for r in requests)
    assert all(str(run["worker"]).startswith("local-") for run in runs)
    assert all(run["token"] for run in runs)  # the secret reached the workers ...
    assert all(SECRET.encode() not in path.read_bytes() for path in _files_under(logs))  # ... unwritten
    assert "the queue has nothing left to claim: stopping (--until-empty)" in worker_logs
    assert not queue_has_work(queue)
    print(f"two local workers, three requests: {elapsed:.1f}s")


def test_a_local_worker_whose_deadline_passes_hands_its_request_back(
    tmp_path: Path, toy_track: object
) -> None:
    env = _worker_env(tmp_path, sleep_s=600)
    queue = _queue(tmp_path / "eval-data")
    [request] = _add(queue, "slow")

    started = time.monotonic()
    # One minute of job time, stopping 52 s before: the deadline comes 8 s after the start.
    logs = tmp_path / "logs"
    done = _local_workers(
        env, "--workers", "1", "--time", "1", "--stop-margin-s", "52", "--log-dir", str(logs)
    )
    elapsed = time.monotonic() - started

    worker_logs = "".join(p.read_text(errors="replace") for p in _files_under(logs))
    assert done.returncode == ExitCode.OK, done.stderr[-3000:] + worker_logs[-3000:]
    assert [run["request"] for run in _runs(tmp_path)] == [request.request_id]  # it was running
    back = queue.get(request.request_id)
    assert (back.status, back.claimed_by, back.attempts) == (Status.PENDING, None, 0)
    assert "deadline reached (--deadline-s 8)" in worker_logs
    assert elapsed < 60  # well before the job's time limit
    print(f"deadline hand-back: {elapsed:.1f}s")


def test_the_dry_run_sbatch_script_runs_a_worker_that_serves_the_queue(
    tmp_path: Path, toy_track: object
) -> None:
    """The printed script under bash, with a stand-in ``srun`` that runs its command as an array task would."""
    env = _worker_env(tmp_path, sleep_s=0.2)
    [request] = _add(_queue(tmp_path / "eval-data"), "a")
    printed = _local_workers(
        env, "--workers", "1", "--time", "10", "--log-dir", str(tmp_path / "logs"), "--dry-run"
    )
    assert printed.returncode == ExitCode.OK, printed.stderr
    script = tmp_path / "worker.sbatch"
    script.write_text(
        printed.stdout.split("# Equivalent sbatch script (save it, then: sbatch FILE):\n", 1)[1]
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(
        '#!/bin/bash\nwhile [[ $1 == --* ]]; do [[ $1 == --unbuffered ]] && shift || shift 2; done\nexec "$@"\n'
    )
    (bin_dir / "srun").chmod(0o755)
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", SLURM_ARRAY_JOB_ID="77", SLURM_ARRAY_TASK_ID="0")

    done = subprocess.run(
        ["bash", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr[-3000:]
    finished = _queue(tmp_path / "eval-data").get(request.request_id)
    assert finished.status is Status.FINISHED and finished.history[0]["by"] == "slurm-77_0"


# --------------------------------------------------------------------------- the serve loop's limits


def test_the_serve_only_options_are_not_passed_to_once_jobs() -> None:
    argv = [
        "--until-empty",
        "--deadline-s",
        "60",
        "--data",
        "hub",
        "--deadline-s=5",
        "--once",
        "--poll-s",
        "2",
    ]
    assert without_serve_options(argv) == ["--data", "hub", "--poll-s", "2"]


def test_a_request_with_a_lapsed_lease_is_work_left_for_until_empty(
    tmp_path: Path, toy_track: object
) -> None:
    queue = _queue(tmp_path)
    assert not queue_has_work(queue)
    [request] = _add(queue, "a")
    assert queue_has_work(queue)
    assert queue.claim_next("w1", lease_s=0.05) is not None
    time.sleep(0.1)  # the lease lapses: a claim would reap it
    assert queue_has_work(queue)
    queue.claim_next("w2", lease_s=600)
    assert not queue_has_work(queue)
    assert queue.get(request.request_id).claimed_by == "w2"
