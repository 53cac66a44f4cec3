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

from binascii import Error as Base64Error
from binascii import a2b_base64, b2a_base64
from collections.abc import Iterator, Mapping
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

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __repr__(self) -> str:
        return f"DrawsRow({list(self._columns)!r})"


class BlockBatch:
    """The ``uncertainty`` blocks of many runs, compacted together (module docstring).

    :meth:`add` each block (parsed JSON; its slot is returned), then :meth:`build` once.
    """

    def __init__(self) -> None:
        self._headers: list[dict[str, Any]] = []
        #: figure names → (slots, their [low, high] pairs)
        self._intervals: dict[tuple[str, ...], tuple[list[int], list[Any]]] = {}
        #: figure → (slots, keys, base64 texts)
        self._draws: dict[str, tuple[list[int], list[str], list[str]]] = {}
        self._figures: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        #: One string per distinct draws key (a key is the same for thousands of runs).
        self._shared: dict[str, str] = {}

    def add(self, block: dict[str, Any]) -> int:
        """Take one block; ``TypeError``/``KeyError``/``AttributeError`` if it is not shaped as one."""
        slot = len(self._headers)
        intervals = block.get("intervals") or {}
        names = tuple(intervals)
        slots, pairs = self._intervals.setdefault(names, ([], []))
        slots.append(slot)
        pairs.append(list(intervals.values()))
        draws = block.get("draws") or {}
        for figure, kept in draws.items():
            slots, keys, texts = self._draws.setdefault(figure, ([], [], []))
            slots.append(slot)
            keys.append(self._shared.setdefault(str(kept["key"]), str(kept["key"])))
            texts.append(kept["float32"])
        self._figures.append((names, tuple(draws)))
        self._headers.append({k: v for k, v in block.items() if k not in _COMPACTED})
        return slot

    def build(self) -> list[UncertaintySummary | ValueError]:
        """Each added block, in order: its compact summary, or why it is refused."""
        errors: dict[int, ValueError] = {}
        rows = self._interval_rows(errors)
        columns = self._draws_columns(errors)
        layouts: dict[tuple[tuple[str, int], ...], dict[str, DrawsColumn]] = {}
        out: list[UncertaintySummary | ValueError] = []
        for slot, (header, (_names, figures)) in enumerate(zip(self._headers, self._figures, strict=True)):
            try:
                if slot in errors:
                    raise errors[slot]
                fields = {name: header[name] for name in UncertaintySummary.model_fields if name in header}
                extra = {k: v for k, v in header.items() if k not in fields}
                _check_header(fields)
                index, matrix, row = rows[slot]
                # One layout (figure → column) shared by every run whose draws lie in the same columns.
                shape = tuple((f, id(columns[f, slot])) for f in figures)
                layout = layouts.get(shape)
                if layout is None:
                    layout = layouts[shape] = {f: columns[f, slot] for f in figures}
                out.append(
                    UncertaintySummary.model_construct(
                        intervals=IntervalRow(index, matrix, row),
                        draws=DrawsRow(layout, slot),
                        **fields,
                        **extra,  # keys of another writer, kept as the model keeps them
                    )
                )
            except ValueError as exc:
                out.append(exc)
        return out

    def _interval_rows(
        self, errors: dict[int, ValueError]
    ) -> dict[int, tuple[Mapping[str, int], NDArray[np.float64], int]]:
        rows = {}
        for names, (slots, pairs) in self._intervals.items():
            index = {name: i for i, name in enumerate(names)}
            try:
                matrix = np.array(pairs, dtype=np.float64).reshape(len(slots), len(names), 2)
            except ValueError:  # ragged: some figure without both ends; find whose, one by one
                matrix = np.full((len(slots), len(names), 2), np.nan)
                for i, run in enumerate(pairs):
                    try:
                        matrix[i] = np.array(run, dtype=np.float64).reshape(len(names), 2)
                    except ValueError:
                        errors.setdefault(slots[i], ValueError("an interval is not a [low, high] pair"))
            ok = np.isfinite(matrix).all(axis=(1, 2)) & (matrix[:, :, 0] <= matrix[:, :, 1]).all(axis=1)
            matrix.flags.writeable = False
            for i, slot in enumerate(slots):
                if not ok[i]:
                    errors.setdefault(slot, ValueError("an interval is not [low ≤ high] with finite ends"))
                rows[slot] = (index, matrix, i)
        return rows

    def _draws_columns(self, errors: dict[int, ValueError]) -> dict[tuple[str, int], DrawsColumn]:
        """(figure, slot) → the column holding that run's draws of that figure."""
        found: dict[tuple[str, int], DrawsColumn] = {}
        for figure, (slots, keys, texts) in self._draws.items():
            by_length: dict[int, list[tuple[int, str, bytes]]] = {}
            for slot, key, text in zip(slots, keys, texts, strict=True):
                try:
                    raw = a2b_base64(text, strict_mode=True)
                except (Base64Error, TypeError) as exc:
                    errors.setdefault(slot, ValueError(f"draws of {figure!r} are not base64: {exc}"))
                    continue
                if len(raw) % 4:
                    errors.setdefault(
                        slot,
                        ValueError(f"draws of {figure!r}: {len(raw)} bytes are not whole float32 values"),
                    )
                    continue
                by_length.setdefault(len(raw), []).append((slot, key, raw))
            for length, runs in by_length.items():
                matrix = np.frombuffer(b"".join(raw for _, _, raw in runs), dtype="<f4").reshape(
                    len(runs), length // 4
                )
                finite = np.isfinite(matrix).all(axis=1)
                column = DrawsColumn(
                    matrix, [key for _, key, _ in runs], {s: i for i, (s, _, _) in enumerate(runs)}
                )
                for i, (slot, _, _) in enumerate(runs):
                    if not finite[i]:
                        errors.setdefault(slot, ValueError("a resampled value is not a finite number"))
                    found[figure, slot] = column
        return found


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
