"""The fast path (``--backend hf-fast``): same harness, same scores, less waiting.

lm-eval builds the requests and computes every metric exactly as with ``hf``; the model
class :class:`~backend.fastpath.model.FastHFLM` (a subclass of lm-eval's ``HFLM``,
registered as ``hf-fast``) serves them faster, and :func:`fastpath_session` spreads the
post-processing over the cores:

* :mod:`.encoding` — tokenisation in batch calls, token for token ``HFLM``'s;
* :mod:`.tree` — log-likelihoods as prefix trees (one forward per shared context);
* :mod:`.generation` — greedy generation with ``transformers``' continuous batching;
* :mod:`.postprocess` — per-document scoring (ROUGE) and bootstrap in a process pool.

The run record keeps ``backend: hf-fast`` and, in ``progress["fastpath"]``, what each part
did (requests served by the fast code or by the reference, and why).  ``bench/bench_speed.py``
measures it against ``hf``; ``tests/backend/test_fastpath*.py`` pin per-sample equality.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

from backend.fastpath.model import FastHFLM
from backend.fastpath.postprocess import parallel_postprocessing
from backend.options import FAST_BACKEND

__all__ = ["FAST_BACKEND", "FastHFLM", "fastpath_session"]


@contextmanager
def fastpath_session(backend: str, lm: Any, tasks: Sequence[Any]) -> Iterator[dict[str, Any]]:
    """Wrap ``simple_evaluate``: for ``hf-fast``, parallel post-processing and a report.

    Yields a dict that is empty for other backends and, after the block, holds
    ``{"fastpath": {...FastPathStats..., "postprocess": {...PostprocessStats...}}}``.
    """
    report: dict[str, Any] = {}
    if backend != FAST_BACKEND:
        yield report
        return
    with parallel_postprocessing(tasks) as post:
        yield report
    report["fastpath"] = lm.fastpath_stats() | {"postprocess": asdict(post)}
