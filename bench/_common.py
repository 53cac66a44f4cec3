"""What every benchmark script does before it imports the project (``import _common`` first).

The scripts run as ``python bench/<name>.py`` from anywhere: this puts the repository on
``sys.path`` and sets the environment a benchmark must not depend on the caller for — offline
hub, datasets and evaluate clients (these machines reach no hub), no telemetry, no tokenizer
thread pool.  :func:`one_core` pins the numeric libraries to one thread for a benchmark whose
figures are per core; it must run before numpy is imported.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Where benchmarks write their JSON reports (gitignored).
ARTIFACTS = REPO_ROOT / "artifacts"

if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

for _name, _value in (
    ("HF_HUB_OFFLINE", "1"),
    ("HF_DATASETS_OFFLINE", "1"),
    ("HF_EVALUATE_OFFLINE", "1"),
    ("HF_HUB_DISABLE_TELEMETRY", "1"),
    ("GRADIO_ANALYTICS_ENABLED", "False"),
    ("TOKENIZERS_PARALLELISM", "false"),
):
    os.environ.setdefault(_name, _value)


def one_core() -> None:
    """One thread for BLAS and OpenMP (set before numpy loads its BLAS)."""
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        os.environ[name] = "1"


def fmt(value: Any, spec: str) -> str:
    """``value`` formatted with ``spec`` for a report table; ``-`` for a figure not measured (None)."""
    return "-" if value is None else format(value, spec)
