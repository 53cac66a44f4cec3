"""The server process's C heap: free pages handed back to the system after big work.

After a store read or a warm-up, the memory their temporaries held (parsed texts, the tiers'
blocks) is free but stays mapped in glibc's heap for later allocations: the server would stay at
the work's peak for as long as it runs.  A no-op outside glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache


@cache
def _malloc_trim() -> ctypes._CFuncPtr | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: its allocator returns memory its own way
        return None


def trim() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``)."""
    malloc_trim = _malloc_trim()
    if malloc_trim is not None:
        malloc_trim(0)
