"""A run's ``uncertainty`` block kept compactly in memory (the app's cold start from the contents table).

A results file's block holds fifty-odd intervals and, since issue 32, twenty-two kept draw sets
(the mean CPS's 1,000 resamples twice, each task's first 200 twice) as base64 text: about 47 KB a
run, as Python strings and tuples more.  At 20,000 runs that alone was more than the server's
memory target.  :func:`compact_summary` keeps the same block as

* its intervals: one float64 array of the run's (low, high) pairs, its figure names one tuple
  shared by every run with the same figures (:class:`IntervalRow`, a read-only mapping);
* its draws: one ``bytes`` of the run's float32 values, back to back, its layout (figure, key,
  where) one tuple shared likewise (:class:`DrawsRow`, a read-only mapping of
  :class:`~leaderboard.core.summary.KeptDraws` built on access: the very text the file held,
  re-encoded exactly, since base64 of the same bytes is one string);

inside a :class:`~leaderboard.core.summary.UncertaintySummary` made without validation: the
values were checked here (finite draws, ordered intervals), and the block was validated when
the worker wrote the table from the results file.  Readers see the block's own mapping API
(``intervals.get(figure)``, ``draws[figure].float32_values()``), so no view changes.
"""

from __future__ import annotations

from binascii import a2b_base64, b2a_base64
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leaderboard.core.summary import KeptDraws, UncertaintySummary

#: The block's keys kept as they are (small, shared across runs when equal); the rest is compacted.
_COMPACTED = ("intervals", "draws")


class IntervalRow(Mapping[str, tuple[float, float]]):
    """One run's intervals: figure → (low, high), read from one array (the names shared)."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: Mapping[str, int], values: NDArray[np.float64]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, figure: str) -> tuple[float, float]:
        i = self._index[figure]
        return (float(self._values[2 * i]), float(self._values[2 * i + 1]))

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __repr__(self) -> str:
        return f"IntervalRow({dict(self)!r})"


#: Where one figure's draws lie in a run's bytes: (figure, key, start, end), in bytes.
DrawsSlot = tuple[str, str, int, int]


class DrawsRow(Mapping[str, KeptDraws]):
    """One run's kept draws: figure → :class:`KeptDraws`, from one ``bytes`` of float32 values."""

    __slots__ = ("_blob", "_layout")

    def __init__(self, layout: Mapping[str, tuple[str, int, int]], blob: bytes) -> None:
        self._layout = layout
        self._blob = blob

    def __getitem__(self, figure: str) -> KeptDraws:
        key, start, end = self._layout[figure]
        text = b2a_base64(self._blob[start:end], newline=False).decode("ascii")
        return KeptDraws.model_construct(key=key, float32=text)

    def float32_values(self, figure: str) -> NDArray[np.float32]:
        """``self[figure].float32_values()`` without the base64 round trip (a read-only view)."""
        _, start, end = self._layout[figure]
        return np.frombuffer(self._blob, dtype="<f4", count=(end - start) // 4, offset=start)

    def __iter__(self) -> Iterator[str]:
        return iter(self._layout)

    def __len__(self) -> int:
        return len(self._layout)

    def __repr__(self) -> str:
        return f"DrawsRow({list(self._layout)!r})"


class Interner:
    """One shared object per distinct value (figure-name indexes, draws layouts, block headers)."""

    def __init__(self) -> None:
        self._seen: dict[Any, Any] = {}

    def __call__(self, key: Any, make: Any = None) -> Any:
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = key if make is None else make(key)
        return found


def compact_summary(block: dict[str, Any], shared: Interner) -> UncertaintySummary:
    """The ``uncertainty`` block ``block`` (parsed JSON) as a compact :class:`UncertaintySummary`.

    Raises :class:`ValueError` (or ``TypeError``/``KeyError``) on a block the validated model
    would refuse in the ways a reader depends on: an interval that is not two finite ordered
    numbers, draws that are not whole finite float32 values, a missing field.
    """
    intervals = block.get("intervals") or {}
    names = shared(tuple(intervals), lambda names: {name: i for i, name in enumerate(names)})
    try:
        pairs = np.array(list(intervals.values()), dtype=np.float64).reshape(-1)
    except ValueError:  # ragged: a figure without both ends
        pairs = np.empty(0)
    if len(pairs) != 2 * len(names):
        raise ValueError("an interval is not a [low, high] pair")
    if not (np.isfinite(pairs).all() and (pairs[0::2] <= pairs[1::2]).all()):
        raise ValueError("an interval is not [low ≤ high] with finite ends")
    parts: list[bytes] = []
    layout: list[tuple[str, tuple[str, int, int]]] = []
    at = 0
    for figure, kept in (block.get("draws") or {}).items():
        raw = a2b_base64(kept["float32"], strict_mode=True)
        if len(raw) % 4:
            raise ValueError(f"draws of {figure!r}: {len(raw)} bytes are not whole float32 values")
        parts.append(raw)
        layout.append((figure, (str(kept["key"]), at, at + len(raw))))
        at += len(raw)
    blob = b"".join(parts)
    if not np.isfinite(np.frombuffer(blob, dtype="<f4")).all():
        raise ValueError("a resampled value is not a finite number")
    header = {k: v for k, v in block.items() if k not in _COMPACTED}
    fields = {name: header.pop(name) for name in UncertaintySummary.model_fields if name in header}
    if not (isinstance(fields.get("level"), float) and 0.0 < fields["level"] < 1.0):
        raise ValueError(f"level {fields.get('level')!r} is not in (0, 1)")
    if not isinstance(fields.get("seed"), int) or not isinstance(fields.get("n_resamples"), int):
        raise ValueError("seed and n_resamples must be integers")
    return UncertaintySummary.model_construct(
        intervals=IntervalRow(names, pairs),
        draws=DrawsRow(shared(tuple(layout), dict), blob),
        **fields,
        **header,  # extra keys of another writer, kept as the model keeps them
    )
