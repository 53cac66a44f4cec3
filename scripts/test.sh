#!/usr/bin/env bash
# The whole test suite: set-up (incl. chromium for the browser tests), lint, pytest.
#   scripts/test.sh [pytest args…]
# pytest runs on two processes (pytest-xdist): each module, or each group of tests sharing an
# expensive session fixture, on one of them (tests/conftest.py groups them).  `-n 0` runs serially.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --browser
export GRADIO_ANALYTICS_ENABLED=False HF_HUB_DISABLE_TELEMETRY=1
.venv/bin/ruff format --check .
.venv/bin/ruff check .
exec .venv/bin/python -m pytest -n 2 --dist loadgroup --no-loadscope-reorder "$@"
