#!/usr/bin/env bash
# The main job on the embedded default, end to end and offline:
# set up → submit the bundled SmolLM2-135M-Instruct → evaluate it on the bundled
# sample data with lm-evaluation-harness → export the ranking → serve the leaderboard.
#   scripts/demo.sh            (then open http://127.0.0.1:7860)
# Environment: EVALITA_DATA_DIR (default ./eval-data), GRADIO_SERVER_PORT, DEMO_NO_SERVE=1,
# DEMO_FULL=1 to evaluate every sample item with uncapped answers (measured here on 2 CPU
# cores with batch 16: 19 min 45 s; SmolLM2 without a chat template never emits the stop
# sequence, so every answer runs to 256 tokens). By default the demo evaluates 4 items per
# prompt with answers capped at 64 tokens (measured: 4 min 53 s), labelled as limited.
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

if [ "${DEMO_FULL:-0}" = 1 ]; then
  run_args=(--batch-size 16)
  echo "== evaluate: all sample items (about 20 min on 2 CPU cores; the log shows progress and ETA)"
else
  run_args=(--limit 4 --max-gen-toks 64)
  echo "== evaluate: 4 items per prompt, answers capped at 64 tokens (DEMO_FULL=1 for everything)"
fi
$PY -m backend --once --data sample "${run_args[@]}"
$PY -m eval_queue list

echo "== ranking (python -m leaderboard export; sample-data runs are not comparable, hence the flag)"
$PY -m leaderboard export --format csv --include-noncomparable

if [ "${DEMO_NO_SERVE:-0}" = 1 ]; then exit 0; fi
echo "== serving the leaderboard on http://${GRADIO_SERVER_NAME:-127.0.0.1}:${GRADIO_SERVER_PORT:-7860} (Ctrl-C to stop)"
exec $PY app.py
