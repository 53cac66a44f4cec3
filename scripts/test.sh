#!/usr/bin/env bash
# The whole test suite: set-up (incl. chromium for the browser tests), lint, pytest.
#   scripts/test.sh [pytest args…]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --browser
export GRADIO_ANALYTICS_ENABLED=False HF_HUB_DISABLE_TELEMETRY=1
.venv/bin/ruff format --check .
.venv/bin/ruff check .
exec .venv/bin/python -m pytest "$@"
