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
a local worker did not end with 0; 2 bad usage (nothing submitted); 3 a local run stopped
by Ctrl-C (its workers hand back what they hold).
"""
