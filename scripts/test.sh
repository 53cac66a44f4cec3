#!/usr/bin/env bash
# The whole test suite: set-up (incl. chromium for the browser tests), lint, pytest.
#   scripts/test.sh [pytest args…]
# pytest runs on two processes (pytest-xdist), each test file whole on one of them (its module
# fixtures built once), the longest files handed out first so both end together (the list and why:
# tests/support/schedule.py; a session fixture is built by each process that uses it, unless it
# shares its result through a file, as tests/support/shared.py does).  `-n 0`: serially, in pytest's order.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --browser
export GRADIO_ANALYTICS_ENABLED=False HF_HUB_DISABLE_TELEMETRY=1
# One torch/BLAS thread per worker: two workers on two cores, not four threads fighting for them.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
.venv/bin/ruff format --check .
.venv/bin/ruff check .
exec .venv/bin/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder "$@"
