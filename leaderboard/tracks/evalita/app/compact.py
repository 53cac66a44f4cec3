"""Runs' ``uncertainty`` blocks kept compactly in memory (the app's cold start from the contents table).

A results file's block holds fifty-odd intervals and, since issue 32, twenty-two kept draw sets
(the mean CPS's 1,000 resamples twice, each task's first 200 twice) as base64 text: about 47 KB a
run, as Python strings and tuples more.  At 20,000 runs that alone was more than the server's
memory target.  :class:`BlockBatch` takes the blocks of many runs (parsed JSON) and keeps

* their intervals as one float64 matrix per set of figure names (runs × figures × 2), read
  through :class:`IntervalRow`, a read-only mapping figure → (low, high);
* their draws as one float32 matrix per figure and length (the runs that kept it × resamples),
  read through :class:`DrawsRow`, a read-only mapping figure → :class:`~leaderboard.core.summary.KeptDraws`
  built on access (the very text the file held: base64 of the same bytes is one string), whose
  :meth:`DrawsRow.float32_values` is a row of the matrix itself;

(the draws come as each block's base64 text, or, from the contents table's ``draws`` column,
as float32 bytes for many runs at once: :meth:`BlockBatch.add_draws_column`, no text decoded);
each run's block a :class:`~leaderboard.core.summary.UncertaintySummary` made without
validation around them: the values are checked here, for all runs at once (finite draws,
finite ordered intervals, the header's types), and a block that fails is refused alone.
Readers see the block's own mapping API, so no view changes.
"""

from __future__ import annotations

import mmap
import tempfile
from array import array
from binascii import Error as Base64Error
from binascii import a2b_base64, b2a_base64
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from leaderboard.core.summary import KeptDraws, UncertaintySummary

#: The block's keys compacted; the others (method, seed, resamples, level…) are kept as they are.
_COMPACTED = ("intervals", "draws")


class IntervalRow(Mapping[str, tuple[float, float]]):
    """One run's intervals: figure → (low, high), a row of its batch's matrix (the names shared)."""

    __slots__ = ("_index", "_matrix", "_row")

    def __init__(self, index: Mapping[str, int], matrix: NDArray[np.float64], row: int) -> None:
        self._index, self._matrix, self._row = index, matrix, row

    def __getitem__(self, figure: str) -> tuple[float, float]:
        low, high = self._matrix[self._row, self._index[figure]].tolist()
        return (low, high)

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __repr__(self) -> str:
        return f"IntervalRow({dict(self)!r})"


class DrawsColumn:
    """One figure's kept draws of every run that kept them at one length: a float32 matrix
    (read-only), each run's key, and which row is whose (``row_of[slot]``; -1: none)."""

    __slots__ = ("_mapping", "keys", "matrix", "row_of")

    def __init__(self, matrix: NDArray[np.float32], keys: list[str], row_of: array[int]) -> None:
        matrix.flags.writeable = False
        # The mapping of a spilled matrix (None: in memory), whose touched pages :meth:`release` drops.
        self._mapping: mmap.mmap | None = getattr(matrix, "_mmap", None)
        # A plain ndarray view of a spilled (memory-mapped) matrix: the same pages, but a row read
        # costs a tenth of a ``np.memmap`` row's (no subclass object per row; 10,000 runs × 6 rows
        # for a custom average's draws).
        self.matrix, self.keys, self.row_of = np.asarray(matrix), keys, row_of

    def rows_of(self, slots: NDArray[np.int64]) -> NDArray[np.int64]:
        """The rows of the runs in ``slots`` (each holds one): ``row_of`` read in place as int64."""
        return np.frombuffer(self.row_of, dtype=np.int64)[slots]

    def release(self) -> None:
        """Drop the pages of a spilled matrix that a reader touched from the process's memory
        (``MADV_DONTNEED``): they stay in the page cache and the file, and a later read maps
        them again, so readers see the same values.  Mapped pages once touched count in the
        server's RSS (issue 32: 32 MB a task picked for a custom average at 10,000 models) until
        the kernel needs the memory.  Nothing to do for a matrix held in memory."""
        if self._mapping is not None:
            self._mapping.madvise(mmap.MADV_DONTNEED)


class DrawsRow(Mapping[str, KeptDraws]):
    """One run's kept draws: figure → :class:`KeptDraws`, rows of its batch's matrices."""

    __slots__ = ("_columns", "_slot")

    def __init__(self, columns: Mapping[str, DrawsColumn], slot: int) -> None:
        self._columns, self._slot = columns, slot

    def __getitem__(self, figure: str) -> KeptDraws:
        column = self._columns[figure]
        row = column.row_of[self._slot]
        text = b2a_base64(column.matrix[row].tobytes(), newline=False).decode("ascii")
        return KeptDraws.model_construct(key=column.keys[row], float32=text)

    @property
    def columns(self) -> Mapping[str, DrawsColumn]:
        """Figure → its column (shared by every run of the same layout)."""
        return self._columns

    @property
    def slot(self) -> int:
        """This run's slot in its batch (:meth:`DrawsColumn.rows_of`)."""
        return self._slot

    def float32_values(self, figure: str) -> NDArray[np.float32]:
        """``self[figure].float32_values()`` without the base64 round trip (a read-only row)."""
        column = self._columns[figure]
        return column.matrix[column.row_of[self._slot]]

    def kept(self, figure: str) -> tuple[str, NDArray[np.float32]] | None:
        """``figure``'s (key, float32 values), a row of its matrix; None when the run kept none."""
        column = self._columns.get(figure)
        if column is None:
            return None
        row = column.row_of[self._slot]
        return column.keys[row], column.matrix[row]

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __repr__(self) -> str:
        return f"DrawsRow({list(self._columns)!r})"


class _Rows:
    """Rows of ``width`` values of ``dtype`` appended as bytes, read back as one read-only matrix;
    which rows hold a value that is not finite (checked a chunk at a time, not row by row).

    ``spill``: the rows go to an unnamed temporary file a few MB at a time and are mapped from it,
    so that their pages are the page cache's until a reader touches them."""

    _CHUNK = 4 * 2**20

    def __init__(self, dtype: Any, width: int, *, spill: bool = False) -> None:
        self._dtype, self._width = np.dtype(dtype), width
        self._buffer = bytearray()
        self._written = 0  # rows already in the file
        # Closed by matrix(), once mapped (the mapping keeps the deleted file alive).
        self._file = tempfile.TemporaryFile(prefix="evalita-draws-") if spill else None  # noqa: SIM115
        self.slots: list[int] = []
        self.not_finite: list[int] = []

    def put(self, slot: int, raw: bytes | memoryview) -> int:
        """Append one row (its bytes, ``width`` values); its row number."""
        self._buffer += raw
        self.slots.append(slot)
        if self._file is not None and len(self._buffer) >= self._CHUNK:
            self._flush()
        return len(self.slots) - 1

    def put_many(self, slots: list[int], raw: bytes | memoryview) -> None:
        """Append ``len(slots)`` rows at once (their bytes, one after the other, in ``slots``' order)."""
        self.slots.extend(slots)
        if self._file is not None and len(raw) >= self._CHUNK:
            # Straight to the file (the rows kept so far first): no copy through the buffer.
            self._flush()
            self._check(np.frombuffer(raw, self._dtype).reshape(-1, self._width), self._written)
            self._file.write(raw)
            self._written += len(slots)
            return
        self._buffer += raw
        if self._file is not None and len(self._buffer) >= self._CHUNK:
            self._flush()

    def _flush(self) -> None:
        self._check(np.frombuffer(self._buffer, self._dtype).reshape(-1, self._width), self._written)
        assert self._file is not None
        self._file.write(self._buffer)
        self._written += len(self._buffer) // (self._dtype.itemsize * self._width)
        self._buffer = bytearray()

    def _check(self, rows: NDArray[Any], first: int) -> None:
        if not rows.size:  # nothing since the last flush (a batch of rows can end one exactly)
            return
        bad = np.flatnonzero(~np.isfinite(rows.reshape(len(rows), -1)).all(axis=1))
        self.not_finite.extend(self.slots[first + i] for i in bad.tolist())

    def matrix(self) -> NDArray[Any]:
        """Every row, ``(rows, width)``, read-only."""
        if self._file is None:
            rows = np.frombuffer(self._buffer, self._dtype).reshape(-1, self._width)
            rows.flags.writeable = False  # the bytearray's own bytes: nobody writes them
            self._check(rows, 0)
            return rows
        self._flush()
        self._file.flush()
        if not self._written:
            self._file.close()
            return np.empty((0, self._width), dtype=self._dtype)
        rows = np.memmap(self._file, dtype=self._dtype, mode="r", shape=(self._written, self._width))
        self._file.close()
        return rows


def kept_draws(summary: UncertaintySummary | None, figure: str) -> tuple[str, NDArray[np.float32]] | None:
    """A run's kept draws of ``figure`` as (key, float32 values as stored); None when it kept none.

    From a compact block, a row of its matrix (nothing decoded or copied: the ranking's tiers read
    every run's); from a parsed block, its text decoded."""
    if summary is None:
        return None
    if isinstance(summary.draws, DrawsRow):
        return summary.draws.kept(figure)
    kept = summary.draws.get(figure)
    return None if kept is None else (kept.key, kept.float32_values())


class KeptDrawsOf:
    """One figure's kept draws of many runs, located and not yet copied: per run its key and
    number of resamples (``None`` / ``-1``: it kept none), and :meth:`rows` to gather the values
    of many runs at once (one fancy index per matrix, not one array per run)."""

    __slots__ = ("_row", "_source", "_sources", "keys", "lengths")

    def __init__(self, n: int) -> None:
        self.keys: list[str | None] = [None] * n
        self.lengths = np.full(n, -1, dtype=np.int64)
        self._sources: list[NDArray[np.float32]] = []  # matrices (a parsed block's values: one row)
        self._source = np.full(n, -1, dtype=np.int64)
        self._row = np.zeros(n, dtype=np.int64)

    def _put(
        self,
        runs: list[int],
        keys: list[str],
        matrix: NDArray[np.float32],
        rows: list[int] | NDArray[np.int64],
    ) -> None:
        self._sources.append(matrix)
        for run, key in zip(runs, keys, strict=True):
            self.keys[run] = key
        self.lengths[runs] = matrix.shape[1]
        self._source[runs] = len(self._sources) - 1
        self._row[runs] = rows

    def rows(self, runs: NDArray[np.int64]) -> NDArray[np.float32]:
        """The float32 values of ``runs`` (each kept this figure, all with one length) ``(len(runs), B)``."""
        width = int(self.lengths[runs[0]]) if len(runs) else 0
        out = np.empty((len(runs), width), dtype=np.float32)
        sources = self._source[runs]
        for source in np.unique(sources).tolist():
            at = np.flatnonzero(sources == source)
            out[at] = self._sources[source][self._row[runs[at]]]
        return out


def locate_kept_draws(
    summaries: Sequence[UncertaintySummary | None], figures: Sequence[str]
) -> list[KeptDrawsOf]:
    """:func:`kept_draws` of every run for each of ``figures``, located at once: the runs of compact
    blocks by their shared layout (one lookup of the figure's column per layout, then a row
    number per run), a parsed block's text decoded.  The values are those :func:`kept_draws`
    returns (rows of the same matrices, or the same decoded text)."""
    n = len(summaries)
    found = [KeptDrawsOf(n) for _ in figures]
    layouts: dict[int, tuple[Mapping[str, DrawsColumn], list[int], list[int]]] = {}
    for i, summary in enumerate(summaries):
        if summary is None:
            continue
        draws = summary.draws
        if isinstance(draws, DrawsRow):
            group = layouts.get(id(draws.columns))
            if group is None:
                group = layouts[id(draws.columns)] = (draws.columns, [], [])
            group[1].append(i)
            group[2].append(draws.slot)
            continue
        for figure, out in zip(figures, found, strict=True):
            kept = kept_draws(summary, figure)
            if kept is not None:
                out._put([i], [kept[0]], kept[1].reshape(1, -1), [0])
    for columns, runs, slots in layouts.values():
        slot_array = np.asarray(slots, dtype=np.int64)
        for figure, out in zip(figures, found, strict=True):
            column = columns.get(figure)
            if column is not None:
                rows = column.rows_of(slot_array)
                keys = column.keys
                out._put(runs, [keys[row] for row in rows.tolist()], column.matrix, rows)
    return found


def release_spilled(summaries: Iterable[UncertaintySummary | None]) -> None:
    """Drop from memory the touched pages of every spilled draws matrix these runs' compact
    blocks read from (:meth:`DrawsColumn.release`): after a view has copied what it needed."""
    layouts: dict[int, Mapping[str, DrawsColumn]] = {}
    for summary in summaries:
        if summary is not None and isinstance(summary.draws, DrawsRow):
            layout = summary.draws.columns
            layouts.setdefault(id(layout), layout)  # thousands of runs share a few layouts
    released: set[int] = set()
    for layout in layouts.values():
        for column in layout.values():
            if id(column) not in released:
                released.add(id(column))
                column.release()


class BlockBatch:
    """The ``uncertainty`` blocks of many runs, compacted together (module docstring).

    :meth:`add` each block (parsed JSON; its slot is returned), then :meth:`build` once.  Each
    block's numbers are written into the batch's matrices as it is added, so no run's text or
    lists outlive its :meth:`add` (at 20,000 runs they were a GB, left to the allocator).
    ``spill(figure)``: keep that figure's draws in a memory-mapped temporary file rather than in
    memory (read from the page cache when a view asks for them).
    """

    def __init__(self, spill: Callable[[str], bool] | None = None) -> None:
        self._spill = spill
        self._headers: list[dict[str, Any]] = []
        self._errors: dict[int, ValueError] = {}
        #: figure names → their rows (runs × figures × 2); per slot, (names, row).
        self._intervals: dict[tuple[str, ...], _Rows] = {}
        self._interval_row: list[tuple[tuple[str, ...], int]] = []
        #: (figure, resamples) → its rows (runs × resamples) and each row's key; per slot, rows.
        self._draws: dict[tuple[str, int], tuple[_Rows, list[str]]] = {}
        self._draws_rows: list[tuple[tuple[str, int, int], ...]] = []
        #: One string per distinct draws key or header text (the same for thousands of runs).
        self._shared: dict[str, str] = {}

    def add(self, block: dict[str, Any]) -> int:
        """Take one block (its slot is returned); a block not shaped as one, or whose numbers are
        refused, is reported by :meth:`build` (its slot's entry is the error)."""
        slot = len(self._headers)
        header: dict[str, Any] = {}
        interval_row: tuple[tuple[str, ...], int] = ((), -1)
        draws_rows: tuple[tuple[str, int, int], ...] = ()
        try:
            # Text values (the method, the items file) one shared string each, as the draws' keys.
            header = {
                k: self._shared.setdefault(v, v) if isinstance(v, str) else v
                for k, v in block.items()
                if k not in _COMPACTED
            }
            interval_row = self._add_intervals(slot, block.get("intervals") or {})
            draws = block.get("draws") or {}
            draws_rows = tuple(self._add_draws(slot, figure, kept) for figure, kept in draws.items())
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            reason = exc if isinstance(exc, ValueError) else ValueError(f"not an uncertainty block ({exc!r})")
            self._errors[slot] = reason
        self._headers.append(header)
        self._interval_row.append(interval_row)
        self._draws_rows.append(draws_rows)
        return slot

    def _add_intervals(self, slot: int, intervals: dict[str, Any]) -> tuple[tuple[str, ...], int]:
        names = tuple(intervals)
        pairs = list(intervals.values())
        if not all(len(pair) == 2 for pair in pairs):
            raise ValueError("an interval is not a [low, high] pair")
        try:
            values = array("d", [x for pair in pairs for x in pair])
        except TypeError:
            raise ValueError("an interval's ends are not numbers") from None
        rows = self._intervals.get(names)
        if rows is None:
            rows = self._intervals[names] = _Rows(np.float64, 2 * len(names))
        return names, rows.put(slot, memoryview(values).cast("B"))

    def _add_draws(self, slot: int, figure: str, kept: dict[str, Any]) -> tuple[str, int, int]:
        try:
            raw = a2b_base64(kept["float32"], strict_mode=True)
        except Base64Error as exc:
            raise ValueError(f"draws of {figure!r} are not base64: {exc}") from None
        if len(raw) % 4:
            raise ValueError(f"draws of {figure!r}: {len(raw)} bytes are not whole float32 values")
        key = str(kept["key"])
        self._keys(figure, len(raw)).append(self._shared.setdefault(key, key))
        return figure, len(raw), self._draws[figure, len(raw)][0].put(slot, raw)

    def _keys(self, figure: str, size: int) -> list[str]:
        """The keys of ``figure``'s draws of ``size`` bytes, one per row (its rows made if new)."""
        found = self._draws.get((figure, size))
        if found is None:
            spill = self._spill is not None and self._spill(figure)
            found = self._draws[figure, size] = (_Rows("<f4", size // 4, spill=spill), [])
        return found[1]

    def add_draws_column(
        self,
        owners: NDArray[np.int64],
        figures: tuple[NDArray[np.int32], list[str]],
        keys: tuple[NDArray[np.int32], list[str]],
        values: pa.BinaryArray,
    ) -> None:
        """Take draw sets given as columns (the contents table's ``draws``): set ``j`` is the
        float32 bytes ``values[j]`` of the block in slot ``owners[j]`` (added without draws; a
        block's sets one after the other, in its order), its figure and key given as codes into
        distinct names.

        Each (figure, length) is copied into its matrix in one Arrow call, with no text decoded;
        a set that is not whole float32 values (or null) refuses its block alone."""
        (figure_codes, figure_names), (key_codes, key_names) = figures, keys
        sizes = pc.fill_null(pc.binary_length(values), 0).to_numpy().astype(np.int64)
        valid = (sizes % 4 == 0) & (sizes > 0)
        for j in np.flatnonzero(~valid).tolist():
            message = f"draws of {figure_names[figure_codes[j]]!r} are not whole float32 values"
            self._errors.setdefault(int(owners[j]), ValueError(message))
        group_of = figure_codes.astype(np.int64) * (int(sizes.max(initial=0)) + 1) + sizes
        self._add_layouts(owners, group_of, figure_names, figure_codes, sizes)
        shared_keys = [self._shared.setdefault(key, key) for key in key_names]
        # The sets' bytes in place: the binary array's offsets into its one data buffer.
        offsets = np.frombuffer(values.buffers()[1], np.int32)[
            values.offset : values.offset + len(values) + 1
        ]
        data = values.buffers()[2]
        for group in np.unique(group_of[valid]).tolist():
            members = np.flatnonzero((group_of == group) & valid)
            first = int(members[0])
            figure, size = figure_names[figure_codes[first]], int(sizes[first])
            self._keys(figure, size).extend([shared_keys[c] for c in key_codes[members].tolist()])
            self._draws[figure, size][0].put_many(
                owners[members].tolist(), _set_bytes(data, offsets, members, size)
            )

    def _add_layouts(
        self,
        owners: NDArray[np.int64],
        group_of: NDArray[np.int64],
        figure_names: list[str],
        figure_codes: NDArray[np.int32],
        sizes: NDArray[np.int64],
    ) -> None:
        """Each block's (figure, length) of its draw sets, in its order: its layout (see build).

        Most blocks share one layout (the same figures kept at the same lengths): it is computed once."""
        bounds = np.flatnonzero(np.diff(owners)) + 1
        counts = np.diff(np.concatenate(([0], bounds, [len(owners)])))
        if len(owners) and (counts == counts[0]).all():
            by_block = group_of.reshape(-1, int(counts[0]))
            if (by_block == by_block[0]).all():
                shape = tuple(
                    (figure_names[c], size, -1)
                    for c, size in zip(
                        figure_codes[: counts[0]].tolist(), sizes[: counts[0]].tolist(), strict=True
                    )
                )
                for slot in owners[np.concatenate(([0], bounds))].tolist():
                    self._draws_rows[slot] = (*self._draws_rows[slot], *shape)
                return
        shapes = list(zip([figure_names[c] for c in figure_codes.tolist()], sizes.tolist(), strict=True))
        for start, end in pairwise([0, *bounds.tolist(), len(owners)]):
            slot = int(owners[start])
            shape = tuple((figure, size, -1) for figure, size in shapes[start:end])
            self._draws_rows[slot] = (*self._draws_rows[slot], *shape)

    def build(self) -> list[UncertaintySummary | ValueError]:
        """Each added block, in order: its compact summary, or why it is refused."""
        index = {names: {name: i for i, name in enumerate(names)} for names in self._intervals}
        intervals = {}
        for names, rows in self._intervals.items():
            matrix = rows.matrix().reshape(-1, len(names), 2)
            intervals[names] = matrix
            unordered = np.flatnonzero(~(matrix[:, :, 0] <= matrix[:, :, 1]).all(axis=1)).tolist()
            for slot in {*rows.not_finite, *(rows.slots[i] for i in unordered)}:
                self._errors.setdefault(slot, ValueError("an interval is not [low ≤ high] with finite ends"))
        columns: dict[tuple[str, int], DrawsColumn] = {}
        for shape, (rows, keys) in self._draws.items():
            columns[shape] = DrawsColumn(rows.matrix(), keys, _rows_by_slot(rows.slots, len(self._headers)))
            for slot in rows.not_finite:
                self._errors.setdefault(slot, ValueError("a resampled value is not a finite number"))
        layouts: dict[tuple[tuple[str, int], ...], dict[str, DrawsColumn]] = {}
        out: list[UncertaintySummary | ValueError] = []
        known = tuple(UncertaintySummary.model_fields)  # pydantic's class property: 15 µs a read
        for slot, header in enumerate(self._headers):
            try:
                if slot in self._errors:
                    raise self._errors[slot]
                fields = {name: header[name] for name in known if name in header}
                extra = {k: v for k, v in header.items() if k not in fields}
                _check_header(fields)
                names, row = self._interval_row[slot]
                # One layout (figure → column) shared by every run whose draws lie in the same columns.
                shape = tuple((figure, length) for figure, length, _ in self._draws_rows[slot])
                layout = layouts.get(shape)
                if layout is None:
                    layout = layouts[shape] = {figure: columns[figure, length] for figure, length in shape}
                out.append(
                    UncertaintySummary.model_construct(
                        intervals=IntervalRow(index[names], intervals[names], row),
                        draws=DrawsRow(layout, slot),
                        **fields,
                        **extra,  # keys of another writer, kept as the model keeps them
                    )
                )
            except ValueError as exc:
                out.append(exc)
        return out


def _set_bytes(
    data: pa.Buffer, offsets: NDArray[np.int32], members: NDArray[np.int64], size: int
) -> memoryview:
    """The bytes of sets ``members`` (each ``size`` long) of a binary array (its data buffer and
    offsets), one after the other.

    The sets of one figure lie at a fixed stride in the table (every run keeps the same figures):
    one strided copy of the buffer, not a gather of each set."""
    starts = offsets[members].astype(np.int64)
    buffer = np.frombuffer(data, np.uint8)
    if len(starts) == 1:
        return memoryview(buffer[starts[0] : starts[0] + size])
    strides = np.diff(starts)
    if (strides == strides[0]).all() and strides[0] >= size:
        rows = np.lib.stride_tricks.as_strided(
            buffer[starts[0] :], shape=(len(starts), size), strides=(int(strides[0]), 1), writeable=False
        )
    else:  # another layout: set by set
        rows = np.concatenate([buffer[start : start + size] for start in starts.tolist()])
    return memoryview(np.ascontiguousarray(rows)).cast("B")


def _rows_by_slot(slots: list[int], count: int) -> array[int]:
    """Row ``i`` belongs to slot ``slots[i]``: the row of each of ``count`` slots (-1: none), as a
    machine-integer array, not a dict (22 columns × 20,000 runs as dicts were 24 MB; an array
    item reads back as a plain int, as fast as a dict's)."""
    rows = np.full(count, -1, dtype=np.int64)
    rows[np.asarray(slots, dtype=np.int64)] = np.arange(len(slots))
    out = array("q")
    out.frombytes(rows.tobytes())
    return out


def _check_header(fields: Mapping[str, Any]) -> None:
    """The header's types the readers rely on (what the model's validation would refuse)."""
    level = fields.get("level")
    if not (isinstance(level, float) and 0.0 < level < 1.0):
        raise ValueError(f"level {level!r} is not in (0, 1)")
    if not isinstance(fields.get("seed"), int) or not isinstance(fields.get("n_resamples"), int):
        raise ValueError("seed and n_resamples must be integers")


def compact_summary(block: dict[str, Any]) -> UncertaintySummary:
    """One block compacted alone (:class:`BlockBatch` of one); :class:`ValueError` if refused."""
    batch = BlockBatch()
    batch.add(block)
    (built,) = batch.build()
    if isinstance(built, ValueError):
        raise built
    return built
