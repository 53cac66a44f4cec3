"""A worker process for the concurrency and crash tests (``python -m tests.queue.claimer``).

It opens the stores from the environment exactly as the real entry points do, then:

* ``drain``: prints ``ready``, waits for a line on stdin (so that all workers start
  together), then claims and finishes requests until none is left, printing ``claimed <id>``;
* ``hold``: claims one request, prints ``claimed <id>`` and renews the lease until killed.
"""

from __future__ import annotations

import argparse
import sys
import time

from eval_queue.queue import RequestQueue
from eval_queue.settings import Settings
from eval_queue.storage import open_stores


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["drain", "hold"])
    parser.add_argument("--worker", required=True)
    parser.add_argument("--lease", type=float, default=30.0)
    parser.add_argument("--work", type=float, default=0.05, help="seconds each 'evaluation' takes")
    args = parser.parse_args()
    queue = RequestQueue(open_stores(Settings.from_env()).requests)
    if args.mode == "drain":
        print("ready", flush=True)
        sys.stdin.readline()
        while (request := queue.claim_next(args.worker, args.lease)) is not None:
            print(f"claimed {request.request_id}", flush=True)
            time.sleep(args.work)
            queue.finish(request.request_id, args.worker, f"results/{args.worker}.json")
        return 0
    request = queue.claim_next(args.worker, args.lease)
    if request is None:
        return 1
    queue.start(request.request_id, args.worker, args.lease)  # the run is under way: a lost lease counts
    print(f"claimed {request.request_id}", flush=True)
    while True:  # the "run": heartbeat until SIGKILL
        time.sleep(args.lease / 3)
        queue.renew(request.request_id, args.worker, args.lease)


if __name__ == "__main__":
    sys.exit(main())
