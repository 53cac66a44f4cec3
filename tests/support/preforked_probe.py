"""What a process sees of itself, as JSON on stdout: for tests/foundation/test_preforked.py.

``python -m tests.support.preforked_probe [EXIT | raise | sleep]``: prints its environment,
working directory, arguments, first import path, whether it runs as ``__main__``, and the hub
cache huggingface_hub read at import; then exits with ``EXIT`` (default 0), raises, or sleeps.
"""

from __future__ import annotations

import json
import os
import sys
import time

import huggingface_hub.constants

print(
    json.dumps(
        {
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "argv": sys.argv[1:],
            "argv0": os.path.basename(sys.argv[0]),
            "path0": sys.path[0],
            "main": __name__ == "__main__",
            "hub_cache": huggingface_hub.constants.HF_HUB_CACHE,
        }
    ),
    flush=True,
)
print("to stderr", file=sys.stderr)
what = sys.argv[1] if len(sys.argv) > 1 else "0"
if what == "raise":
    raise RuntimeError("the probe raised")
if what == "sleep":
    time.sleep(600)
sys.exit(int(what))
