"""What one ``backend slurm`` submission is: its workers' resources, command, environment and job.

:class:`JobPlan` is built once from the command line (:mod:`backend.slurm.cli`) and gives
submitit's parameters, the equivalent plain ``sbatch`` script (submitit's own builder) and
the description ``--dry-run`` prints; :class:`WorkerJob` is what submitit pickles and each
array task runs.  Secrets are never held in a job or a script, only their names.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from eval_queue.redact import SECRET_VARIABLES, redact

REPO_ROOT = Path(__file__).resolve().parents[2]
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
SECRET_NAMES = SECRET_VARIABLES
#: Compute nodes usually cannot reach the Hub: without these the workers would try.
OFFLINE_NAMES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
#: Worker id in the plain script: the same as submitit's ``JobEnvironment().job_id`` for an array.
SCRIPT_WORKER_ID = "slurm-${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"


class Cluster(StrEnum):
    SLURM = "slurm"
    LOCAL = "local"


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
    #: Offline switches that are not set (a warning; none with a hub store: its workers need the Hub).
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
        hub_store = bool(env.get("EVALITA_REQUESTS_REPO") and env.get("EVALITA_RESULTS_REPO"))
        online = tuple(
            n
            for n in OFFLINE_NAMES
            if not hub_store and env.get(n, "").strip().lower() not in {"1", "true", "yes", "on"}
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

    def env_command(self, python: str, pythonpath: str | None) -> str:
        """``env NAME=value … PYTHON``: :attr:`exports` without a shell (the local executor's python).

        ``pythonpath`` is the submitting environment's ``PYTHONPATH``, kept after the project.
        """
        assignments = [
            f"{name}={value}{os.pathsep + pythonpath if name == 'PYTHONPATH' and pythonpath else ''}"
            for name, value in self.exports
        ]
        return shlex.join(["env", *assignments, python])


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

    def serve_command(self) -> list[str]:
        """``python -m backend`` serving until the queue is empty or the deadline."""
        return [self.python, "-m", "backend", "--until-empty", "--deadline-s", str(self.deadline_s)]

    def worker_command(self) -> list[str]:
        """The serve loop each task runs with the maintainer's options, less its ``--worker-id`` (the task's own)."""
        return [*self.serve_command(), *self.worker_argv]

    def job(self) -> WorkerJob:
        return WorkerJob(tuple(self.worker_command()), self.cluster.value)

    def slurm_parameters(self) -> dict[str, Any]:
        """``SlurmExecutor.update_parameters`` keywords (also what the plain script is built from)."""
        optional = {
            "partition": self.partition,
            "account": self.account,
            "qos": self.qos,
            "cpus_per_task": self.cpus_per_worker,
            "gpus_per_node": self.gpus_per_worker or None,  # CPU workers: no GPU line at all
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
            "array_parallelism": self.array_parallelism,
            "signal_delay_s": self.signal_delay_s,
            "setup": setup,
            "additional_parameters": {"chdir": str(self.workdir), "export": "ALL"},
            **{name: value for name, value in optional.items() if value is not None},
        }

    def sbatch_script(self) -> str:
        """An equivalent plain ``sbatch`` script: submitit's builder, running the worker directly."""
        from submitit.slurm.slurm import _make_sbatch_string

        worker_id = f'"{SCRIPT_WORKER_ID}"'  # double quotes: the shell fills in the array ids
        line = shlex.join(self.serve_command()) + f" --worker-id {worker_id}"
        if self.worker_argv:
            line += " " + shlex.join(self.worker_argv)
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
