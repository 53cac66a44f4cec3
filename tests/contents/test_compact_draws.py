"""The draws column taken as columns (:meth:`BlockBatch.add_draws_column`, the cold start's fast
path) gives each block the very draws its base64 text gives (:meth:`BlockBatch.add`), whatever
the blocks' layouts: the same figures at one stride (the vectorised copy), blocks that keep other
figures, other lengths or another order (set by set), and large groups written straight to the
spill file."""

from __future__ import annotations

import base64

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from leaderboard.tracks.evalita.app import compact
from leaderboard.tracks.evalita.app.compact import BlockBatch, DrawsRow

#: Each block's kept sets: (figure, key, values).
Layout = list[tuple[str, str, list[float]]]


def _block(i: int, sets: Layout, with_draws: bool) -> dict:
    block = {
        "method": "percentile",
        "seed": 7 + i,
        "n_resamples": 10,
        "level": 0.95,
        "intervals": {"mean_cps": [0.1 * i, 0.1 * i + 0.05]},
    }
    if with_draws:
        block["draws"] = {
            figure: {"key": key, "float32": base64.b64encode(np.asarray(v, "<f4").tobytes()).decode()}
            for figure, key, v in sets
        }
    return block


def _batches(layouts: list[Layout], spill: bool) -> tuple[list, list]:
    """The blocks built from their text, and from the columns (added without draws, then the column)."""
    spilled = (lambda figure: figure != "mean_cps") if spill else None
    from_text, from_columns = BlockBatch(spill=spilled), BlockBatch(spill=spilled)
    for i, sets in enumerate(layouts):
        from_text.add(_block(i, sets, True))
        from_columns.add(_block(i, sets, False))
    owners = np.array([i for i, sets in enumerate(layouts) for _ in sets], dtype=np.int64)
    flat = [s for sets in layouts for s in sets]
    # Sliced out of a longer array, as a table's column is (its offsets do not start at 0).
    padding = [("pad", "k", [9.0, 9.0])]
    values = pa.array([np.asarray(v, "<f4").tobytes() for _, _, v in padding + flat], pa.binary())[1:]

    def codes(strings: list[str]) -> tuple[np.ndarray, list[str]]:
        encoded = pc.dictionary_encode(pa.array(strings))
        return encoded.indices.to_numpy(), encoded.dictionary.to_pylist()

    from_columns.add_draws_column(
        owners, codes([f for f, _, _ in flat]), codes([k for _, k, _ in flat]), values
    )
    return from_text.build(), from_columns.build()


def _values(n: int, seed: int) -> list[float]:
    return np.random.default_rng(seed).normal(size=n).astype("<f4").tolist()


REGULAR = [[("mean_cps", "a", _values(6, i)), ("cps:wic", "b", _values(4, 100 + i))] for i in range(5)]
IRREGULAR = [
    [("mean_cps", "a", _values(6, 1)), ("cps:wic", "b", _values(4, 2))],
    [("mean_cps", "a", _values(6, 3))],  # one figure fewer
    [("cps:wic", "b", _values(4, 4)), ("mean_cps", "c", _values(6, 5))],  # another order, another key
    [("mean_cps", "a", _values(8, 6)), ("cps:wic", "b", _values(4, 7))],  # another length
    [("mean_cps", "a", _values(6, 8)), ("cps:sa", "d", _values(4, 9)), ("cps:wic", "b", _values(4, 10))],
]


#: As many sets in every block, one block's in another order.
REORDERED = [*REGULAR[:3], list(reversed(REGULAR[3])), REGULAR[4]]


@pytest.mark.parametrize(
    "layouts", [REGULAR, IRREGULAR, REORDERED], ids=["one-layout", "mixed-layouts", "one-reordered"]
)
@pytest.mark.parametrize("spill", [False, True], ids=["in-memory", "spilled"])
@pytest.mark.parametrize("chunk", [compact._Rows._CHUNK, 8], ids=["buffered", "straight-to-file"])
def test_draws_from_columns_equal_draws_from_text(
    layouts: list[Layout], spill: bool, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compact._Rows, "_CHUNK", chunk)
    from_text, from_columns = _batches(layouts, spill)
    assert len(from_text) == len(from_columns) == len(layouts)
    for text_block, column_block, sets in zip(from_text, from_columns, layouts, strict=True):
        assert isinstance(column_block.draws, DrawsRow)
        assert list(column_block.draws) == [figure for figure, _, _ in sets]  # the block's own order
        assert column_block == text_block
        for figure, key, values in sets:
            found = column_block.draws.kept(figure)
            assert found is not None and found[0] == key
            np.testing.assert_array_equal(found[1], np.asarray(values, "<f4"))


def test_a_changed_value_is_seen() -> None:
    """The comparison above can fail: one value moved in the column differs from the text."""
    layouts = [list(sets) for sets in REGULAR]
    from_text, _ = _batches(layouts, False)
    layouts[2][1] = ("cps:wic", "b", [v + 1.0 for v in layouts[2][1][2]])
    _, from_columns = _batches(layouts, False)
    assert from_columns[2] != from_text[2]
    assert from_columns[1] == from_text[1]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ([0.2, "0.3"], "not numbers"),
        ([0.2, None], "not numbers"),
        ([0.2, 0.3, 0.4], "pair"),
        ([0.4, 0.2], "low ≤ high"),
        ([0.2, float("nan")], "finite"),
    ],
)
def test_intervals_converted_together_refuse_only_the_bad_block(bad: list, reason: str) -> None:
    """Runs' intervals are converted a group at a time (700 runs: a full group and a rest): one
    bad pair refuses its block alone, the others keep their own intervals."""
    batch = BlockBatch()
    blocks = [_block(i, [], False) for i in range(700)]
    for i, block in enumerate(blocks):
        block["intervals"]["cps:wic"] = [0.001 * i, 0.001 * i + 0.5]
    blocks[600]["intervals"]["cps:wic"] = bad
    for block in blocks:
        batch.add(block)
    built = batch.build()
    assert isinstance(built[600], ValueError) and reason in str(built[600])
    assert not any(isinstance(b, ValueError) for i, b in enumerate(built) if i != 600)
    for i in (0, 599, 601, 699):
        assert dict(built[i].intervals) == {  # type: ignore[union-attr]
            "mean_cps": (0.1 * i, 0.1 * i + 0.05),
            "cps:wic": (0.001 * i, 0.001 * i + 0.5),
        }
