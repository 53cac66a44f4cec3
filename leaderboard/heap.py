"""The server process's C heap: fewer glibc arenas, and free pages handed back after big work.

glibc's ``malloc`` gives each thread that allocates an arena of its own, up to eight per core;
a Gradio server runs its events on a pool of worker threads, so memory freed by one visitor's
thread is not reused by the next one's and the server's resident memory grows with the number
of concurrent visitors (issue 32's load probe: +500 MB from 1 to 64 clients).  Two arenas keep
the threads' allocations in shared heaps.  After a store read or a warm-up, the heap's free
pages stay mapped unless :func:`trim` hands them back.  Both are no-ops outside glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from functools import cache

logger = logging.getLogger(__name__)

#: ``M_ARENA_MAX`` in glibc's ``<malloc.h>``.
_M_ARENA_MAX = -8
#: The arenas a server process keeps (glibc's ``MALLOC_ARENA_MAX``, set from inside the process).
SERVER_ARENAS = 2


@cache
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim, libc.mallopt  # noqa: B018 — glibc's, or not glibc
    except (OSError, AttributeError):
        return None
    return libc


def limit_arenas(arenas: int = SERVER_ARENAS) -> bool:
    """Cap glibc's arenas at ``arenas`` (call before the server's threads start); ``False`` when
    the C library is not glibc or refuses."""
    libc = _libc()
    if libc is None:
        return False
    done = bool(libc.mallopt(_M_ARENA_MAX, arenas))
    if not done:
        logger.warning("glibc refused M_ARENA_MAX=%d: the server's heap grows with its threads", arenas)
    return done


def trim() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
