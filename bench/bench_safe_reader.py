"""What the safe reader costs: parsing store files through it vs. pydantic straight from bytes.

Side by side in one run, on the same bytes:

* **unguarded** — ``ResultsFile.model_validate_json(data)`` / ``EvalRequest.model_validate_json(data)``,
  pydantic's own JSON parser (the results loader's former fast path; it let NaN through and
  crashed on nothing only by luck of its own limits);
* **safe** — ``ResultsFile.from_json`` / ``EvalRequest.from_json``: size cap, depth scan, bounded
  numbers, strict UTF-8, surrogate and duplicate-key checks, then the same schema.

Also the whole results loader (``load_results``) over a store of ``--models`` × 2 files, which is
what a cold app start pays.  Run: ``.venv/bin/python bench/bench_safe_reader.py [--models 300]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def per_call(fn: Callable[[], object], repeat: int) -> float:
    """Best of three timings of ``repeat`` calls, in microseconds per call."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, time.perf_counter() - start)
    return best / repeat * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    from bench.bench_ui import build_store
    from eval_queue.requests import EvalRequest
    from eval_queue.storage import LocalStorage
    from leaderboard.tracks.evalita.app.records import load_results
    from leaderboard.tracks.evalita.schema import ResultsFile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "results"
        files = build_store(root, args.models)
        sample = next(root.rglob("results_*.json"))
        data, path = sample.read_bytes(), sample.relative_to(root).as_posix()
        request = EvalRequest(
            model="org/model",
            revision="0123456789abcdef0123456789abcdef01234567",
            submitted_time="2026-03-01T09:00:00Z",
            history=[{"time": "2026-03-01T09:00:00Z", "status": "PENDING", "by": "x", "note": "submitted"}]
            * 10,
        )
        request_bytes = request.to_json()

        rows = [
            (
                f"results file ({len(data):,} bytes)",
                per_call(lambda: ResultsFile.model_validate_json(data), args.repeat),
                per_call(lambda: ResultsFile.from_json(data, path), args.repeat),
            ),
            (
                f"request file ({len(request_bytes):,} bytes)",
                per_call(lambda: EvalRequest.model_validate_json(request_bytes), args.repeat * 5),
                per_call(lambda: EvalRequest.from_json(request_bytes, request.path), args.repeat * 5),
            ),
        ]
        print(f"{'':<32} {'unguarded µs':>13} {'safe µs':>9} {'ratio':>6}")
        for name, unguarded, safe in rows:
            print(f"{name:<32} {unguarded:>13.1f} {safe:>9.1f} {safe / unguarded:>6.2f}")

        store = LocalStorage(root)
        start = time.perf_counter()
        loaded = load_results(store)
        elapsed = time.perf_counter() - start
        print(
            f"load_results over {files} files: {elapsed:.2f} s ({len(loaded.runs)} runs, {len(loaded.problems)} problems)"
        )


if __name__ == "__main__":
    main()
