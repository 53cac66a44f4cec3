"""The reference path (``hf``) and the fast path (``hf-fast``) side by side, in one process.

    python bench/bench_speed.py [--model ID|FOLDER] [--data sample|local:DIR] [--tasks te,sa,…]
                                [--fewshot 0|5] [--limit N] [--max-gen-toks N] [--device cpu|cuda]
                                [--threads N] [--fast-first] [--out FILE]

Both paths run the worker's own code (:func:`backend.runner.run_harness`: one model load,
one ``simple_evaluate`` call for all tasks) on the same model, data and options, one after
the other in this process, so they see the same machine.  Per phase it prints wall time,
throughput, MFU on a GPU, and the fast/reference ratio:

* ``load`` — the model load (same code for both; not part of the phase ratios);
* ``loglikelihood`` / ``generation`` — the model's calls, as the runner's progress tracker
  times them (tokenisation included);
* ``post-processing`` — from the end of the last model call to ``simple_evaluate``'s return
  (per-document scoring, ROUGE, aggregation, bootstrap);
* ``other`` — the rest (building tasks and requests).

Beside wall time, the CPU seconds of each phase (this process's threads and its finished
children): on a shared machine wall time moves with everyone else's load, CPU time much
less (with ``--threads 1`` it is the work itself); the mean load average each path saw is
printed too.  Throughput counts the same work for both paths: the tokens of every ``context +
continuation`` scored (log-likelihood) and the tokens of the final answers (generation).
MFU is ``2 · parameters · tokens forwarded / wall / peak`` with the tokens each path really
forwarded in the log-likelihood phase (padding included: the reference's batches, the fast
path's trees) and prompt + answer tokens in generation; peak is the GPU's dense bf16 figure.

Then the scores: per prompt, the reference's and the fast path's score, their difference in
points (0–100 scale), and the share of documents whose prediction (chosen option, generated
text) is identical — against the targets (≥ 99.5 % identical, no prompt more than 0.1 points
apart).  Timing wrappers only: nothing the harness computes is changed.  JSON goes to
``artifacts/bench_speed_<timestamp>.json`` (gitignored).

Defaults: the embedded SmolLM2-135M-Instruct (installed into the HF cache if needed) on the
bundled sample data, all ten tasks, zero-shot.  On the GPU machine ``bench/gpu/run.sh``
runs it on a random-weight 8B Llama and real-size synthetic data.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import REPO_ROOT, fmt

log = logging.getLogger("bench")

REFERENCE, FAST = "hf", "hf-fast"
PHASES = ("loglikelihood", "generation", "post-processing")
#: Dense bf16 peak FLOP/s by GPU name fragment (vendor data sheets).
PEAK_BF16 = {
    "H200": 989e12,
    "H100 SXM": 989e12,
    "H100 80GB HBM3": 989e12,
    "H100 PCIe": 756e12,
    "H100": 989e12,
}
#: Score agreement targets of issue 13 (GPU, bf16).
TARGET_IDENTICAL = 0.995
TARGET_POINTS = 0.1


# --------------------------------------------------------------------------- timing


def cpu_seconds() -> float:
    """CPU time of this process (all threads) and of its finished children (the scoring pools)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class Clock:
    """(wall, CPU) stamps the wrappers leave: start and end of each model phase, end of each evaluation.

    On a shared machine wall time depends on what else runs; CPU time much less (one torch
    thread: the work itself), so the report gives both.
    """

    phases: list[tuple[str, str, float, float]] = field(default_factory=list)  # (start|end, kind, wall, cpu)
    evaluate_ends: list[tuple[float, float]] = field(default_factory=list)

    def stamp(self) -> tuple[float, float]:
        return time.perf_counter(), cpu_seconds()


def install_clock() -> Clock:
    """Stamp the start and end of every model phase and the end of every ``simple_evaluate`` call."""
    import lm_eval

    from backend import runner

    clock = Clock()
    start_phase = runner.ProgressTracker.start_phase
    finish_phase = runner.ProgressTracker._finish_phase
    simple_evaluate = lm_eval.simple_evaluate

    def timed_start(self: Any, kind: str, requests: Sequence[Any]) -> None:
        start_phase(self, kind, requests)  # closes the previous phase first
        clock.phases.append(("start", kind, *clock.stamp()))

    def timed_finish(self: Any) -> None:
        if self.phase:
            clock.phases.append(("end", self.phase, *clock.stamp()))
        finish_phase(self)

    def timed_evaluate(*args: Any, **kwargs: Any) -> Any:
        try:
            return simple_evaluate(*args, **kwargs)
        finally:
            clock.evaluate_ends.append(clock.stamp())

    runner.ProgressTracker.start_phase = timed_start
    runner.ProgressTracker._finish_phase = timed_finish
    lm_eval.simple_evaluate = timed_evaluate
    return clock


class LoadSampler:
    """Samples the 1-minute load average every ``interval_s`` (a daemon thread), to report the load each path saw."""

    def __init__(self, interval_s: float = 15.0) -> None:
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval_s,), daemon=True)
        self._thread.start()

    def _run(self, interval_s: float) -> None:
        while not self._stop.wait(interval_s if self.samples else 0):
            self.samples.append((time.perf_counter(), os.getloadavg()[0]))

    def mean(self, start: float, end: float) -> float | None:
        inside = [load for at, load in self.samples if start <= at <= end]
        return sum(inside) / len(inside) if inside else None

    def stop(self) -> None:
        self._stop.set()


@dataclass
class PathRun:
    """One path's run: wall and CPU seconds per phase, tokens forwarded, and the harness output."""

    backend: str
    wall_s: float
    load_s: float
    phase_s: dict[str, float]
    cpu_s: dict[str, float]
    forwarded_tokens: int
    interval: tuple[float, float]  # perf_counter at start and end
    output: Any = field(repr=False)


PHASE_KINDS = {"loglikelihood": "loglikelihood", "generate_until": "generation"}


def _phase_cpu(clock: Clock, first_stamp: int) -> dict[str, float]:
    """CPU seconds per phase from the stamps this run left (``clock.phases[first_stamp:]``)."""
    cpu = {"loglikelihood": 0.0, "generation": 0.0}
    opened: dict[str, float] = {}
    for event, kind, _, stamp in clock.phases[first_stamp:]:
        if event == "start":
            opened[kind] = stamp
        elif kind in opened and kind in PHASE_KINDS:
            cpu[PHASE_KINDS[kind]] += stamp - opened.pop(kind)
    return cpu


def run_path(
    backend: str, model: Any, tasks: Sequence[str], args: argparse.Namespace, data: Any, clock: Clock
) -> PathRun:
    from backend.runner import RunOptions, run_harness

    options = RunOptions.from_args(args, backend=backend, progress_interval_s=60)
    log.info("running %s on %d tasks", backend, len(tasks))
    first_stamp = len(clock.phases)
    wall0, cpu0 = clock.stamp()
    output = run_harness(
        model,
        list(tasks),
        args.fewshot,
        options,
        task_manager_kwargs=data.task_manager_kwargs(),
        log_samples=True,
    )
    wall1, cpu1 = clock.stamp()
    progress = output.progress
    seconds = progress["phase_seconds"]
    (last_wall, last_cpu), (eval_wall, eval_cpu) = clock.phases[-1][2:], clock.evaluate_ends[-1]
    phase_s = {
        "loglikelihood": seconds.get("loglikelihood", 0.0),
        "generation": seconds.get("generate_until", 0.0),
        "post-processing": eval_wall - last_wall,
    }
    phase_s["other"] = wall1 - wall0 - output.run.model_load_s - sum(phase_s.values())
    cpu_s = _phase_cpu(clock, first_stamp) | {"post-processing": eval_cpu - last_cpu}
    cpu_s["load + other"] = cpu1 - cpu0 - sum(cpu_s.values())
    cpu_s["total"] = cpu1 - cpu0
    fast = progress.get("fastpath")
    forwarded = fast["tree_padded_tokens"] if fast else progress["forward_tokens"]
    return PathRun(
        backend, wall1 - wall0, output.run.model_load_s, phase_s, cpu_s, forwarded, (wall0, wall1), output
    )


def warm_up(tasks: Sequence[str], data: Any) -> None:
    """Build every task once, so that neither path pays for the datasets cache (JSON → Arrow)."""
    from lm_eval.tasks import TaskManager, get_task_dict

    t0 = time.perf_counter()
    get_task_dict(list(tasks), TaskManager(**data.task_manager_kwargs()))
    log.info("warm-up: %d tasks built in %.1fs", len(tasks), time.perf_counter() - t0)


# --------------------------------------------------------------------------- work and scores


@dataclass
class Work:
    """The same work measured for both paths (tokens of the reference's tokenizer)."""

    scored_tokens: int  # context + continuation of every log-likelihood request
    prompt_tokens: int  # generation prompts
    answer_tokens: int  # final answers


def measure_work(tokenizer: Any, samples: dict[str, list[dict[str, Any]]]) -> Work:
    scored: list[str] = []
    prompts: list[str] = []
    answers: list[str] = []
    for task_samples in samples.values():
        for sample in task_samples:
            for argument, response in zip(sample["arguments"], sample["filtered_resps"], strict=True):
                if isinstance(response, str):
                    prompts.append(argument[0])
                    answers.append(response)
                else:
                    scored.append(argument[0] + argument[1])

    def count(texts: list[str], special: bool = True) -> int:
        return (
            sum(len(ids) for ids in tokenizer(texts, add_special_tokens=special)["input_ids"]) if texts else 0
        )

    return Work(count(scored), count(prompts), count(answers, special=False))


def predictions(samples: list[dict[str, Any]]) -> dict[int, Any]:
    """Per document: generated text, or the index of the most likely option."""
    out: dict[int, Any] = {}
    for sample in samples:
        responses = sample["filtered_resps"]
        if isinstance(responses[0], str):
            out[sample["doc_id"]] = responses[0]
        else:
            scores = [float(r[0]) for r in responses]
            out[sample["doc_id"]] = scores.index(max(scores))
    return out


def max_loglikelihood_gap(reference: list[dict[str, Any]], fast: list[dict[str, Any]]) -> float:
    theirs = {s["doc_id"]: s["filtered_resps"] for s in reference}
    gap = 0.0
    for sample in fast:
        for mine, ref in zip(sample["filtered_resps"], theirs[sample["doc_id"]], strict=True):
            if not isinstance(mine, str):
                gap = max(gap, abs(float(mine[0]) - float(ref[0])))
    return gap


def compare_scores(reference: Any, fast: Any, tasks: Sequence[str]) -> list[dict[str, Any]]:
    """Per harness task: scores (0–1), difference in points, identical-prediction share."""
    from leaderboard.tracks.evalita.definition import harness_index

    index = harness_index()
    rows = []
    for name in tasks:
        key = f"{index[name].task.metric},none"
        ref_score = float(reference.results[name][key])
        fast_score = float(fast.results[name][key])
        mine, theirs = predictions(fast.samples[name]), predictions(reference.samples[name])
        same = sum(mine[d] == theirs.get(d) for d in mine)
        rows.append(
            {
                "task": name,
                "metric": index[name].task.metric,
                "reference": ref_score,
                "fast": fast_score,
                "delta_points": 100 * (fast_score - ref_score),
                "documents": len(mine),
                "identical": same,
                "max_abs_dloglik": max_loglikelihood_gap(reference.samples[name], fast.samples[name]),
            }
        )
    return rows


# --------------------------------------------------------------------------- model facts


def parameter_count(model_id: str, revision: str) -> int:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(model_id, revision=revision)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())


def peak_flops(device: str) -> float | None:
    import torch

    if not device.startswith("cuda") or not torch.cuda.is_available():
        return None
    name = torch.cuda.get_device_name()
    return next((peak for fragment, peak in PEAK_BF16.items() if fragment in name), None)


# --------------------------------------------------------------------------- report


def phase_rows(
    ref: PathRun, fast: PathRun, work: Work, params: int, peak: float | None
) -> list[dict[str, Any]]:
    def mfu(tokens: int, seconds: float) -> float | None:
        return 2 * params * tokens / (seconds * peak) if peak and seconds > 0 else None

    def rate(tokens: int, seconds: float) -> float | None:
        return tokens / seconds if seconds > 0 else None

    rows = [{"phase": "load", "reference_s": ref.load_s, "fast_s": fast.load_s}]
    for phase in (*PHASES, "other"):
        row: dict[str, Any] = {
            "phase": phase,
            "reference_s": ref.phase_s[phase],
            "fast_s": fast.phase_s[phase],
        }
        if phase == "loglikelihood":
            row |= {
                "work_tokens": work.scored_tokens,
                "reference_tok_s": rate(work.scored_tokens, ref.phase_s[phase]),
                "fast_tok_s": rate(work.scored_tokens, fast.phase_s[phase]),
                "reference_mfu": mfu(ref.forwarded_tokens, ref.phase_s[phase]),
                "fast_mfu": mfu(fast.forwarded_tokens, fast.phase_s[phase]),
            }
        if phase == "generation":
            tokens = work.prompt_tokens + work.answer_tokens
            row |= {
                "work_tokens": work.answer_tokens,
                "reference_tok_s": rate(work.answer_tokens, ref.phase_s[phase]),
                "fast_tok_s": rate(work.answer_tokens, fast.phase_s[phase]),
                "reference_mfu": mfu(tokens, ref.phase_s[phase]),
                "fast_mfu": mfu(tokens, fast.phase_s[phase]),
            }
        rows.append(row)
    rows.append({"phase": "total", "reference_s": ref.wall_s, "fast_s": fast.wall_s})
    for row in rows:
        cpu_key = "load + other" if row["phase"] in ("load", "other") else row["phase"]
        if row["phase"] != "load":
            row["reference_cpu_s"], row["fast_cpu_s"] = ref.cpu_s[cpu_key], fast.cpu_s[cpu_key]
            row["cpu_ratio"] = (
                row["fast_cpu_s"] / row["reference_cpu_s"] if row["reference_cpu_s"] > 0 else None
            )
    for row in rows:
        row["ratio"] = row["fast_s"] / row["reference_s"] if row["reference_s"] > 0 else None
    return rows


def print_report(summary: dict[str, Any]) -> None:
    print(
        f"\n{summary['model']} on {summary['hardware']} ({summary['device']}, {summary['dtype']}), "
        f"data={summary['data']} limit={summary['limit']} {summary['num_fewshot']}-shot, "
        f"{len(summary['tasks'])} prompt tasks, {summary['harness']}, torch threads {summary['torch_threads'] or 'default'}; "
        f"order: {' then '.join(summary['order'])}"
    )
    header = (
        f"{'phase':<16} {'hf s':>9} {'hf-fast s':>9} {'fast/hf':>8} {'work tok':>9} {'hf tok/s':>9} "
        f"{'fast tok/s':>10} {'hf MFU':>7} {'fast MFU':>8} {'hf CPU s':>9} {'fast CPU s':>10} {'CPU f/hf':>8}"
    )
    print(header)
    print("-" * len(header))
    for row in summary["phases"]:
        print(
            f"{row['phase']:<16} {row['reference_s']:9.1f} {row['fast_s']:9.1f} {fmt(row['ratio'], '8.3f')} "
            f"{fmt(row.get('work_tokens'), '9d')} {fmt(row.get('reference_tok_s'), '9.1f')} "
            f"{fmt(row.get('fast_tok_s'), '10.1f')} {fmt(row.get('reference_mfu'), '7.1%')} "
            f"{fmt(row.get('fast_mfu'), '8.1%')} {fmt(row.get('reference_cpu_s'), '9.1f')} "
            f"{fmt(row.get('fast_cpu_s'), '10.1f')} {fmt(row.get('cpu_ratio'), '8.3f')}"
        )
    loads = summary["load_average"]
    print(
        f"(CPU s: this process's threads and its finished children; 'load' CPU is counted in 'other'.  "
        f"Mean 1-minute load average on {summary['cpu_cores']} cores: "
        + ", ".join(f"{name} {fmt(load, '.1f')}" for name, load in loads.items())
        + ")"
    )
    scores = summary["scores"]
    header = f"\n{'prompt task':<32} {'metric':<7} {'hf':>8} {'hf-fast':>8} {'Δ pts':>7} {'identical':>11} {'max|Δll|':>9}"
    print(header)
    print("-" * (len(header) - 1))
    for row in scores:
        print(
            f"{row['task']:<32} {row['metric']:<7} {100 * row['reference']:8.2f} {100 * row['fast']:8.2f} "
            f"{row['delta_points']:7.2f} {row['identical']:>5}/{row['documents']:<5} {row['max_abs_dloglik']:9.2e}"
        )
    agreement = summary["agreement"]
    print(
        f"\nidentical predictions {agreement['identical']}/{agreement['documents']} "
        f"({100 * agreement['identical_share']:.2f} %, target ≥ {100 * TARGET_IDENTICAL:.1f} %); "
        f"largest prompt score difference {agreement['max_abs_delta_points']:.3f} points "
        f"(target ≤ {TARGET_POINTS}); {'within' if agreement['within_targets'] else 'OUTSIDE'} the targets"
    )
    fast = summary["fastpath"]
    print(
        f"fast path: {fast['tree_requests']} log-likelihood requests in {fast['tree_rows']} trees "
        f"({fast['tree_batches']} batches, {fast['tree_tokens']} tokens, padding "
        f"{fmt(1 - fast['tree_tokens'] / fast['tree_padded_tokens'] if fast['tree_padded_tokens'] else None, '.1%')}); "
        f"check {fast['tree_check'] or '-'}; {fast['cb_requests']} generations by continuous batching; "
        f"reference served {fast['reference_loglikelihood_requests']} + {fast['reference_generation_requests']}"
        f"{' (' + '; '.join(fast['fallback_reasons']) + ')' if fast['fallback_reasons'] else ''}; "
        f"post-processing on {fast['postprocess']['workers']} cores"
    )


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    from backend.embedded import EMBEDDED_MODEL_ID
    from backend.options import add_harness_arguments

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", default=EMBEDDED_MODEL_ID, help="hub id (from the HF cache) or model folder"
    )
    parser.add_argument("--revision", default="main")
    parser.add_argument(
        "--data",
        default="sample",
        help="sample | local:DIR (the layout of leaderboard/tracks/evalita/sample_data)",
    )
    parser.add_argument("--tasks", default=None, help="task ids (default: all ten)")
    parser.add_argument("--fewshot", type=int, default=0, choices=(0, 5))
    add_harness_arguments(
        parser,
        ("--limit", "--max-gen-toks", "--batch-size", "--bootstrap-iters", "--device"),
        limit_help="documents per prompt task",
        bootstrap_iters=1000,
    )
    parser.add_argument("--precision", default="bfloat16", help="weights on GPU (CPU runs float32)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--fast-first", action="store_true", help="run hf-fast before hf")
    parser.add_argument("--out", type=Path, default=None)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from backend.embedded import EMBEDDED_MODEL_ID, install_embedded
    from backend.runner import ModelRef
    from backend.tracks.evalita.convert import all_harness_tasks
    from backend.tracks.evalita.data import prepare_include_path
    from backend.tracks.evalita.offline_rouge import install_offline_rouge
    from leaderboard.tracks.evalita.definition import SUITE

    revision = args.revision
    if args.model == EMBEDDED_MODEL_ID:
        revision = install_embedded().revision
    install_offline_rouge()
    ids = args.tasks.split(",") if args.tasks else [t.id for t in SUITE]
    tasks = all_harness_tasks([t for t in SUITE if t.id in ids])
    model = ModelRef(args.model, revision, args.precision)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    clock = install_clock()
    sampler = LoadSampler()
    order = (FAST, REFERENCE) if args.fast_first else (REFERENCE, FAST)
    runs: dict[str, PathRun] = {}
    with tempfile.TemporaryDirectory(prefix="bench-speed-") as workdir:
        override = prepare_include_path(args.data, Path(workdir))
        warm_up(tasks, override)
        for backend in order:
            runs[backend] = run_path(backend, model, tasks, args, override, clock)
    sampler.stop()
    ref, fast = runs[REFERENCE], runs[FAST]

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.model, revision=revision)
    work = measure_work(tokenizer, ref.output.samples)
    record = ref.output.run
    scores = compare_scores(ref.output, fast.output, tasks)
    documents = sum(r["documents"] for r in scores)
    identical = sum(r["identical"] for r in scores)
    worst = max(abs(r["delta_points"]) for r in scores)
    summary = {
        "model": f"{args.model}@{revision}",
        "data": override.label,
        "limit": args.limit,
        "max_gen_toks": args.max_gen_toks,
        "num_fewshot": args.fewshot,
        "tasks": tasks,
        "order": list(order),
        "hardware": record.hardware,
        "device": record.device,
        "dtype": record.dtype,
        "harness": record.harness,
        "torch_threads": args.threads,
        "cpu_cores": os.cpu_count(),
        "load_average": {run.backend: sampler.mean(*run.interval) for run in runs.values()},
        "versions": record.versions,
        "reference_batch_size": record.batch_size_used or record.batch_size,
        "parameters": parameter_count(args.model, revision),
        "work": asdict(work),
        "agreement": {
            "documents": documents,
            "identical": identical,
            "identical_share": identical / documents if documents else 1.0,
            "max_abs_delta_points": worst,
            "within_targets": (identical >= TARGET_IDENTICAL * documents) and worst <= TARGET_POINTS,
        },
        "fastpath": fast.output.progress["fastpath"],
        "scores": scores,
        # Each path's GPU energy from NVML's counter (issue 33), or why it was not measured.
        "energy": {
            run.backend: run.output.run.cost.energy.model_dump(mode="json")
            if run.output.run.cost is not None and run.output.run.cost.energy is not None
            else None
            for run in runs.values()
        },
    }
    summary["phases"] = phase_rows(ref, fast, work, summary["parameters"], peak_flops(record.device))
    print_report(summary)
    for backend, energy in summary["energy"].items():
        print(
            f"energy, {backend}: {energy['kwh'] if energy and energy['measured'] else (energy or {}).get('note')}"
        )
    out = args.out or REPO_ROOT / "artifacts" / f"bench_speed_{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    print(f"\nwritten {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
