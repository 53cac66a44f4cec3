"""The contents table: every results file of a store as rows of one Parquet file, ``contents.parquet``.

One row per (results file, setting): each track's spec says which rows a file gives (one per
few-shot setting run, one per context setting…).  The columns
are fixed by an explicit schema (:func:`contents_schema`): the shared ones, defined here
once — who (model, revision, precision…), what (track, setting, variant, data, comparable),
with what (harness and library versions, backend, hardware), when (dates), at what cost
(wall time per phase, tokens — also per the run's tokenizer —, GPU-hours, energy), how to run it again (the plain ``lm_eval``
command) and where (results and details paths) — and each track's own, which its spec
names (``TrackSpec.contents``: a :class:`TrackContents`, its columns and a function that
returns the rows of one parsed results file).  Scores are on the 0–1 scale, as in the
results files; a score that does not exist is null, never 0.

This module is the table's format: its schema, its rows, its Parquet bytes (no store I/O).
The file sits at the root of the results store, beside the results files; reading and
writing it there is :mod:`leaderboard.core.contents_io`'s.  The worker
replaces a run's rows after publishing it (``publish_rows``, a compare-and-swap
``Storage.update``, so concurrent workers keep each other's rows); ``python -m leaderboard
rebuild-contents`` regenerates it from the results files (``rebuild``).  Each row
records the store version of the results file it was built from (``results_version``): a
reader knows which rows are current and reads the other results files themselves.

Anyone reads it with ``datasets``::

    datasets.load_dataset("parquet", data_files="eval-data/results/contents.parquet")
    datasets.load_dataset("parquet", data_files="hf://datasets/ORG/RESULTS/contents.parquet")

Interval columns are nullable (a run without per-item data has none); a track fills its own
through its ``rows``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from eval_queue.errors import MalformedFileError
from eval_queue.requests import run_label
from eval_queue.tracks import TrackRegistry, track_registry
from leaderboard.core.schema import ResultsEnvelope

#: Where the table lives in the results store (its root, beside the ``org/model/`` folders).
CONTENTS_PATH = "contents.parquet"
#: The schema's version, in the Parquet schema metadata under :data:`METADATA_KEY`.  Version 2
#: (issue 32) moved a track's draws from ``record_json`` to a binary ``draws`` column: a
#: reader of version 1 would find intervals without draws (no tiers), so it refuses the table and
#: reads every results file instead.
CONTENTS_FORMAT = "leaderboard-contents/2"
#: The versions this reader accepts (a version-1 row keeps its draws in ``record_json``).
READABLE_CONTENTS_FORMATS = ("leaderboard-contents/1", CONTENTS_FORMAT)
METADATA_KEY = b"leaderboard-contents"
#: The largest contents file a reader accepts (checked before reading).
CONTENTS_MAX_BYTES = 512 * 2**20

Row = dict[str, Any]


def column(name: str, kind: pa.DataType, description: str) -> pa.Field:
    """A nullable column with its description (kept in the Parquet file's field metadata)."""
    return pa.field(name, kind, nullable=True, metadata={"description": description})


#: Who, what, on which data: the columns every row starts with.
HEAD_COLUMNS: tuple[pa.Field, ...] = (
    column("model", pa.string(), "model id on the Hugging Face Hub"),
    column("revision", pa.string(), "the model's commit"),
    column("precision", pa.string(), "the dtype the weights ran in (float32 on CPU)"),
    column("track", pa.string(), "the track (the registry's names)"),
    column(
        "setting",
        pa.string(),
        "the row's setting within its track (a few-shot setting such as 0shot, a context setting "
        "such as 10k, a mode such as meta)",
    ),
    column("num_fewshot", pa.int64(), "few-shot examples per prompt"),
    column("variant", pa.string(), "the part of the track the run covered (e.g. wic-sa); null: all"),
    column("data", pa.string(), "hub (the official data) | sample | local:<name> | hub:<org>/<name>"),
    column("limit", pa.float64(), "items per task the run was limited to (null: all)"),
    column("comparable", pa.bool_(), "ranked by default: a full run on the official data"),
)
#: With what, when, at what cost, how to run it again, where: the columns every row ends with.
TAIL_COLUMNS: tuple[pa.Field, ...] = (
    column("requested_precision", pa.string(), "the precision the request asked for"),
    column("params_b", pa.float64(), "parameters, billions"),
    column("model_type", pa.string(), "pretrained | instruction-tuned | …"),
    column("license", pa.string(), "the model's licence"),
    column("architecture", pa.string(), "the model class (LlamaForCausalLM …)"),
    column("harness", pa.string(), "lm-eval and its version"),
    column("backend", pa.string(), "the worker's model backend (hf, hf-fast, vllm, a track's class)"),
    column("lm_eval_version", pa.string(), "lm-eval's version"),
    column("transformers_version", pa.string(), "transformers' version"),
    column("torch_version", pa.string(), "torch's version"),
    column("datasets_version", pa.string(), "datasets' version"),
    column("project_version", pa.string(), "this project's version (and commit)"),
    column("device", pa.string(), "cpu | cuda | cuda:N"),
    column("hardware", pa.string(), "the machine the run used"),
    column("batch_size", pa.string(), "the batch size asked (auto: lm-eval's probe)"),
    column("chat_template", pa.bool_(), "prompts rendered with the model's chat template"),
    column("bootstrap_iters", pa.int64(), "bootstrap draws behind each stderr"),
    column("max_gen_toks", pa.int64(), "a cap on generated tokens (smoke runs only)"),
    column("started_at", pa.timestamp("s", tz="UTC"), "when the harness started"),
    column("finished_at", pa.timestamp("s", tz="UTC"), "when the harness finished"),
    column("duration_s", pa.float64(), "wall time of the harness call, model load included"),
    column("model_load_s", pa.float64(), "wall time loading the model"),
    column("setup_s", pa.float64(), "wall time loading the tasks and building the requests"),
    column("loglikelihood_s", pa.float64(), "wall time of the log-likelihood phase"),
    column("generation_s", pa.float64(), "wall time of the generation phase"),
    column("postprocess_s", pa.float64(), "wall time after the last model call (metrics, bootstrap)"),
    column("tokens", pa.int64(), "tokens the model processed (forwards with padding, prompts, answers)"),
    column("generated_tokens", pa.int64(), "tokens generated"),
    column("gpus", pa.int64(), "GPUs the run held (0 on CPU)"),
    column("gpu_hours", pa.float64(), "wall time × GPUs, in hours (null on CPU)"),
    column("input_tokens", pa.int64(), "tokens the model read, unpadded, by the run's tokenizer (issue 33)"),
    column("output_tokens", pa.int64(), "tokens of the generated answers, by the run's tokenizer"),
    column("reasoning_tokens", pa.int64(), "the part of output_tokens inside kept <think> blocks"),
    column("scored_items", pa.int64(), "items the harness scored (every document of every harness task)"),
    column(
        "energy_kwh",
        pa.float64(),
        "the GPUs' energy by NVML's counter, idle power × time subtracted (null: not measured)",
    ),
    column("energy_idle_kwh", pa.float64(), "the idle power × wall time subtracted from the counters' kWh"),
    column("wh_per_1000_items", pa.float64(), "energy_kwh per 1,000 scored items, in Wh"),
    column("energy_note", pa.string(), "how the energy was measured, or why it was not ('not measured …')"),
    column("gpu_model", pa.string(), "the GPUs the energy was measured on (NVML's name)"),
    column("lm_eval_command", pa.string(), "the equivalent plain lm_eval command line"),
    column("request_id", pa.string(), "the queue request that asked for the run"),
    column("worker_id", pa.string(), "the worker that ran it"),
    column("results_path", pa.string(), "the results file, in the results store"),
    column("results_version", pa.string(), "the store's version of that file when the row was built"),
    column("details_path", pa.string(), "the per-sample details folder, in the details store"),
    column("run_json", pa.string(), "the results file's run block, verbatim (JSON)"),
)
SHARED_NAMES = frozenset(f.name for f in (*HEAD_COLUMNS, *TAIL_COLUMNS))
#: The row order: one run's rows together, runs by track, model and setting.
SORT_KEYS = ("track", "model", "revision", "precision", "num_fewshot", "variant", "setting", "results_path")


@dataclass(frozen=True)
class TrackContents:
    """A track's part of the contents table (what ``TrackSpec.contents`` names).

    ``columns``: its own columns (names unique across tracks and apart from the shared ones).
    ``rows(results)``: the rows of one parsed results file (its results type), each with
    ``setting`` and any of its columns; the shared columns are filled here.
    """

    columns: tuple[pa.Field, ...]
    rows: Callable[[ResultsEnvelope], list[Row]]


class ContentsError(MalformedFileError):
    """The contents file cannot be used (not Parquet, another format): rebuild it."""


# --------------------------------------------------------------------------- the schema


def track_contents(registry: TrackRegistry | None = None) -> dict[str, TrackContents]:
    """The contents part of every registered track that has one, by track name (registry order)."""
    parts = {}
    for spec in registry or track_registry():
        part = spec.load("contents")
        if part is not None:
            parts[spec.name] = part
    return parts


def contents_schema(registry: TrackRegistry | None = None) -> pa.Schema:
    """The table's schema: the head columns, each track's columns (registry order), the tail columns.

    Raises :class:`ValueError` when two tracks (or a track and the shared columns) name the same column.
    """
    owner: dict[str, str] = {name: "the shared columns" for name in SHARED_NAMES}
    fields = list(HEAD_COLUMNS)
    for track, part in track_contents(registry).items():
        for field in part.columns:
            if field.name in owner:
                raise ValueError(f"contents column {field.name!r} of {track} is also in {owner[field.name]}")
            owner[field.name] = track
            fields.append(field)
    fields += TAIL_COLUMNS
    header = json.dumps({"format": CONTENTS_FORMAT})
    return pa.schema(fields, metadata={METADATA_KEY: header.encode()})


# --------------------------------------------------------------------------- rows


def _timestamp(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def variant_of(path: str, results: ResultsEnvelope) -> str | None:
    """The variant a results file's name carries (``…_0shot-wic-sa.json`` → ``wic-sa``), None for all."""
    name = path.rsplit("/", 1)[-1].removesuffix(".json")
    label = run_label(results.track, results.run.num_fewshot, None)
    _, found, rest = name.partition(f"_{results.model.precision}_{label}")
    if not found or not rest.startswith("-"):
        return None
    return rest[1:] or None


def shared_values(results: ResultsEnvelope, path: str, version: str | None) -> Row:
    """The shared columns of every row of one results file."""
    model, run = results.model, results.run
    cost, recipe = run.cost, run.recipe
    versions = run.versions
    return {
        "model": model.id,
        "revision": model.revision,
        "precision": model.precision,
        "track": results.track,
        "num_fewshot": run.num_fewshot,
        "variant": variant_of(path, results),
        "data": run.data,
        "limit": None if run.limit is None else float(run.limit),
        "comparable": results.comparable,
        "requested_precision": run.requested_precision,
        "params_b": model.params_b,
        "model_type": model.model_type,
        "license": model.license,
        "architecture": model.architecture,
        "harness": run.harness,
        "backend": run.backend,
        "lm_eval_version": versions.get("lm_eval"),
        "transformers_version": versions.get("transformers"),
        "torch_version": versions.get("torch"),
        "datasets_version": versions.get("datasets"),
        "project_version": versions.get("evalita-llm-leaderboard"),
        "device": run.device,
        "hardware": run.hardware,
        "batch_size": None if run.batch_size is None else str(run.batch_size),
        "chat_template": run.chat_template,
        "bootstrap_iters": run.bootstrap_iters,
        "max_gen_toks": run.max_gen_toks,
        "started_at": _timestamp(run.started_at),
        "finished_at": _timestamp(run.finished_at),
        "duration_s": run.duration_s,
        "model_load_s": run.model_load_s,
        "setup_s": cost.setup_s if cost else None,
        "loglikelihood_s": cost.loglikelihood_s if cost else None,
        "generation_s": cost.generation_s if cost else None,
        "postprocess_s": cost.postprocess_s if cost else None,
        "tokens": cost.tokens if cost else None,
        "generated_tokens": cost.generated_tokens if cost else None,
        "gpus": cost.gpus if cost else None,
        "gpu_hours": cost.gpu_hours if cost else None,
        "input_tokens": cost.input_tokens if cost else None,
        "output_tokens": cost.output_tokens if cost else None,
        "reasoning_tokens": cost.reasoning_tokens if cost else None,
        "scored_items": cost.scored_items if cost else None,
        "energy_kwh": cost.kwh if cost else None,
        "energy_idle_kwh": cost.energy.idle_kwh if cost and cost.energy else None,
        "wh_per_1000_items": cost.wh_per_thousand_items if cost else None,
        "energy_note": cost.energy.note if cost and cost.energy else None,
        "gpu_model": cost.energy.gpu_model if cost and cost.energy else None,
        "lm_eval_command": recipe.command if recipe else None,
        "request_id": run.request_id,
        "worker_id": run.worker_id,
        "results_path": path,
        "results_version": version,
        "details_path": run.details_path,
        "run_json": json.dumps(run.model_dump(mode="json"), ensure_ascii=False, sort_keys=True),
    }


def rows_of(
    results: ResultsEnvelope, path: str, version: str | None, registry: TrackRegistry | None = None
) -> list[Row]:
    """The rows of one parsed results file: its track's rows, each with the shared columns.

    A track without a contents part gets one row of shared columns (its setting empty).
    """
    part = track_contents(registry).get(results.track)
    shared = shared_values(results, path, version)
    own = part.rows(results) if part is not None else [{}]
    rows = []
    for row in own:
        clash = SHARED_NAMES.intersection(row) - {"setting", "comparable"}
        if clash:
            raise ValueError(f"{results.track} rows may not set shared columns {sorted(clash)}")
        rows.append({**shared, **row})
    return rows


# --------------------------------------------------------------------------- the table


def table_of(rows: Iterable[Row], schema: pa.Schema) -> pa.Table:
    """Rows as a table of ``schema`` (a column a row lacks is null), in :data:`SORT_KEYS` order."""
    return _sorted(pa.Table.from_pylist(list(rows), schema=schema))


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by([(key, "ascending") for key in SORT_KEYS]) if table.num_rows else table


def to_parquet(table: pa.Table) -> bytes:
    """The table as Parquet bytes (zstd), the schema's metadata kept."""
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def read_table(data: bytes, path: str = CONTENTS_PATH, columns: Iterable[str] | None = None) -> pa.Table:
    """A contents file as a table; :class:`ContentsError` if it is not one (not Parquet, another format).

    ``columns``: read only these (those the file has; ``results_path`` always): at 20,000 rows the
    columns a reader does not need are most of the file's decoded size."""
    try:
        source = pq.ParquetFile(pa.BufferReader(data))  # read in place (a file object copies each page)
        names = None
        if columns is not None:
            wanted = {"results_path", *columns}
            names = [name for name in source.schema_arrow.names if name in wanted]
        table = source.read(columns=names)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ContentsError(path, f"not a Parquet file: {exc}") from None
    if format_of(table.schema) not in READABLE_CONTENTS_FORMATS:
        raise ContentsError(path, f"not a {' or '.join(READABLE_CONTENTS_FORMATS)} table")
    if "results_path" not in table.column_names:
        raise ContentsError(path, "it has no results_path column")
    return table


def format_of(schema: pa.Schema) -> str | None:
    """The contents format a table's schema says it is in (:data:`CONTENTS_FORMAT`…), None if none.

    Reads only the schema's metadata: ``format_of(pq.read_schema(path))`` tells an older table
    from a current one without decoding a row (a bench store's table written before a version)."""
    try:
        header = json.loads((schema.metadata or {}).get(METADATA_KEY, b"{}"))
    except ValueError:
        return None
    found = header.get("format") if isinstance(header, dict) else None
    return found if isinstance(found, str) else None


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` in ``schema``: a missing column null, an unknown one dropped, types cast.

    So a table written before a track (or a column) was added merges with today's rows.
    """
    columns = []
    for field in schema:
        if field.name in table.column_names:
            columns.append(table.column(field.name).cast(field.type))
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def with_rows(existing: bytes | None, path: str, rows: Sequence[Row], schema: pa.Schema) -> bytes:
    """The contents file ``existing`` (None: none yet) with the rows of ``path`` replaced by ``rows``.

    Raises :class:`ContentsError` when ``existing`` is not a contents file (never overwritten:
    ``rebuild-contents`` replaces it).
    """
    new = table_of(rows, schema)
    if existing is None:
        return to_parquet(new)
    current = conform(read_table(existing), schema)
    # A row without a path (never written so) is dropped with the filter's nulls.
    kept = current.filter(pc.not_equal(current.column("results_path"), pa.scalar(path)))
    return to_parquet(_sorted(pa.concat_tables([kept, new])))
