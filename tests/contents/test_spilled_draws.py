"""The spilled per-task draws (issue 32's server memory): a view that read them hands their
mapped pages back, and every later read gives the same values."""

from __future__ import annotations

from binascii import b2a_base64
from pathlib import Path

import numpy as np
import pytest

from leaderboard.tracks.evalita.app.compact import BlockBatch, DrawsRow, release_spilled

RUNS, RESAMPLES = 64, 2048  # 512 KB a figure: pages enough to see them resident, then not


def _block(values: np.ndarray) -> dict:
    def draws(row: np.ndarray) -> dict:
        return {"key": "items-1", "float32": b2a_base64(row.astype("<f4").tobytes(), newline=False).decode()}

    return {
        "method": "paired item bootstrap",
        "seed": 1,
        "n_resamples": RESAMPLES,
        "level": 0.95,
        "intervals": {"te/cps": [0.1, 0.2]},
        "draws": {"te/cps": draws(values[0]), "te/cps_tie": draws(values[1])},
    }


def _resident_kb(address: int) -> int:
    """The resident KB of the mapping starting at ``address`` (this process's smaps)."""
    lines = Path("/proc/self/smaps").read_text().splitlines()
    for i, line in enumerate(lines):
        start = line.split("-", 1)[0]
        if "-" in line.split(" ", 1)[0] and int(start, 16) == address:
            for field in lines[i + 1 :]:
                if field.startswith("Rss:"):
                    return int(field.split()[1])
    raise AssertionError(f"no mapping at {address:#x}")


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads the process's mappings (Linux)")
def test_released_draws_leave_memory_and_read_back_the_same() -> None:
    rng = np.random.default_rng(7)
    values = rng.random((RUNS, 2, RESAMPLES)).astype("<f4")
    batch = BlockBatch(spill=lambda figure: True)
    for run in range(RUNS):
        batch.add(_block(values[run]))
    summaries = batch.build()
    rows = [s.draws for s in summaries]
    assert all(isinstance(r, DrawsRow) for r in rows)
    column = rows[0].columns["te/cps"]
    address = column.matrix.ctypes.data  # a spilled matrix starts its mapping (offset 0)

    before = np.stack([r.float32_values("te/cps") for r in rows]).copy()
    np.testing.assert_array_equal(before, values[:, 0])
    assert _resident_kb(address) >= RUNS * RESAMPLES * 4 // 1024 // 2  # read: its pages resident

    release_spilled(summaries)
    assert _resident_kb(address) == 0  # handed back (still in the page cache and the file)
    after = np.stack([r.float32_values("te/cps") for r in rows])
    np.testing.assert_array_equal(after, before)
    tie = np.stack([r.kept("te/cps_tie")[1] for r in rows])
    np.testing.assert_array_equal(tie, values[:, 1])


def test_draws_kept_in_memory_are_left_alone_by_a_release() -> None:
    values = np.random.default_rng(3).random((4, 2, 8)).astype("<f4")
    batch = BlockBatch()  # nothing spilled
    for run in range(4):
        batch.add(_block(values[run]))
    summaries = batch.build()
    release_spilled([*summaries, None])
    got = np.stack([s.draws.float32_values("te/cps") for s in summaries])
    np.testing.assert_array_equal(got, values[:, 0])
