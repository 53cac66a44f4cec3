"""A publishing worker for the concurrency test (``python -m tests.contents.publisher``).

It opens the stores from the environment as the real entry points do, prints ``ready``,
waits for a line on stdin (so that every publisher starts together), then writes
``--count`` results files of its own model and puts each one's rows into the contents
table, exactly as the worker's publish step does, printing ``published <path>``.
"""

from __future__ import annotations

import argparse
import sys

from eval_queue.settings import Settings
from eval_queue.storage import open_stores
from leaderboard.core.contents_io import publish_rows
from tests.contents.store import evalita_file


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--count", type=int, default=4)
    args = parser.parse_args()
    results_store = open_stores(Settings.from_env()).results
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(args.count):
        path, results = evalita_file(args.model, 0.3 + i / 100, finished=f"2026-01-02T03:04:{i:02d}Z")
        results_store.write(path, results.to_json())
        publish_rows(results_store, results, path)
        print(f"published {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
