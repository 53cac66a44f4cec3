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

each run's block a :class:`~leaderboard.core.summary.UncertaintySummary` made without
validation around them: the values are checked here, for all runs at once (finite draws,
finite ordered intervals, the header's types), and a block that fails is refused alone.
Readers see the block's own mapping API, so no view changes.
"""

from __future__ import annotations

import tempfile
from binascii import Error as Base64Error
from binascii import a2b_base64, b2a_base64
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
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
    (read-only), each run's key, and which row is whose."""

    __slots__ = ("keys", "matrix", "row_of")

    def __init__(self, matrix: NDArray[np.float32], keys: list[str], row_of: dict[int, int]) -> None:
        matrix.flags.writeable = False
        self.matrix, self.keys, self.row_of = matrix, keys, row_of


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


class _Growing:
    """Rows of one shape written one at a time into a matrix of ``capacity`` rows (``np.empty``:
    the pages of rows never written are never touched, so they cost no memory)."""

    def __init__(self, capacity: int, shape: tuple[int, ...], dtype: Any) -> None:
        self.matrix = np.empty((capacity, *shape), dtype=dtype)
        self.used = 0

    def put(self, values: NDArray[Any]) -> int:
        row = self.used
        self.matrix[row] = values
        self.used += 1
        return row

    def rows(self) -> NDArray[Any]:
        """The rows written (a view: nothing is copied)."""
        return self.matrix[: self.used]


class _Spilled:
    """Rows written one at a time to an unnamed temporary file, then mapped read-only: the pages
    are the page cache's until a reader touches them (draws only a rarer view reads)."""

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        # Closed by rows(), once mapped (the mapping keeps the deleted file alive).
        self._file = tempfile.TemporaryFile(prefix="evalita-draws-")  # noqa: SIM115
        self._shape, self._dtype = shape, np.dtype(dtype)
        self.used = 0

    def put(self, values: NDArray[Any]) -> int:
        self._file.write(np.ascontiguousarray(values, dtype=self._dtype).tobytes())
        self.used += 1
        return self.used - 1

    def rows(self) -> NDArray[Any]:
        """The rows written, mapped read-only (the mapping keeps the deleted file alive)."""
        self._file.flush()
        if not self.used:
            return np.empty((0, *self._shape), dtype=self._dtype)
        rows = np.memmap(self._file, dtype=self._dtype, mode="r", shape=(self.used, *self._shape))
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


class BlockBatch:
    """The ``uncertainty`` blocks of up to ``capacity`` runs, compacted together (module docstring).

    :meth:`add` each block (parsed JSON; its slot is returned), then :meth:`build` once.  Each
    block's numbers are written into the batch's matrices as it is added, so no run's text or
    lists outlive its :meth:`add` (at 20,000 runs they were a GB, left to the allocator).
    ``spill(figure)``: keep that figure's draws in a memory-mapped temporary file rather than in
    memory (read from the page cache when a view asks for them).
    """

    def __init__(self, capacity: int, spill: Callable[[str], bool] | None = None) -> None:
        self._capacity = capacity
        self._spill = spill
        self._headers: list[dict[str, Any]] = []
        self._errors: dict[int, ValueError] = {}
        #: figure names → their matrix (runs × figures × 2); per slot, (names, row).
        self._intervals: dict[tuple[str, ...], _Growing] = {}
        self._interval_row: list[tuple[tuple[str, ...], int]] = []
        #: (figure, resamples) → its matrix (runs × resamples) and each row's key; per slot, rows.
        self._draws: dict[tuple[str, int], tuple[_Growing | _Spilled, list[str]]] = {}
        self._draws_rows: list[tuple[tuple[str, int, int], ...]] = []
        #: One string per distinct draws key (a key is the same for thousands of runs).
        self._shared: dict[str, str] = {}

    def add(self, block: dict[str, Any]) -> int:
        """Take one block; ``TypeError``/``KeyError``/``AttributeError`` if it is not shaped as one
        (a block whose numbers are refused is reported by :meth:`build`)."""
        slot = len(self._headers)
        header = {k: v for k, v in block.items() if k not in _COMPACTED}
        intervals = block.get("intervals") or {}
        draws = block.get("draws") or {}
        try:
            interval_row = self._add_intervals(intervals)
            draws_rows = tuple(self._add_draws(figure, kept) for figure, kept in draws.items())
        except ValueError as exc:
            self._errors[slot] = exc
            interval_row, draws_rows = ((), -1), ()
        self._headers.append(header)
        self._interval_row.append(interval_row)
        self._draws_rows.append(draws_rows)
        return slot

    def _add_intervals(self, intervals: dict[str, Any]) -> tuple[tuple[str, ...], int]:
        names = tuple(intervals)
        try:
            pairs = np.array(list(intervals.values()), dtype=np.float64).reshape(len(names), 2)
        except ValueError:  # ragged: some figure without both ends
            raise ValueError("an interval is not a [low, high] pair") from None
        if not (np.isfinite(pairs).all() and (pairs[:, 0] <= pairs[:, 1]).all()):
            raise ValueError("an interval is not [low ≤ high] with finite ends")
        matrix = self._intervals.get(names)
        if matrix is None:
            matrix = self._intervals[names] = _Growing(self._capacity, (len(names), 2), np.float64)
        return names, matrix.put(pairs)

    def _add_draws(self, figure: str, kept: dict[str, Any]) -> tuple[str, int, int]:
        try:
            raw = a2b_base64(kept["float32"], strict_mode=True)
        except Base64Error as exc:
            raise ValueError(f"draws of {figure!r} are not base64: {exc}") from None
        if len(raw) % 4:
            raise ValueError(f"draws of {figure!r}: {len(raw)} bytes are not whole float32 values")
        values = np.frombuffer(raw, dtype="<f4")
        if not np.isfinite(values).all():
            raise ValueError("a resampled value is not a finite number")
        found = self._draws.get((figure, len(values)))
        if found is None:
            spilled = self._spill is not None and self._spill(figure)
            rows = (
                _Spilled((len(values),), "<f4")
                if spilled
                else _Growing(self._capacity, (len(values),), "<f4")
            )
            found = self._draws[figure, len(values)] = (rows, [])
        matrix, keys = found
        key = str(kept["key"])
        keys.append(self._shared.setdefault(key, key))
        return figure, len(values), matrix.put(values)

    def build(self) -> list[UncertaintySummary | ValueError]:
        """Each added block, in order: its compact summary, or why it is refused."""
        index = {names: {name: i for i, name in enumerate(names)} for names in self._intervals}
        intervals = {names: matrix.rows() for names, matrix in self._intervals.items()}
        for matrix in intervals.values():
            matrix.flags.writeable = False
        columns: dict[tuple[str, int], DrawsColumn] = {}
        rows_of: dict[tuple[str, int], dict[int, int]] = {shape: {} for shape in self._draws}
        for slot, draws_rows in enumerate(self._draws_rows):
            for figure, length, row in draws_rows:
                rows_of[figure, length][slot] = row
        for shape, (matrix, keys) in self._draws.items():
            columns[shape] = DrawsColumn(matrix.rows(), keys, rows_of[shape])
        layouts: dict[tuple[tuple[str, int], ...], dict[str, DrawsColumn]] = {}
        out: list[UncertaintySummary | ValueError] = []
        for slot, header in enumerate(self._headers):
            try:
                if slot in self._errors:
                    raise self._errors[slot]
                fields = {name: header[name] for name in UncertaintySummary.model_fields if name in header}
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


def _check_header(fields: Mapping[str, Any]) -> None:
    """The header's types the readers rely on (what the model's validation would refuse)."""
    level = fields.get("level")
    if not (isinstance(level, float) and 0.0 < level < 1.0):
        raise ValueError(f"level {level!r} is not in (0, 1)")
    if not isinstance(fields.get("seed"), int) or not isinstance(fields.get("n_resamples"), int):
        raise ValueError("seed and n_resamples must be integers")


def compact_summary(block: dict[str, Any]) -> UncertaintySummary:
    """One block compacted alone (:class:`BlockBatch` of one); :class:`ValueError` if refused."""
    batch = BlockBatch(1)
    batch.add(block)
    (built,) = batch.build()
    if isinstance(built, ValueError):
        raise built
    return built
