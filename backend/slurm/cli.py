"""``python -m backend slurm`` options → a :class:`~backend.slurm.plan.JobPlan` → submitted, run here or printed."""

from __future__ import annotations

import argparse
import logging
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from backend.config import ExitCode
from backend.logs import configure_logging
from backend.slurm.plan import Cluster, JobPlan, WorkerEnvironment
from eval_queue.errors import EvalitaError
from eval_queue.redact import install_log_redaction

log = logging.getLogger(__name__)

#: Options of ``python -m backend`` that the job sets itself.
JOB_OPTIONS = ("--once", "--until-empty", "--deadline-s", "--worker-id")
DEFAULT_TIME = "4:00:00"
DEFAULT_LOG_DIR = Path("slurm-logs")


class SlurmUsageError(EvalitaError):
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


def _non_negative_int(text: str) -> int:
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
    parser.add_argument(
        "--gpus-per-worker", type=_non_negative_int, default=1, help="GPUs per worker (default 1)"
    )
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


def run_local(plan: JobPlan, pythonpath: str | None) -> int:
    """The N workers as processes here (submitit's local executor), started in the current
    directory; waits for them.  ``pythonpath``: the submitting environment's ``PYTHONPATH``."""
    if plan.workdir != Path.cwd().resolve():
        raise SlurmUsageError("--cluster local runs its workers in the current directory")
    import submitit

    # No ``setup`` (it would put a shell between us and the controller, which a cancel
    # would not reach): the environment is set on the python command, in this directory.
    python = plan.environment.env_command(plan.python, pythonpath)
    executor = submitit.LocalExecutor(folder=plan.log_dir, python=python)
    executor.update_parameters(
        timeout_min=plan.time_min, gpus_per_node=plan.gpus_per_worker, signal_delay_s=plan.signal_delay_s
    )
    jobs = executor.submit_array([plan.job()] * plan.workers)
    print(
        f"started {plan.workers} local worker(s): {', '.join(job.job_id for job in jobs)}; logs in {plan.log_dir}"
    )
    failed = 0
    for job in jobs:
        try:
            code = job.result()
        except KeyboardInterrupt:  # Ctrl-C: every worker hands back what it holds (SIGINT → SIGTERM)
            for running in jobs:
                running.cancel(check=False)
            return ExitCode.INTERRUPTED
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
        install_log_redaction(*plan.environment.secret_values)
        if args.dry_run:
            script = plan.sbatch_script()
            heading = "# Equivalent sbatch script (save it, then: sbatch FILE):"
            print(plan.mask(f"{plan.describe(dry_run=True)}\n\n{heading}\n{script}"))
            return 0
        log.info("%s", plan.mask(plan.describe()))
        if plan.cluster is Cluster.SLURM:
            return submit_slurm(plan)
        return run_local(plan, (os.environ if env is None else env).get("PYTHONPATH"))
    except SlurmUsageError as exc:
        log.error("%s", exc)
        return ExitCode.USAGE
