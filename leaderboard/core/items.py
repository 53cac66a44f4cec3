"""Per-item sufficient statistics of a run: what every interval, tier and comparison is computed from.

Every metric the harness reports on a task is a function of the **sum over items** of a small
per-item vector (its *sufficient statistics*): accuracy or a mean of per-document scores
(ROUGE, EM, METEOR) is ``[value]``; any F1 over gold/prediction pairs is per label the item's
true positives and its gold + predicted counts; and so on (``leaderboard.core.metric_kinds``
defines each kind).  So a bootstrap resample is a weight vector ``w`` over items and every
resampled score is ``aggregate(w @ S)``: one matrix product for thousands of resamples.

Data model (shapes: ``P`` prompts, ``n`` items, ``d`` statistics per item):

* :class:`TaskItems` — one task of one run: ``stats`` ``(n, P, d)``; the items are identified by
  ``(part, doc_id)``, sorted by part then doc id (``part_index`` ``(n,)`` into ``parts``,
  ``doc_ids`` ``(n,)``), the same items for every prompt.  ``parts`` are the task's strata
  (a NER task's three text domains), ``("",)`` for a task without any.
  ``clusters`` (optional, ``(n,)`` codes into ``cluster_names``) groups items that are not
  independent — the questions of one book, the pairs of one lemma — so the bootstrap
  draws them together (``leaderboard.core.uncertainty``).
* :class:`RunItems` — every task of one run that has per-item data.

File (one per run, ``items.parquet`` beside the run's details; docs/DESIGN.md): a Parquet table
with one row per (task, prompt, part, doc id) — columns ``task``, ``prompt``, ``part``
(dictionary-encoded strings, ``""`` for no part), ``doc_id`` (int64), ``stats`` (list<float64>,
``d`` values) — sorted by task, prompt, part, doc id, and in the schema's key-value metadata
under ``leaderboard-items`` a JSON header: ``{"format": "leaderboard-items/1", "track": …,
"tasks": {task: {"metric": kind, "labels": […], "width": d, "prompts": […], "parts": […]}}}``;
a task with clusters adds ``"clusters": {"names": […], "of_item": [code per item, in (part,
doc id) order]}`` to its entry (a reader that predates clusters ignores it).

Pure: no storage access; :func:`items_to_parquet` returns bytes, :func:`items_from_parquet`
takes bytes.  A malformed file raises :class:`eval_queue.errors.MalformedFileError`.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from eval_queue.errors import MalformedFileError
from leaderboard.core.summary import ITEMS_FILE_NAME

ITEMS_FORMAT = "leaderboard-items/1"
_META_KEY = b"leaderboard-items"
NO_PART = ""


class ItemId(NamedTuple):
    """One item of a task: its part (stratum, ``""`` when the task has none) and document id."""

    part: str
    doc_id: int


def _frozen(array: NDArray[Any]) -> NDArray[Any]:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class TaskItems:
    """One task of one run: per prompt and item, the metric's sufficient statistics.

    ``stats[i, p]`` is item ``i``'s vector under prompt ``prompts[p]`` (items first: a resample's
    sums are ``W @ stats.reshape(n, -1)``); items are sorted by
    ``(part_index, doc_ids)`` and unique; doc ids are ≥ 0 and statistics finite.  ``metric`` names
    a ``MetricKind``; ``labels`` is the
    label set the statistics are over (F1 kinds; ``()`` otherwise), kept so a reader can say
    what each column means.
    """

    task: str
    metric: str
    labels: tuple[str, ...]
    prompts: tuple[str, ...]
    parts: tuple[str, ...]
    part_index: NDArray[np.int16]
    doc_ids: NDArray[np.int64]
    stats: NDArray[np.float64]
    clusters: NDArray[np.int64] | None = None
    cluster_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = self.doc_ids.shape[0]
        if self.clusters is not None:
            if self.clusters.shape != (n,) or not self.cluster_names:
                raise ValueError(f"{self.task}: clusters shape {self.clusters.shape} for {n} items")
            if self.clusters.min() < 0 or self.clusters.max() >= len(self.cluster_names):
                raise ValueError(
                    f"{self.task}: a cluster code is not among the {len(self.cluster_names)} names"
                )
            _frozen(self.clusters)
        if self.stats.ndim != 3 or self.stats.shape[:2] != (n, len(self.prompts)):
            raise ValueError(
                f"{self.task}: stats shape {self.stats.shape} is not (items={n}, prompts={len(self.prompts)}, d)"
            )
        if self.part_index.shape != (n,) or not self.parts:
            raise ValueError(f"{self.task}: part_index shape {self.part_index.shape}, parts {self.parts}")
        if len(set(self.prompts)) != len(self.prompts) or len(set(self.parts)) != len(self.parts):
            raise ValueError(f"{self.task}: repeated prompt or part names")
        if n == 0:
            raise ValueError(f"{self.task}: no items")
        if n > 1:
            same_part = self.part_index[1:] == self.part_index[:-1]
            ordered = (self.part_index[1:] > self.part_index[:-1]) | (
                same_part & (self.doc_ids[1:] > self.doc_ids[:-1])
            )
            if not ordered.all():
                raise ValueError(f"{self.task}: items are not unique and sorted by (part, doc_id)")
        if self.part_index.min() < 0 or self.part_index.max() >= len(self.parts):
            raise ValueError(f"{self.task}: part_index out of range")
        if self.doc_ids.min() < 0 or self.doc_ids.max() >= 1 << 48:  # keys() packs them in 48 bits
            raise ValueError(f"{self.task}: doc ids must be in 0 … 2**48 − 1")
        if not np.isfinite(self.stats).all():
            raise ValueError(f"{self.task}: a statistic is not a finite number")
        # Frozen like the dataclass: the arrays are made read-only (a caller's too).
        for array in (self.part_index, self.doc_ids, self.stats):
            _frozen(array)

    @classmethod
    def build(
        cls,
        task: str,
        metric: str,
        prompts: Mapping[str, Mapping[ItemId, Sequence[float]]],
        *,
        labels: Sequence[str] = (),
        parts: Sequence[str] | None = None,
        clusters: Mapping[ItemId, str] | None = None,
    ) -> TaskItems:
        """From ``{prompt: {ItemId: stats}}`` (every prompt with the same items; any order).

        ``parts`` fixes the order of the parts (default: sorted names); the stats must all
        have the same length.  ``clusters`` names each item's cluster (every item one).
        """
        if not prompts:
            raise ValueError(f"{task}: no prompts")
        keys = [set(per_item) for per_item in prompts.values()]
        if any(k != keys[0] for k in keys[1:]):
            raise ValueError(f"{task}: the prompts were not scored on the same items")
        part_names = tuple(parts) if parts is not None else tuple(sorted({item.part for item in keys[0]}))
        order = {name: i for i, name in enumerate(part_names)}
        try:
            items = sorted(keys[0], key=lambda item: (order[item.part], item.doc_id))
        except KeyError as exc:
            raise ValueError(f"{task}: item of unknown part {exc.args[0]!r}") from None
        stats = np.array(
            [
                [np.asarray(per_item[item], dtype=np.float64) for per_item in prompts.values()]
                for item in items
            ],
            dtype=np.float64,
        )
        if stats.ndim != 3:
            raise ValueError(f"{task}: the items' statistics do not all have the same length")
        codes, names = None, ()
        if clusters is not None:
            missing = [item for item in items if item not in clusters]
            if missing:
                raise ValueError(f"{task}: item {missing[0]} has no cluster")
            names = tuple(sorted({str(clusters[item]) for item in items}))
            index = {name: i for i, name in enumerate(names)}
            codes = np.array([index[str(clusters[item])] for item in items], dtype=np.int64)
        return cls(
            task=task,
            metric=metric,
            labels=tuple(str(label) for label in labels),
            prompts=tuple(prompts),
            parts=part_names,
            part_index=np.array([order[item.part] for item in items], dtype=np.int16),
            doc_ids=np.array([item.doc_id for item in items], dtype=np.int64),
            stats=stats,
            clusters=codes,
            cluster_names=names,
        )

    @property
    def n_clusters(self) -> int | None:
        """How many clusters the items form (``None``: independent items)."""
        return None if self.clusters is None else len(np.unique(self.clusters))

    @property
    def n_items(self) -> int:
        return int(self.doc_ids.shape[0])

    @property
    def width(self) -> int:
        return int(self.stats.shape[2])

    def prompt_stats(self, prompt: str) -> NDArray[np.float64]:
        """``(n, d)``: every item's statistics under ``prompt``."""
        return self.stats[:, self.prompts.index(prompt)]

    @cached_property
    def part_slices(self) -> tuple[slice, ...]:
        """The contiguous block of items of each part, in ``parts`` order (empty if a part has none)."""
        bounds = np.searchsorted(self.part_index, np.arange(len(self.parts) + 1))
        return tuple(slice(int(a), int(b)) for a, b in itertools.pairwise(bounds))

    @cached_property
    def fingerprint(self) -> str:
        """A digest of the task name, its item ids and clusters: equal for two runs on the same items."""
        plain = item_fingerprint(self.task, self.parts, self.part_index, self.doc_ids)
        if self.clusters is None:
            return plain  # what every file before clusters gave: their draws are unchanged
        digest = hashlib.blake2b(plain.encode(), digest_size=16)
        digest.update(json.dumps([self.cluster_names[c] for c in self.clusters.tolist()]).encode())
        return digest.hexdigest()

    def item_ids(self, mask: NDArray[np.bool_] | None = None) -> tuple[ItemId, ...]:
        """The items (all, or where ``mask`` is true) as :class:`ItemId`."""
        index = self.part_index if mask is None else self.part_index[mask]
        docs = self.doc_ids if mask is None else self.doc_ids[mask]
        return tuple(ItemId(self.parts[p], d) for p, d in zip(index.tolist(), docs.tolist(), strict=True))

    def keys(self) -> NDArray[np.int64]:
        """One sortable int per item (part in the high bits): what intersections are computed on."""
        return (self.part_index.astype(np.int64) << 48) | self.doc_ids

    def restricted(self, keep: NDArray[np.bool_], prompts: Sequence[str] | None = None) -> TaskItems:
        """The same task on the items where ``keep`` is true (and only ``prompts``, if given)."""
        rows = [self.prompts.index(p) for p in prompts] if prompts is not None else slice(None)
        stats = self.stats[keep][:, rows]
        return TaskItems(
            task=self.task,
            metric=self.metric,
            labels=self.labels,
            prompts=tuple(prompts) if prompts is not None else self.prompts,
            parts=self.parts,
            part_index=self.part_index[keep].copy(),
            doc_ids=self.doc_ids[keep].copy(),
            stats=np.ascontiguousarray(stats),
            clusters=None if self.clusters is None else self.clusters[keep].copy(),
            cluster_names=self.cluster_names,
        )


def item_fingerprint(
    task: str, parts: Sequence[str], part_index: NDArray[np.integer], doc_ids: NDArray[np.integer]
) -> str:
    """Blake2b-128 of ``task``, the part names and the sorted ``(part, doc_id)`` items, hex."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(json.dumps([task, list(parts)]).encode())
    digest.update(np.ascontiguousarray(part_index, dtype="<i2").tobytes())
    digest.update(np.ascontiguousarray(doc_ids, dtype="<i8").tobytes())
    return digest.hexdigest()


@dataclass(frozen=True, eq=False)
class RunItems:
    """The per-item data of one run: its tasks by id (only those with per-item data)."""

    track: str
    tasks: Mapping[str, TaskItems] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for task_id, task in self.tasks.items():
            if task.task != task_id:
                raise ValueError(f"task {task.task!r} filed under {task_id!r}")
        object.__setattr__(self, "tasks", MappingProxyType(dict(self.tasks)))


# --------------------------------------------------------------------------- file


def items_to_parquet(run: RunItems) -> bytes:
    """The run's per-item file (module docstring), zstd-compressed Parquet bytes."""
    if not run.tasks:
        raise ValueError("a run without any task has no per-item file")
    tasks = [run.tasks[name] for name in sorted(run.tasks)]
    header = {
        "format": ITEMS_FORMAT,
        "track": run.track,
        "tasks": {
            t.task: {
                "metric": t.metric,
                "labels": list(t.labels),
                "width": t.width,
                "prompts": list(t.prompts),
                "parts": list(t.parts),
                **(
                    {"clusters": {"names": list(t.cluster_names), "of_item": t.clusters.tolist()}}
                    if t.clusters is not None
                    else {}
                ),
            }
            for t in tasks
        },
    }
    # Codes index the sorted names, so sorting rows by code sorts them by name: the order
    # the reader expects (it re-sorts a file written otherwise).
    task_names = [t.task for t in tasks]
    prompt_names = sorted({p for t in tasks for p in t.prompts})
    part_names = sorted({p for t in tasks for p in t.parts})
    columns: dict[str, list[NDArray[Any]]] = {"task": [], "prompt": [], "part": [], "doc": [], "stats": []}
    for code, t in enumerate(tasks):
        part_of_item = np.array([part_names.index(name) for name in t.parts], dtype=np.int32)[t.part_index]
        for p, prompt in enumerate(t.prompts):
            columns["task"].append(np.full(t.n_items, code, dtype=np.int32))
            columns["prompt"].append(np.full(t.n_items, prompt_names.index(prompt), dtype=np.int32))
            columns["part"].append(part_of_item)
            columns["doc"].append(t.doc_ids)
            columns["stats"].append(t.stats[:, p])
    task, prompt, part, doc = (np.concatenate(columns[k]) for k in ("task", "prompt", "part", "doc"))
    order = np.lexsort((doc, part, prompt, task))
    widths = np.concatenate([np.full(s.shape[0], s.shape[1], dtype=np.int64) for s in columns["stats"]])
    flat = np.concatenate([s.reshape(-1) for s in columns["stats"]])
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])[order]
    widths = widths[order]
    offsets = np.concatenate([[0], np.cumsum(widths)]).astype(np.int32)
    gather = np.repeat(starts - offsets[:-1], widths) + np.arange(offsets[-1])

    def dictionary(codes: NDArray[np.int32], names: list[str]) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(pa.array(codes[order]), pa.array(names, pa.string()))

    table = pa.table(
        {
            "task": dictionary(task, task_names),
            "prompt": dictionary(prompt, prompt_names),
            "part": dictionary(part, part_names),
            "doc_id": pa.array(doc[order]),
            "stats": pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat[gather])),
        }
    )
    table = table.replace_schema_metadata({_META_KEY: json.dumps(header, ensure_ascii=False).encode()})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", write_statistics=False)
    return sink.getvalue()


def _codes(column: pa.ChunkedArray, names: Sequence[str], path: str, what: str) -> NDArray[np.int64]:
    """The column's values as indices into ``names`` (which the header lists)."""
    array = column.combine_chunks()
    if not pa.types.is_dictionary(array.type):
        array = array.dictionary_encode()
    dictionary = array.dictionary.to_pylist()
    lookup = np.array([names.index(name) if name in names else -1 for name in dictionary], dtype=np.int64)
    if (lookup < 0).any():
        unknown = sorted({d for d, c in zip(dictionary, lookup, strict=True) if c < 0})
        raise MalformedFileError(path, f"{what} {unknown[:3]} not in the header")
    if array.null_count:
        raise MalformedFileError(path, f"null {what}")
    return lookup[array.indices.to_numpy(zero_copy_only=False)]


def _sorted_rows(*columns: NDArray[np.int64]) -> bool:
    """Whether the rows are in strictly increasing lexicographic order of ``columns``."""
    if columns[0].size < 2:
        return True
    increasing = np.zeros(columns[0].size - 1, dtype=bool)
    tied = np.ones(columns[0].size - 1, dtype=bool)
    for column in columns:
        step = np.diff(column)
        increasing |= tied & (step > 0)
        tied &= step == 0
    return bool(increasing.all())


#: The largest decoded size a per-item file may announce (a full run of the default track: about 3 MB).
MAX_DECODED_BYTES = 256 * 2**20


def items_from_parquet(data: bytes, path: str = ITEMS_FILE_NAME) -> RunItems:
    """Read a per-item file; :class:`MalformedFileError` says what is wrong with it.

    The file's own metadata is checked before anything is decoded: one that announces more
    than :data:`MAX_DECODED_BYTES` is refused unread (a few KB of zstd can expand a lot).
    """
    try:
        source = pq.ParquetFile(io.BytesIO(data))
        meta = source.metadata
        decoded = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
        if decoded > MAX_DECODED_BYTES:
            raise MalformedFileError(
                path, f"announces {decoded:,} decoded bytes, more than {MAX_DECODED_BYTES:,}"
            )
        table = source.read()
        header = json.loads((table.schema.metadata or {})[_META_KEY])
    except (pa.ArrowException, OSError, KeyError, ValueError) as exc:
        raise MalformedFileError(path, f"not a per-item file: {str(exc)[:200]}") from None
    if not isinstance(header, dict) or header.get("format") != ITEMS_FORMAT:
        raise MalformedFileError(
            path,
            f"format {header.get('format') if isinstance(header, dict) else None!r}, expected {ITEMS_FORMAT}",
        )
    try:
        specs: dict[str, dict[str, Any]] = header["tasks"]
        task_names = list(specs)
        prompt_names = sorted({p for spec in specs.values() for p in spec["prompts"]})
        part_names = sorted({p for spec in specs.values() for p in spec["parts"]})
        task = _codes(table.column("task"), task_names, path, "task")
        prompt = _codes(table.column("prompt"), prompt_names, path, "prompt")
        part = _codes(table.column("part"), part_names, path, "part")
        doc = table.column("doc_id").combine_chunks().to_numpy(zero_copy_only=False).astype(np.int64)
        stats_column = table.column("stats").combine_chunks()
        offsets = stats_column.offsets.to_numpy(zero_copy_only=False)
        values = stats_column.values.to_numpy(zero_copy_only=False)
    except (KeyError, TypeError, pa.ArrowException) as exc:
        raise MalformedFileError(
            path, f"missing or mistyped column or header field: {str(exc)[:200]}"
        ) from None
    # Rows sorted by (task, prompt, part, doc): what the writer writes; another order is sorted.
    if not _sorted_rows(task, prompt, part, doc):
        order = np.lexsort((doc, part, prompt, task))
        task, prompt, part, doc = task[order], prompt[order], part[order], doc[order]
        starts, ends = offsets[:-1][order], offsets[1:][order]
    else:
        starts, ends = offsets[:-1], offsets[1:]
    bounds = np.searchsorted(task, np.arange(len(task_names) + 1))
    tasks: dict[str, TaskItems] = {}
    for t, name in enumerate(task_names):
        tasks[name] = _task_block(
            path, name, specs[name], prompt_names, part_names, slice(bounds[t], bounds[t + 1]),
            prompt, part, doc, starts, ends, values,
        )  # fmt: skip
    return RunItems(track=str(header.get("track", "")), tasks=tasks)


def _task_block(
    path: str,
    name: str,
    spec: Mapping[str, Any],
    prompt_names: Sequence[str],
    part_names: Sequence[str],
    rows: slice,
    prompt: NDArray[np.int64],
    part: NDArray[np.int64],
    doc: NDArray[np.int64],
    starts: NDArray[np.int64],
    ends: NDArray[np.int64],
    values: NDArray[np.float64],
) -> TaskItems:
    width = int(spec["width"])
    prompts = [str(p) for p in spec["prompts"]]
    parts = [str(p) for p in spec["parts"]]
    n_rows = rows.stop - rows.start
    if n_rows == 0 or n_rows % len(prompts):
        raise MalformedFileError(path, f"{name}: {n_rows} rows for {len(prompts)} prompts")
    n = n_rows // len(prompts)
    if not (ends[rows] - starts[rows] == width).all():
        raise MalformedFileError(path, f"{name}: a row's stats do not have {width} values")
    block_prompt = prompt[rows].reshape(len(prompts), n)
    block_part = part[rows].reshape(len(prompts), n)
    block_doc = doc[rows].reshape(len(prompts), n)
    # Rows are sorted by prompt name; the header gives the prompts' order.
    by_name = sorted(range(len(prompts)), key=lambda i: prompts[i])
    expected = np.array([prompt_names.index(prompts[i]) for i in by_name])
    if not (block_prompt == expected[:, None]).all():
        raise MalformedFileError(path, f"{name}: the prompts were not scored on the same items")
    if not ((block_part == block_part[0]).all() and (block_doc == block_doc[0]).all()):
        raise MalformedFileError(path, f"{name}: the prompts were not scored on the same items")
    # Items sorted by the part's place in the header, then doc id (file rows: by part name).
    local = np.array(
        [parts.index(part_names[c]) if part_names[c] in parts else -1 for c in range(len(part_names))]
    )
    part_index = local[block_part[0]]
    if (part_index < 0).any():
        raise MalformedFileError(path, f"{name}: an item's part is not among {parts}")
    item_order = np.lexsort((block_doc[0], part_index))
    # Where each (prompt in the header's order, item) row's stats start in ``values``.
    first = starts[rows].reshape(len(prompts), n)[np.argsort(by_name)]
    if not (item_order == np.arange(n)).all():
        first = first[:, item_order]
    stats = values[first.T[:, :, None] + np.arange(width)]  # (n, P, d)
    clusters, cluster_names = None, ()
    if "clusters" in spec:
        try:
            cluster_names = tuple(str(c) for c in spec["clusters"]["names"])
            clusters = np.asarray(spec["clusters"]["of_item"], dtype=np.int64)
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedFileError(path, f"{name}: malformed clusters: {str(exc)[:200]}") from None
    try:
        return TaskItems(
            task=name,
            metric=str(spec["metric"]),
            labels=tuple(str(label) for label in spec.get("labels", ())),
            prompts=tuple(prompts),
            parts=tuple(parts),
            part_index=part_index[item_order].astype(np.int16),
            doc_ids=block_doc[0][item_order].copy(),
            stats=stats,
            clusters=clusters,
            cluster_names=cluster_names,
        )
    except ValueError as exc:
        raise MalformedFileError(path, str(exc)[:500]) from None
