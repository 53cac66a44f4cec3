"""The envelope every track's results file shares, the run block, and where files go.

``{"schema": "evalita-llm-results/2", "track": …, "model": {…}, "run": {…}, <the track's body>}``
(docs/DESIGN.md, docs/TRACKS.md).  A track subclasses :class:`ResultsEnvelope` with its body
and ``TRACK`` (and, for its own typed run fields, :class:`RunInfo`).  Older schema versions
are upgraded in :mod:`leaderboard.core.migrations`, never here.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from eval_queue.errors import MalformedFileError
from eval_queue.requests import run_label
from eval_queue.safe_json import RESULTS_LIMITS, load_object, validate
from eval_queue.text import printable
from eval_queue.tracks import DEFAULT_TRACK, track_registry
from leaderboard.core.summary import UncertaintySummary

#: The schema every results file is written in (``/1`` files are read and upgraded).
RESULTS_SCHEMA = "evalita-llm-results/2"


class StrictModel(BaseModel):
    """A block of a track's results body: unknown fields refused, values frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelInfo(BaseModel):
    model_config = ConfigDict(extra="allow", protected_namespaces=())

    id: str
    revision: str = "main"
    precision: str = "bfloat16"
    params_b: float | None = None
    model_type: str | None = None
    license: str | None = None
    architecture: str | None = None

    @field_validator("id", "revision", "precision")
    @classmethod
    def _no_control_characters(cls, value: str) -> str:
        # Identifiers reach terminals (export) and file names; a real one has none.
        if printable(value, keep_newlines=False) != value:
            raise ValueError("contains control characters")
        return value


class TaskTokens(BaseModel):
    """Tokens of one harness task, counted with the run's tokenizer (``backend/tokens.py``).

    ``input``: what the model read (prompts; log-likelihood contexts with their continuations),
    ``output``: the generated answers, ``reasoning``: the part of ``output`` inside kept
    ``<think>`` blocks; ``requests``: the model calls' requests counted.
    """

    model_config = ConfigDict(extra="allow")

    input: int = 0
    output: int = 0
    reasoning: int = 0
    requests: int = 0


#: What a run's energy block says when no cumulative energy counter could be read (CPU, an old GPU).
NOT_MEASURED = "not measured (no NVML counter)"


class PhaseEnergy(BaseModel):
    """The GPUs' energy over one phase of a run (summed over its calls), from NVML's counter."""

    model_config = ConfigDict(extra="allow")

    seconds: float
    #: The counter's difference (every GPU of the run), kWh.
    gross_kwh: float
    #: Idle power × the phase's wall time (every GPU), kWh: what the GPUs draw doing nothing.
    idle_kwh: float
    #: ``gross_kwh − idle_kwh`` (never below 0): what the phase's work added.
    kwh: float


class RunEnergy(BaseModel):
    """The energy of a run's GPUs, measured with NVML's cumulative energy counter (issue 33).

    ``measured`` False: no counter could be read (``note`` says why, starting with
    :data:`NOT_MEASURED`) and every figure is None — never an estimate in a measurement's place.
    Measured: ``gross_kwh`` the counters' difference from the run's start to its end (every GPU
    the run was given), ``idle_kwh`` the idle power read before the run × its wall time,
    subtracted, ``kwh = gross_kwh − idle_kwh``; ``phases`` the same per phase (``model_load``,
    ``loglikelihood``, ``generate_until``, …; the time between them is ``other``).
    """

    model_config = ConfigDict(extra="allow")

    measured: bool
    note: str
    kwh: float | None = None
    gross_kwh: float | None = None
    idle_kwh: float | None = None
    idle_w: float | None = None
    duration_s: float | None = None
    phases: dict[str, PhaseEnergy] = Field(default_factory=dict)
    gpu_model: str | None = None
    gpu_count: int | None = None
    power_limit_w: float | None = None
    driver: str | None = None
    nvml_indices: list[int] = Field(default_factory=list)

    def summary(self) -> str:
        """One line: ``0.0123 kWh (idle 0.0040 kWh subtracted) on 1 × NVIDIA H100``, or the note."""
        if not self.measured or self.kwh is None:
            return self.note
        return (
            f"{self.kwh:.4f} kWh (idle {self.idle_kwh or 0.0:.4f} kWh subtracted) "
            f"on {self.gpu_count} × {self.gpu_model}"
        )


class RunCost(BaseModel):
    """What a run cost, as the worker measured it: wall time per phase, tokens, GPU-hours.

    The phases split the harness call as ``bench/bench_speed.py`` does: ``setup_s`` (tasks
    loaded, requests built), ``loglikelihood_s`` and ``generation_s`` (the model's calls),
    ``postprocess_s`` (from the last model call to the harness's return: metrics, bootstrap);
    with ``RunInfo.model_load_s`` they add up to ``RunInfo.duration_s``.  Tokens count what
    went through the model (log-likelihood forwards with their padding, generation prompts,
    generated tokens); ``None`` where the backend does not report them (vllm).
    """

    model_config = ConfigDict(extra="allow")

    setup_s: float | None = None
    loglikelihood_s: float | None = None
    generation_s: float | None = None
    postprocess_s: float | None = None
    loglikelihood_requests: int | None = None
    generation_requests: int | None = None
    loglikelihood_tokens: int | None = None
    generation_prompt_tokens: int | None = None
    generated_tokens: int | None = None
    #: GPUs the run held (0 on CPU) and GPU-hours = wall time × GPUs (model load included).
    gpus: int = 0
    gpu_hours: float | None = None
    #: **[issue 33]** Unpadded tokens with the run's tokenizer (``backend/tokens.py``): the run's
    #: totals (every request) and per harness task; None where the model class has no tokenizer
    #: (and in runs made before).  ``reasoning_tokens`` is part of ``output_tokens``.
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    task_tokens: dict[str, TaskTokens] | None = None
    #: **[issue 33]** The GPUs' energy (NVML's counter), or "not measured"; None in runs made before.
    energy: RunEnergy | None = None
    #: **[issue 33]** Items the harness scored (every document of every harness task it ran).
    scored_items: int | None = None

    @property
    def kwh(self) -> float | None:
        """The run's measured energy (idle subtracted), None when it was not measured."""
        return self.energy.kwh if self.energy is not None and self.energy.measured else None

    @property
    def wh_per_thousand_items(self) -> float | None:
        """Measured energy per 1,000 scored items, in Wh (None unless both are known)."""
        kwh = self.kwh
        if kwh is None or not self.scored_items:
            return None
        return kwh * 1000.0 * 1000.0 / self.scored_items

    @property
    def energy_text(self) -> str:
        """What a page says of the energy: the measurement, why there is none, or that none was recorded."""
        if self.energy is None:
            return "not recorded (a run made before energy was measured)"
        return self.energy.summary()

    @property
    def tokens(self) -> int | None:
        """Every token the model processed (None when the backend counted none)."""
        counted = [
            t for t in (self.loglikelihood_tokens, self.generation_prompt_tokens, self.generated_tokens) if t
        ]
        return sum(counted) if counted else None


class Recipe(BaseModel):
    """How to run a run again: the equivalent plain ``lm_eval`` command and what checks it.

    ``lm_eval_args`` is the command line after ``lm_eval`` (``--model hf --model_args …``);
    ``setup`` the shell line that first writes the include folder it names (sample or local
    data; None for the official data); ``task_hashes`` lm-eval's per-task hash of every
    document, prompt and target (as its own results files carry them); ``notes`` say where a
    plain ``lm_eval`` run differs from the worker's (e.g. its bootstrap draws).
    """

    model_config = ConfigDict(extra="allow")

    lm_eval_args: list[str]
    setup: str | None = None
    harness_tasks: list[str] = Field(default_factory=list)
    task_hashes: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)

    @property
    def command(self) -> str:
        """The ``lm_eval`` command line, quoted for a POSIX shell."""
        return shlex.join(["lm_eval", "run", *self.lm_eval_args])

    @property
    def script(self) -> str:
        """Setup (if any), then the command: what the model page offers to copy."""
        return "\n".join(line for line in (self.setup, self.command) if line)


class RunInfo(BaseModel):
    """How a run was made: the results file's ``run`` block, from the runner through the worker.

    The runner fills what the harness ran (:mod:`backend.runner`), the worker adds where it
    ran and what it published; every field is typed here (unknown keys of other writers are
    kept and ignored, never written by this project).
    """

    model_config = ConfigDict(extra="allow", protected_namespaces=())

    num_fewshot: int
    # "hub" | "sample" | "local:<name>"; only "hub" runs with no limit are comparable.
    data: str = "hub"
    limit: int | float | None = None
    harness: str | None = None
    backend: str | None = None
    model_args: str | None = None
    batch_size: str | int | None = None
    chat_template: bool | None = None
    started_at: str | None = None
    finished_at: str | None = None
    duration_s: float | None = None
    hardware: str | None = None
    request_id: str | None = None
    # Folder in the details store holding <task>_<prompt>.jsonl files of this run.
    details_path: str | None = None
    worker_id: str | None = None
    device: str | None = None
    # The weights' dtype as run (float32 on CPU whatever was asked): also ``model.precision``.
    dtype: str | None = None
    # The precision the request asked for, when it differs from what ran or not.
    requested_precision: str | None = None
    batch_size_used: list[int] = Field(default_factory=list)
    # Bootstrap draws behind each stderr (lm-eval's CLI uses 100,000; stderr differs with it).
    bootstrap_iters: int | None = None
    # A cap on generated tokens (smoke tests only: such a run is not comparable).
    max_gen_toks: int | None = None
    seeds: dict[str, int] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    model_load_s: float | None = None
    # [project] How to run it again, and what it cost (written by this project's worker since
    # issue 23; None in older files).
    recipe: Recipe | None = None
    cost: RunCost | None = None

    @property
    def official_full_run(self) -> bool:
        """On the official data, every item, answers not capped: what a comparable run needs at least.

        Each track's results type decides what else comparability takes
        (:attr:`ResultsEnvelope.comparable`).
        """
        return self.data == "hub" and self.limit is None and self.max_gen_toks is None


class ResultsEnvelope(BaseModel):
    """What every track's results file shares; a track subclasses it with its body and ``TRACK``.

    ``{"schema": "evalita-llm-results/2", "track": …, "model": {…}, "run": {…}, <body>}``.
    A track's run block may be a :class:`RunInfo` subclass with its own typed fields.
    """

    model_config = ConfigDict(extra="allow", protected_namespaces=())

    #: The track whose files this class reads; a file of another track is refused.
    TRACK: ClassVar[str]

    schema_: str = Field(default=RESULTS_SCHEMA, alias="schema")
    track: str
    model: ModelInfo
    run: RunInfo
    #: Every interval of the run, computed by the worker from its per-item file
    #: (:mod:`leaderboard.core.summary`); absent: no per-item data, no interval.
    uncertainty: UncertaintySummary | None = None

    @field_validator("run", mode="before")
    @classmethod
    def _run_of_this_track(cls, value: Any) -> Any:
        """A run block built as another class (the harness runner's plain :class:`RunInfo`) is read
        again as this track's run type, its extra fields included."""
        return value.model_dump() if isinstance(value, RunInfo) else value

    @model_validator(mode="after")
    def _is_its_track(self) -> Self:
        if self.track != type(self).TRACK:
            raise ValueError(f"a {self.track!r} results file, not a {type(self).TRACK!r} one")
        # A run in a setting its track does not run would be counted but shown nowhere: refused.
        registry = track_registry()
        if self.track in registry:  # a track registered only in a test's own registry has no say here
            registry.spec(self.track).check_fewshot(self.run.num_fewshot)
        return self

    @property
    def comparable(self) -> bool:
        """Ranked by default: the same measurement as a full run on the official data.

        The one rule of each track: this default (:attr:`RunInfo.official_full_run`), or the
        track's own override (a task subset, a protocol, an annotated set…).
        """
        return self.run.official_full_run

    def to_json(self) -> bytes:
        payload = self.model_dump(mode="json", by_alias=True, exclude_none=False)
        if payload.get("uncertainty") is None:  # no per-item data: the file says nothing of it
            payload.pop("uncertainty", None)
        return (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes, path: str) -> Self:
        """Parse (and upgrade) a results file; raises :class:`MalformedFileError` naming ``path``.

        The bytes go through the store's safe reader (:mod:`eval_queue.safe_json`: size,
        depth, numbers, encoding), then the migrations, then this schema.
        """
        from leaderboard.core.migrations import upgrade  # local: migrations imports this module

        return cls.from_raw(upgrade(load_object(data, path, RESULTS_LIMITS), path), path)

    @classmethod
    def from_raw(cls, raw: dict[str, Any], path: str) -> Self:
        """Validate a file already read (by the safe reader) and upgraded to the current schema."""
        if raw.get("track") != cls.TRACK:
            raise MalformedFileError(path, f"a {raw.get('track')!r} results file, not a {cls.TRACK!r} one")
        return validate(cls, raw, path)


def _stamp(moment_iso: str) -> str:
    """``2026-11-22T19:06:53Z`` → ``2026-11-22T19-06-53Z`` (no ``:`` in file names)."""
    return moment_iso.replace(":", "-")


def results_file_path(results: ResultsEnvelope, finished_at_iso: str, variant: str | None = None) -> str:
    """Where a run's results file lives: ``<org>/<model>/results_<ts>_<precision>_<label>.json``.

    ``<ts>`` is ``finished_at_iso`` as given; the worker's runners give the request's run
    stamp (:func:`eval_queue.publication.run_stamp`), not the finish time, so that a retry or
    a rerun of one request writes this same path.

    ``<label>`` is ``<k>shot`` for the default track, the track's name for the others, followed by
    ``-<variant>`` for a run of part of the track (e.g. a task subset).
    DESIGN.md names it ``results_<timestamp>.json``; the precision and setting are appended
    (readers match ``results_*.json``) so that two runs of one model finishing in the same
    second, e.g. its 0-shot and 5-shot requests on two workers, never overwrite each other.
    """
    stamp = _stamp(finished_at_iso)
    label = run_label(results.track, results.run.num_fewshot, variant)
    return f"{results.model.id}/results_{stamp}_{results.model.precision}_{label}.json"


def details_dir(
    model_id: str,
    finished_at_iso: str,
    precision: str,
    num_fewshot: int,
    track: str = DEFAULT_TRACK,
    variant: str | None = None,
) -> str:
    """Folder in the details store for one run's per-sample files (``<task>_<prompt>.jsonl``).

    Named like :func:`results_file_path` (the runners give the request's run stamp).
    """
    return f"{model_id}/{_stamp(finished_at_iso)}_{precision}_{run_label(track, num_fewshot, variant)}"
