"""``python -m backend reproduce RESULTS_PATH [--limit N]``: run a slice of a published run again, here.

It reads the run's results file (a path in the configured results store, or a file on
disk) and its per-sample details, runs the same model — id, revision, the dtype it ran in,
backend, batch size, chat template, answer cap — on the same tasks, few-shot setting, seeds
and data through the worker's own harness call (:func:`backend.runner.run_harness`), the
first ``--limit`` items of every prompt (at most as many as the run had), and compares.

Per prompt it reports the share of identical per-sample predictions (the same answer: the
same choice picked, the same generated text; for multiple choice also the largest
log-likelihood difference) and the score difference on the slice.  Both slice scores are
computed the same way, by lm-eval's own scoring: the prompt's task scores each item's
recorded answer (``process_results``) and aggregates them (``aggregation``), the original
run's answers from its details, the new run's from this run, and NER's three domains are
combined as the worker combines them (:func:`backend.tracks.evalita.convert.task_results`);
so a difference comes from the predictions alone, never from comparing a slice with a whole
run.  When the slice is the whole of the original run, lm-eval's task hashes (documents,
prompts, targets) are compared too.

Evalita runs only (the other tracks' recipes give their plain command).  Exit codes: 0 the
comparison ran (whatever it found); 1 the run could not be reproduced (model, data, harness);
2 bad usage (no such results file, a track it cannot reproduce, local data not given).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from backend.config import ExitCode
from backend.logs import configure_logging, harness_output_to
from backend.options import BACKENDS, CPU_BATCH_SIZE, RunOptions
from eval_queue.errors import EvalitaError, MalformedFileError, NotFoundError
from eval_queue.settings import Settings
from eval_queue.storage import Stores, open_stores
from leaderboard.core.contents_io import parse_results
from leaderboard.core.datasource import DataSource
from leaderboard.tracks.evalita.definition import SUITE, TaskKind, TaskSpec
from leaderboard.tracks.evalita.schema import DetailRecord, ResultsFile, details_file_name, parse_details

log = logging.getLogger("backend.tracks.evalita.reproduce")

#: Items per prompt when ``--limit`` is not given.
DEFAULT_LIMIT = 10


class ReproduceError(EvalitaError):
    """The run cannot be reproduced as asked (its file, its track, its data)."""


@dataclass(frozen=True)
class PromptComparison:
    """One prompt of the slice: predictions compared item by item, and both slice scores."""

    task: str
    prompt: str
    items: int
    identical: int
    original: float | None
    reproduced: float | None
    #: Multiple choice: the largest |Δ log-likelihood| over the items' choices.
    max_loglikelihood_diff: float | None = None

    @property
    def identical_share(self) -> float:
        return self.identical / self.items if self.items else math.nan

    @property
    def difference_points(self) -> float | None:
        """Reproduced − original, in points (0–100 scale); None if either score is missing."""
        if self.original is None or self.reproduced is None:
            return None
        return (self.reproduced - self.original) * 100


@dataclass(frozen=True)
class Reproduction:
    """What ``reproduce`` found."""

    results_path: str
    limit: int
    device: str
    prompts: tuple[PromptComparison, ...]
    #: lm-eval's task hashes equal the recorded ones (None: the slice is not the whole run).
    task_hashes_match: bool | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def items(self) -> int:
        return sum(p.items for p in self.prompts)

    @property
    def identical(self) -> int:
        return sum(p.identical for p in self.prompts)

    @property
    def max_abs_difference_points(self) -> float:
        diffs = [abs(d) for p in self.prompts if (d := p.difference_points) is not None]
        return max(diffs, default=0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "items": self.items,
            "identical": self.identical,
            "max_abs_difference_points": self.max_abs_difference_points,
        }


# --------------------------------------------------------------------------- the run to reproduce


def read_run(path: str, stores: Stores) -> ResultsFile:
    """The results file at ``path``: a file on disk, else a path in the results store."""
    local = Path(path)
    try:
        data = local.read_bytes() if local.is_file() else stores.results.read(path)
    except NotFoundError:
        raise ReproduceError(f"no results file {path!r} (on disk or in the results store)") from None
    results = parse_results(data, path)
    if not isinstance(results, ResultsFile):
        track = getattr(results, "track", "?")
        raise ReproduceError(
            f"{path} is a {track} run: reproduce runs Evalita runs (its run block's recipe has the "
            "plain lm_eval command of any run)"
        )
    return results


def run_tasks(results: ResultsFile, only: Sequence[str] | None) -> tuple[TaskSpec, ...]:
    """The run's tasks (its subset, or all ten), within ``only`` if given."""
    ran = set(results.run.tasks or [t.id for t in SUITE]) & set(results.tasks)
    chosen = tuple(t for t in SUITE if t.id in ran and (not only or t.id in only))
    if not chosen:
        raise ReproduceError(
            f"none of {', '.join(only or [])} is among the run's tasks ({', '.join(sorted(ran))})"
        )
    return chosen


def data_source(results: ResultsFile, given: str | None) -> str:
    """Where the slice's data comes from: ``--data``, else what the run used (local data must be given)."""
    if given:
        DataSource.parse(given)
        return given
    data = results.run.data
    if data.startswith("local:"):
        raise ReproduceError(
            f"the run used local data ({data}): pass --data local:DIR with your copy of that folder"
        )
    return data


def slice_limit(results: ResultsFile, asked: int | None) -> int:
    """Items per prompt: ``--limit`` (default :data:`DEFAULT_LIMIT`), at most what the run had."""
    limit = asked or DEFAULT_LIMIT
    ran = results.run.limit
    if isinstance(ran, int):
        limit = min(limit, ran)
    return limit


def harness_options(
    results: ResultsFile, limit: int, device: str | None, batch_size: str | None
) -> RunOptions:
    """The run's own harness options, on this machine's device, for ``limit`` items."""
    run = results.run
    same_device = device is None or device == run.device
    recorded = run.batch_size if same_device else None
    if isinstance(recorded, str) and not recorded.startswith("auto"):
        recorded = int(recorded)
    return RunOptions(
        backend=run.backend if run.backend in BACKENDS else "hf",
        device=device,
        batch_size=batch_size or recorded or (None if (device or "").startswith("cuda") else CPU_BATCH_SIZE),
        dtype=run.dtype,
        bootstrap_iters=0,  # stderrs are not compared: their draws cost minutes for nothing here
        limit=limit,
        apply_chat_template=bool(run.chat_template),
        max_gen_toks=run.max_gen_toks,
    )


# --------------------------------------------------------------------------- comparing


def _key(record: DetailRecord) -> tuple[str, int]:
    return (str((record.model_extra or {}).get("part") or ""), record.doc_id)


def original_records(
    stores: Stores, results: ResultsFile, task: TaskSpec, prompt_id: str
) -> list[DetailRecord]:
    """The run's per-sample records of one prompt, from its details folder."""
    folder = results.run.details_path
    if not folder:
        raise ReproduceError("the run kept no per-sample details: there is nothing to compare with")
    path = f"{folder}/{details_file_name(task.id, prompt_id)}"
    try:
        return parse_details(stores.details.read(path), path)
    except NotFoundError:
        raise ReproduceError(f"the run's details lack {path}") from None


def _results_of(task: TaskSpec, record: DetailRecord) -> list[Any]:
    """What lm-eval handed ``process_results`` for this item, as the details recorded it."""
    if task.kind is TaskKind.MULTIPLE_CHOICE:
        return [(ll, False) for ll in record.loglikelihoods or []]
    return [record.answer]


def slice_scores(
    tasks: Sequence[TaskSpec],
    lm_tasks: Mapping[str, Any],
    records: Mapping[tuple[str, str], Sequence[DetailRecord]],
    doc_ids: Mapping[str, set[int]],
) -> dict[tuple[str, str], float | None]:
    """Each prompt's score over the items ``doc_ids`` (per harness task), by lm-eval's own scoring."""
    from backend.tracks.evalita import convert

    harness_results: dict[str, dict[str, Any]] = {}
    n_samples: dict[str, dict[str, int]] = {}
    for task in tasks:
        for prompt in task.prompts:
            by_key = {_key(r): r for r in records.get((task.id, prompt.id), ())}
            for harness in prompt.harness_tasks:
                lm_task = lm_tasks[harness.name]
                docs = lm_task.eval_docs
                part = harness.part or ""
                values = [
                    lm_task.process_results(docs[doc_id], _results_of(task, by_key[(part, doc_id)]))[
                        task.metric
                    ]
                    for doc_id in sorted(doc_ids.get(harness.name, ()))
                    if (part, doc_id) in by_key
                ]
                if values:
                    score = lm_task.aggregation()[task.metric](values)
                    harness_results[harness.name] = {f"{task.metric},none": score}
                    n_samples[harness.name] = {"effective": len(values)}
    scores: dict[tuple[str, str], float | None] = {}
    for task in tasks:
        for prompt in task.prompts:
            try:
                score = convert.prompt_score(task, prompt, harness_results, n_samples).score
            except convert.IncompleteRunError:
                score = None
            scores[(task.id, prompt.id)] = score
    return scores


def compare_prompt(
    task: TaskSpec,
    prompt_id: str,
    original: Sequence[DetailRecord],
    reproduced: Sequence[DetailRecord],
    scores: tuple[float | None, float | None],
) -> PromptComparison:
    """Item by item over the reproduced items (the slice)."""
    before = {_key(r): r for r in original}
    identical = 0
    worst: float | None = None
    for record in reproduced:
        old = before.get(_key(record))
        if old is None:
            continue
        identical += old.answer == record.answer
        if task.kind is TaskKind.MULTIPLE_CHOICE and old.loglikelihoods and record.loglikelihoods:
            diff = max(abs(a - b) for a, b in zip(old.loglikelihoods, record.loglikelihoods, strict=False))
            worst = diff if worst is None else max(worst, diff)
    return PromptComparison(task.id, prompt_id, len(reproduced), identical, scores[0], scores[1], worst)


def reproduce(
    results_path: str,
    stores: Stores,
    *,
    limit: int | None,
    tasks: Sequence[str] | None = None,
    data: str | None = None,
    device: str | None = None,
    batch_size: str | None = None,
    workdir: Path,
) -> Reproduction:
    """Run the slice and compare it with the run (module docstring); raises :class:`ReproduceError`."""
    results = read_run(results_path, stores)
    chosen = run_tasks(results, tasks)
    source = data_source(results, data)
    n = slice_limit(results, limit)
    options = harness_options(results, n, device, batch_size)
    # The harness (torch, transformers, lm-eval: seconds of imports) only once the run is known to be
    # reproducible here: a wrong path or option is answered at once.
    from backend import runner
    from backend.tracks.evalita import convert
    from backend.tracks.evalita.data import prepare_include_path
    from backend.tracks.evalita.offline_rouge import install_offline_rouge
    from leaderboard.tracks.evalita.definition import all_harness_tasks

    originals = {
        (task.id, prompt.id): original_records(stores, results, task, prompt.id)
        for task in chosen
        for prompt in task.prompts
    }
    install_offline_rouge()
    harness_names = all_harness_tasks(chosen)
    override = prepare_include_path(source, workdir, tasks=harness_names)
    model = runner.ModelRef(
        results.model.id, results.model.revision, results.run.requested_precision or results.model.precision
    )
    log.info(
        "reproducing %s: %s@%s, %d tasks, %d-shot, %d items per prompt, data %s, on %s",
        results_path,
        model.model_id,
        model.revision,
        len(chosen),
        results.run.num_fewshot,
        n,
        source,
        runner.resolve_device(device),
    )
    output = runner.run_harness(
        model,
        harness_names,
        results.run.num_fewshot,
        options,
        task_manager_kwargs=override.task_manager_kwargs(),
    )
    new_details = convert.details_files(output.samples, chosen)
    reproduced = {
        (task.id, prompt.id): parse_details(new_details[details_file_name(task.id, prompt.id)], "reproduced")
        for task in chosen
        for prompt in task.prompts
    }
    doc_ids = {name: {int(s["doc_id"]) for s in samples} for name, samples in output.samples.items()}
    before = slice_scores(chosen, output.tasks, originals, doc_ids)
    after = slice_scores(chosen, output.tasks, reproduced, doc_ids)
    comparisons = []
    for task in chosen:
        for prompt in task.prompts:
            key = (task.id, prompt.id)
            comparisons.append(
                compare_prompt(task, prompt.id, originals[key], reproduced[key], (before[key], after[key]))
            )
    recipe = results.run.recipe
    whole = isinstance(results.run.limit, int) and n == results.run.limit
    hashes_match = None
    if whole and recipe is not None and recipe.task_hashes:
        new_hashes = output.run.recipe.task_hashes if output.run.recipe else {}
        hashes_match = all(recipe.task_hashes.get(name) == new_hashes.get(name) for name in harness_names)
    notes = []
    if results.run.device != output.run.device:
        notes.append(f"the run used {results.run.device}, this reproduction {output.run.device}")
    if source != results.run.data:
        notes.append(f"the run used data {results.run.data}, this reproduction {source}")
    return Reproduction(
        results_path, n, output.run.device or "", tuple(comparisons), hashes_match, tuple(notes)
    )


# --------------------------------------------------------------------------- the command line


def _fmt(value: float | None, spec: str) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def report_lines(found: Reproduction) -> list[str]:
    """The table ``reproduce`` prints: one line per prompt, then the totals."""
    lines = [
        f"{'task':<5} {'prompt':<6} {'items':>5} {'identical':>9} {'original':>9} {'reproduced':>10} "
        f"{'Δ points':>9} {'max |Δ ll|':>10}"
    ]
    for p in found.prompts:
        lines.append(
            f"{p.task:<5} {p.prompt:<6} {p.items:>5} {_fmt(p.identical_share * 100, '8.1f')}% "
            f"{_fmt(None if p.original is None else p.original * 100, '9.2f')} "
            f"{_fmt(None if p.reproduced is None else p.reproduced * 100, '10.2f')} "
            f"{_fmt(p.difference_points, '+9.2f')} {_fmt(p.max_loglikelihood_diff, '10.2e')}"
        )
    share = found.identical / found.items * 100 if found.items else math.nan
    lines.append(
        f"{found.identical}/{found.items} per-sample predictions identical ({_fmt(share, '.1f')} %); "
        f"largest score difference {found.max_abs_difference_points:.2f} points "
        f"({len(found.prompts)} prompts, first {found.limit} items each, on {found.device})"
    )
    if found.task_hashes_match is not None:
        lines.append(
            f"lm-eval task hashes {'match' if found.task_hashes_match else 'DIFFER'} (documents, prompts, targets)"
        )
    lines += [f"note: {note}" for note in found.notes]
    return lines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m backend reproduce",
        description="Run a slice of a published Evalita run again on this machine and compare it, prompt by "
        "prompt, with the run's per-sample details: share of identical predictions, score difference.",
    )
    parser.add_argument(
        "results_path",
        metavar="RESULTS_PATH",
        help="a results file: its path in the results store, or on disk",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help=f"items per prompt (default {DEFAULT_LIMIT}; at most the run's)",
    )
    parser.add_argument("--tasks", default=None, help="only these task ids of the run, e.g. wic,sa")
    parser.add_argument(
        "--data", default=None, help="hub | sample | local:DIR (default: the run's; local data must be given)"
    )
    parser.add_argument("--device", default=None, help="cpu | cuda | cuda:N (default: cuda if available)")
    parser.add_argument(
        "--batch-size",
        default=None,
        help="default: the run's on the same device, else 4 on CPU / auto on GPU",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the comparison there (JSON)")
    parser.add_argument("--log-file", type=Path, default=None, help="the harness's own output and warnings")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, args.log_file)
    if args.limit is not None and args.limit <= 0:
        log.error("--limit must be positive")
        return ExitCode.USAGE
    settings = Settings.from_env()
    stores = open_stores(settings)
    only = [t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None
    try:
        with (
            tempfile.TemporaryDirectory(prefix="evalita-reproduce-") as workdir,
            harness_output_to(args.log_file),
        ):
            found = reproduce(
                args.results_path,
                stores,
                limit=args.limit,
                tasks=only,
                data=args.data,
                device=args.device,
                batch_size=args.batch_size,
                workdir=Path(workdir),
            )
    except (ReproduceError, MalformedFileError) as exc:
        log.error("%s", exc)
        return ExitCode.USAGE
    except EvalitaError as exc:
        log.error("could not reproduce the run: %s", exc)
        return ExitCode.FAILED
    for line in report_lines(found):
        print(line)
    if args.json is not None:
        args.json.write_text(json.dumps(found.to_json(), indent=2) + "\n")
    return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
