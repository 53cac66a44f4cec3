#!/usr/bin/env bash
# The main job on the embedded default, end to end and offline:
# set up → submit the bundled SmolLM2-135M-Instruct → evaluate it on the bundled
# sample data with lm-evaluation-harness → export the ranking → serve the leaderboard.
#   scripts/demo.sh            (then open http://127.0.0.1:7860)
# Environment: EVALITA_DATA_DIR (default ./eval-data), GRADIO_SERVER_PORT, DEMO_NO_SERVE=1.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

export EVALITA_DATA_DIR=${EVALITA_DATA_DIR:-$PWD/eval-data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 GRADIO_ANALYTICS_ENABLED=False
PY=.venv/bin/python
MODEL=HuggingFaceTB/SmolLM2-135M-Instruct

echo "== submit $MODEL (zero-shot)"
# A second demo run finds the request already there: that refusal is expected.
$PY -m eval_queue submit "$MODEL" --fewshot 0 --submitted-by demo || true
$PY -m eval_queue list

echo "== evaluate (claims the oldest pending request; bundled sample data; on 2 CPU cores this takes"
echo "   roughly half an hour: the log shows the task being run, requests done, elapsed time and ETA)"
$PY -m backend --once --data sample
$PY -m eval_queue list

echo "== ranking (python -m leaderboard export; sample-data runs are not comparable, hence the flag)"
$PY -m leaderboard export --format csv --include-noncomparable

if [ "${DEMO_NO_SERVE:-0}" = 1 ]; then exit 0; fi
echo "== serving the leaderboard on http://${GRADIO_SERVER_NAME:-127.0.0.1}:${GRADIO_SERVER_PORT:-7860} (Ctrl-C to stop)"
exec $PY app.py
