"""``python -m backend slurm``: queue workers as a Slurm job array, submitted through submitit.

    python -m backend slurm --workers N [--partition P] [--gpus-per-worker G] [--time T]
        [--account A] [--qos Q] [--cpus-per-worker C] [--array-parallelism K] [--log-dir DIR]
        [--stop-margin-s S] [--cluster slurm|local] [--dry-run] [-- worker options]

Each of the N array tasks runs the serve loop (:mod:`backend.serve`) as
``python -m backend --until-empty --deadline-s D --worker-id slurm-<job>_<task> [worker options]``:
it takes requests until the queue has nothing left to claim, and stops ``S`` seconds
before the job's time limit (``D`` = ``T`` − ``S``), handing back the request it holds as
on SIGTERM.  Claims are compare-and-swap with leases, so N workers never run the same
request; a job killed outright leaves its request RUNNING until the lease expires, and a
worker still serving (or submitted later) takes it again.

The workers get the environment of the submitting shell (``sbatch --export=ALL``, as
submitit submits), and explicitly, in the job script, the values the worker depends on
(:data:`PASSED_NAMES`: the offline switches and the caches ``prefetch`` filled, every
``EVALITA_*`` setting, the local store as an absolute path, the project on ``PYTHONPATH``).
Secrets (:data:`SECRET_NAMES`) travel only through the inherited environment: never
written into the script, submitit's pickles or the output (``--dry-run`` shows
``HF_TOKEN=***``).

``--dry-run`` submits nothing: it prints the job description and an equivalent plain
``sbatch`` script (submitit's own script builder, with the worker command instead of
submitit's pickle loader) for sites that forbid Python submitters.  ``--cluster local``
runs the N workers as processes on this machine through submitit's local executor and
waits for them (the tests; a machine without Slurm).

Exit codes: 0 submitted (local: every worker ended with 0); 1 the submission failed, or
a local worker did not end with 0; 2 bad usage (nothing submitted).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from backend.config import ExitCode
from backend.logs import configure_logging
from eval_queue.redact import redact

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Passed to every worker with its value at submission (in the job script, shown by
#: ``--dry-run``), together with every ``EVALITA_*`` setting that is not a secret.
PASSED_NAMES = (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_EVALUATE_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_HOME",
    "HF_HUB_CACHE",
    "HF_DATASETS_CACHE",
    "HF_ENDPOINT",
)
#: Passed as absolute paths: the job may start in another directory.
PATH_NAMES = frozenset({"HF_HOME", "HF_HUB_CACHE", "HF_DATASETS_CACHE", "EVALITA_DATA_DIR"})
#: Reach the workers only through the inherited environment; shown as ``NAME=***``.
SECRET_NAMES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "EVALITA_SUBMITTER_SALT")
#: Compute nodes usually cannot reach the Hub: without these the workers would try.
OFFLINE_NAMES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
#: Options of ``python -m backend`` that the job sets itself.
JOB_OPTIONS = ("--once", "--until-empty", "--deadline-s", "--worker-id")
DEFAULT_TIME = "4:00:00"
DEFAULT_LOG_DIR = Path("slurm-logs")
#: Worker id in the plain script: the same as submitit's ``JobEnvironment().job_id`` for an array.
SCRIPT_WORKER_ID = "slurm-${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"


class Cluster(StrEnum):
    SLURM = "slurm"
    LOCAL = "local"


class SlurmUsageError(ValueError):
    """Bad options for ``backend slurm`` (exit 2, nothing submitted)."""


# --------------------------------------------------------------------------- options


_TIME = re.compile(r"(?:(\d+)-)?(\d+(?::\d+){0,2})")


def parse_time(text: str) -> int:
    """A Slurm time limit (``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``) in whole minutes."""
    match = _TIME.fullmatch(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a Slurm time: use minutes, H:MM:SS or D-HH:MM:SS (e.g. 240, 4:00:00, 1-00:00:00)"
        )
    days, parts = int(match.group(1) or 0), [int(p) for p in match.group(2).split(":")]
    if match.group(1) is not None:  # D-H, D-H:M, D-H:M:S
        hours, minutes, seconds = (*parts, 0, 0)[:3]
    elif len(parts) == 3:  # H:M:S
        hours, minutes, seconds = parts
    else:  # M or M:S
        hours, minutes, seconds = 0, parts[0], (parts[1] if len(parts) == 2 else 0)
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    if total < 60:
        raise argparse.ArgumentTypeError(f"{text!r}: a worker needs at least one minute")
    return total // 60


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def _count(text: str) -> int:
    return 0 if text.strip() == "0" else _positive_int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m backend slurm",
        description="Submit N queue workers as a Slurm job array (submitit); each serves the queue until "
        "it is empty or its time is nearly up, then hands back what it holds.",
        epilog="Options after `--` go to every worker (python -m backend --help), e.g. -- --data hub. "
        "Exit codes: 0 submitted (local: all workers ended with 0); 1 submission failed or a local "
        "worker failed; 2 bad usage.",
    )
    parser.add_argument("--workers", type=_positive_int, required=True, help="how many workers (array size)")
    parser.add_argument("--partition", default=None, help="Slurm partition (default: the cluster's default)")
    parser.add_argument("--gpus-per-worker", type=_count, default=1, help="GPUs per worker (default 1)")
    parser.add_argument(
        "--time",
        type=parse_time,
        default=parse_time(DEFAULT_TIME),
        help=f"time limit per worker: minutes, H:MM:SS or D-HH:MM:SS (default {DEFAULT_TIME})",
    )
    parser.add_argument("--account", default=None, help="Slurm account to charge")
    parser.add_argument("--qos", default=None, help="Slurm quality of service")
    parser.add_argument("--cpus-per-worker", type=_positive_int, default=None, help="CPUs per worker")
    parser.add_argument(
        "--array-parallelism", type=_positive_int, default=None, help="at most K workers at once (default: N)"
    )
    parser.add_argument(
        "--log-dir",
        type=Path,
        default=DEFAULT_LOG_DIR,
        help=f"folder of the job script and the workers' logs (default ./{DEFAULT_LOG_DIR})",
    )
    parser.add_argument(
        "--stop-margin-s",
        type=_positive_int,
        default=None,
        help="a worker stops this long before its time limit, handing back what it holds "
        "(default: 300, at most a fifth of --time)",
    )
    parser.add_argument("--job-name", default="evalita-worker")
    parser.add_argument(
        "--cluster",
        choices=[c.value for c in Cluster],
        default=Cluster.SLURM.value,
        help="slurm (sbatch), or local: run the workers here through submitit's local executor and wait",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the job description and an equivalent sbatch script"
    )
    return parser


def split_argv(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``[own options] -- [worker options]`` → the two lists."""
    argv = list(argv)
    if "--" not in argv:
        return argv, []
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1 :]


def check_worker_options(worker_argv: Sequence[str]) -> None:
    """Refuse worker options ``python -m backend`` would refuse, or that the job sets itself."""
    from backend.cli import build_parser as worker_parser

    parser = worker_parser()
    parser.set_defaults(worker_id=None)
    parser.exit_on_error = False
    try:
        args = parser.parse_args(list(worker_argv))
    except (argparse.ArgumentError, SystemExit) as exc:
        raise SlurmUsageError(f"bad worker options after `--`: {exc}") from None
    if args.once or args.until_empty or args.deadline_s is not None or args.worker_id is not None:
        raise SlurmUsageError(f"the job sets {', '.join(JOB_OPTIONS)} itself: leave them out after `--`")


# --------------------------------------------------------------------------- environment


@dataclass(frozen=True)
class WorkerEnvironment:
    """What reaches the workers besides the inherited environment."""

    #: ``NAME=value`` pairs written into the job script (never a secret).
    exports: tuple[tuple[str, str], ...]
    #: Names of secrets set here: they reach the workers only through the inherited environment.
    secret_names: tuple[str, ...]
    #: Their values, only to mask them in what is printed.
    secret_values: tuple[str, ...] = field(repr=False)
    #: Offline switches that are not set (a warning).
    online: tuple[str, ...]

    @classmethod
    def of(cls, env: Mapping[str, str], cwd: Path) -> WorkerEnvironment:
        names = [n for n in PASSED_NAMES if env.get(n)]
        names += sorted(n for n in env if n.startswith("EVALITA_") and n not in SECRET_NAMES and env[n])
        values = {name: env[name] for name in names}
        values.setdefault("EVALITA_DATA_DIR", "eval-data")  # the worker's default, made explicit
        for name in PATH_NAMES & values.keys():
            values[name] = str((cwd / Path(values[name]).expanduser()).resolve())
        exports = (*sorted(values.items()), ("PYTHONPATH", str(REPO_ROOT)))
        secrets = tuple(n for n in SECRET_NAMES if env.get(n))
        online = tuple(
            n for n in OFFLINE_NAMES if env.get(n, "").strip().lower() not in {"1", "true", "yes", "on"}
        )
        return cls(exports, secrets, tuple(env[n] for n in secrets), online)

    def export_lines(self) -> list[str]:
        """Shell lines that set :attr:`exports` (the project is prepended to ``PYTHONPATH``)."""
        lines = []
        for name, value in self.exports:
            if name == "PYTHONPATH":
                lines.append(f"export PYTHONPATH={shlex.quote(value)}${{PYTHONPATH:+:$PYTHONPATH}}")
            else:
                lines.append(f"export {name}={shlex.quote(value)}")
        return lines


# --------------------------------------------------------------------------- the job


@dataclass(frozen=True)
class WorkerJob:
    """What each array task runs (pickled by submitit): the serve loop in a child process.

    SIGTERM/SIGINT reaching this process are passed on to the worker, which hands back
    the request it holds; the worker's output goes to the task's submitit log.
    """

    command: tuple[str, ...]
    id_prefix: str

    def __call__(self) -> int:
        import submitit

        worker_id = f"{self.id_prefix}-{submitit.JobEnvironment().job_id}"
        child = subprocess.Popen([*self.command, "--worker-id", worker_id])

        def forward(signum: int, _frame: Any) -> None:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)

        previous = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            return child.wait()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


@dataclass(frozen=True)
class JobPlan:
    """One submission: N workers, their resources, command and environment."""

    workers: int
    partition: str | None
    gpus_per_worker: int
    time_min: int
    account: str | None
    qos: str | None
    cpus_per_worker: int | None
    array_parallelism: int
    log_dir: Path
    stop_margin_s: int
    job_name: str
    cluster: Cluster
    worker_argv: tuple[str, ...]
    environment: WorkerEnvironment
    workdir: Path
    python: str = sys.executable

    @property
    def deadline_s(self) -> int:
        return self.time_min * 60 - self.stop_margin_s

    @property
    def signal_delay_s(self) -> int:
        """submitit's warning signal (USR2) comes this long before the limit: after the workers stopped."""
        return max(1, min(90, self.stop_margin_s // 2))

    def worker_command(self) -> list[str]:
        """The serve loop each task runs, less its ``--worker-id`` (the task's own)."""
        deadline = ["--until-empty", "--deadline-s", str(self.deadline_s)]
        return [self.python, "-m", "backend", *deadline, *self.worker_argv]

    def job(self) -> WorkerJob:
        return WorkerJob(tuple(self.worker_command()), self.cluster.value)

    def slurm_parameters(self) -> dict[str, Any]:
        """``SlurmExecutor.update_parameters`` keywords (also what the plain script is built from)."""
        optional = {
            "partition": self.partition,
            "account": self.account,
            "qos": self.qos,
            "cpus_per_task": self.cpus_per_worker,
        }
        setup = self.environment.export_lines() + [
            f"# {name}: from the submitting environment (--export=ALL), never written here"
            for name in self.environment.secret_names
        ]
        return {
            "job_name": self.job_name,
            "time": self.time_min,
            "nodes": 1,
            "ntasks_per_node": 1,
            "gpus_per_node": self.gpus_per_worker,
            "array_parallelism": self.array_parallelism,
            "signal_delay_s": self.signal_delay_s,
            "setup": setup,
            "additional_parameters": {"chdir": str(self.workdir), "export": "ALL"},
            **{name: value for name, value in optional.items() if value is not None},
        }

    def sbatch_script(self) -> str:
        """An equivalent plain ``sbatch`` script: submitit's builder, running the worker directly."""
        from submitit.slurm.slurm import _make_sbatch_string

        command = self.worker_command()
        head, options = command[:6], command[6:]  # python -m backend --until-empty --deadline-s D
        line = " ".join(
            [shlex.join(head), "--worker-id", f'"{SCRIPT_WORKER_ID}"', *map(shlex.quote, options)]
        )
        script = _make_sbatch_string(
            command=line, folder=self.log_dir, map_count=self.workers, **self.slurm_parameters()
        )
        # What makes submitit's own loader find its job; the plain script runs the worker itself.
        return script.replace("export SUBMITIT_EXECUTOR=slurm\n", "")

    def describe(self, *, dry_run: bool = False) -> str:
        env = self.environment
        passed = [f"    {name}={value}" for name, value in env.exports]
        passed += [
            f"    {name}=*** (from the submitting environment, never written)" for name in env.secret_names
        ]
        lines = [
            f"Evalita-LLM queue workers on {self.cluster.value}{' (dry run: nothing submitted)' if dry_run else ''}",
            f"  workers:          {self.workers} (job array 0-{self.workers - 1}, "
            f"at most {self.array_parallelism} at once)",
            f"  partition:        {self.partition or '(the cluster default)'}",
            f"  account:          {self.account or '(default)'}" + (f", qos {self.qos}" if self.qos else ""),
            f"  GPUs per worker:  {self.gpus_per_worker}"
            + (f", CPUs per worker: {self.cpus_per_worker}" if self.cpus_per_worker else ""),
            f"  time per worker:  {self.time_min} min; each stops {self.stop_margin_s} s before "
            f"(--deadline-s {self.deadline_s}) and hands back the request it holds",
            f"  logs:             {self.log_dir}",
            f"  working dir:      {self.workdir}",
            f"  worker command:   {shlex.join(self.worker_command())} --worker-id {self.cluster.value}-<job id>",
            "  environment:",
            *passed,
        ]
        if env.online:
            lines.append(
                f"  warning: {', '.join(env.online)} not set: the workers will try to reach the Hugging Face "
                "Hub; on compute nodes without internet, run `python -m backend prefetch …` on the "
                "login node and export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1"
            )
        return "\n".join(lines)

    def mask(self, text: str) -> str:
        return redact(text, *self.environment.secret_values)


def plan_from_args(
    args: argparse.Namespace, worker_argv: Sequence[str], env: Mapping[str, str], cwd: Path
) -> JobPlan:
    time_s = args.time * 60
    margin = args.stop_margin_s if args.stop_margin_s is not None else min(300, time_s // 5)
    if margin >= time_s:
        raise SlurmUsageError(f"--stop-margin-s {margin} leaves no time within --time ({args.time} min)")
    return JobPlan(
        workers=args.workers,
        partition=args.partition,
        gpus_per_worker=args.gpus_per_worker,
        time_min=args.time,
        account=args.account,
        qos=args.qos,
        cpus_per_worker=args.cpus_per_worker,
        array_parallelism=min(args.array_parallelism or args.workers, args.workers),
        log_dir=(cwd / args.log_dir).resolve(),
        stop_margin_s=margin,
        job_name=args.job_name,
        cluster=Cluster(args.cluster),
        worker_argv=tuple(worker_argv),
        environment=WorkerEnvironment.of(env, cwd),
        workdir=cwd.resolve(),
    )


# --------------------------------------------------------------------------- submitting


def submit_slurm(plan: JobPlan) -> int:
    import submitit
    from submitit.core.utils import FailedSubmissionError

    try:
        executor = submitit.SlurmExecutor(folder=plan.log_dir)
    except RuntimeError as exc:  # no srun on this machine
        raise SlurmUsageError(
            f"{exc} (use --dry-run for an sbatch script, or --cluster local to run the workers here)"
        ) from None
    executor.update_parameters(**plan.slurm_parameters())
    try:
        jobs = executor.submit_array([plan.job()] * plan.workers)
    except (FailedSubmissionError, subprocess.CalledProcessError, OSError) as exc:
        log.error("the submission failed: %s", plan.mask(str(exc)))
        return 1
    array_id = jobs[0].job_id.partition("_")[0]
    print(
        f"submitted {plan.workers} worker(s) as Slurm job {array_id} "
        f"({', '.join(job.job_id for job in jobs)})\n"
        f"  logs:  {plan.log_dir}/{array_id}_<task>_0_log.out and .err\n"
        f"  watch: squeue -j {array_id}; python -m eval_queue list --status RUNNING (or the app's queue tab)"
    )
    return 0


def run_local(plan: JobPlan) -> int:
    """The N workers as processes here (submitit's local executor); waits for them."""
    import submitit

    executor = submitit.LocalExecutor(folder=plan.log_dir)
    executor.update_parameters(
        timeout_min=plan.time_min,
        gpus_per_node=plan.gpus_per_worker,
        signal_delay_s=plan.signal_delay_s,
        setup=[f"cd {shlex.quote(str(plan.workdir))}", *plan.environment.export_lines()],
    )
    jobs = executor.submit_array([plan.job()] * plan.workers)
    print(
        f"started {plan.workers} local worker(s): {', '.join(job.job_id for job in jobs)}; logs in {plan.log_dir}"
    )
    failed = 0
    for job in jobs:
        try:
            code = job.result()
        except submitit.core.utils.UncompletedJobError as exc:
            log.error("worker job %s did not complete: %s", job.job_id, plan.mask(str(exc))[-2000:])
            failed += 1
            continue
        print(f"worker job {job.job_id} ended with {code}")
        failed += code != ExitCode.OK
    return 1 if failed else 0


def main(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path | None = None) -> int:
    own, worker_argv = split_argv(argv)
    args = build_parser().parse_args(own)
    configure_logging(verbose=False)
    try:
        check_worker_options(worker_argv)
        plan = plan_from_args(args, worker_argv, os.environ if env is None else env, cwd or Path.cwd())
        if args.dry_run:
            script = plan.sbatch_script()
            heading = "# Equivalent sbatch script (save it, then: sbatch FILE):"
            print(plan.mask(f"{plan.describe(dry_run=True)}\n\n{heading}\n{script}"))
            return 0
        log.info("%s", plan.mask(plan.describe()))
        return submit_slurm(plan) if plan.cluster is Cluster.SLURM else run_local(plan)
    except SlurmUsageError as exc:
        log.error("%s", exc)
        return ExitCode.USAGE
