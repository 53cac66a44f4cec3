"""The server's C heap: glibc's arenas capped, so threads share heaps (leaderboard/heap.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

#: In a fresh process: cap the arenas (or not), make eight threads allocate at once, then count
#: the heaps glibc reports (``malloc_info``: one ``<heap nr=...>`` per arena).
_CHILD = textwrap.dedent(
    """
    import ctypes, sys, threading, tempfile
    from leaderboard import heap
    if sys.argv[1] == "cap":
        assert heap.limit_arenas(2)
    barrier = threading.Barrier(8)
    def work():
        barrier.wait()
        for _ in range(200):
            kept = [bytearray(512) for _ in range(2000)]
            del kept
    threads = [threading.Thread(target=work) for _ in range(8)]
    [t.start() for t in threads]; [t.join() for t in threads]
    libc = ctypes.CDLL("libc.so.6")
    libc.fopen.restype = ctypes.c_void_p
    with tempfile.NamedTemporaryFile(suffix=".xml") as out:
        stream = libc.fopen(out.name.encode(), b"w")
        libc.malloc_info(0, ctypes.c_void_p(stream))
        libc.fclose(ctypes.c_void_p(stream))
        print(open(out.name).read().count("<heap nr="))
    """
)


def _heaps(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, mode], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_capped_arenas_keep_threads_allocating_at_once_in_two_heaps() -> None:
    assert _heaps("cap") <= 2
    # The same threads without the cap spread over more heaps (what made memory grow with visitors).
    assert _heaps("free") > 2
