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

LOG=$EVALITA_DATA_DIR/demo-worker.log
if [ "${DEMO_FULL:-0}" = 1 ]; then
  run_args=(--batch-size 16)
  what="every sample item, answers uncapped"
  echo "== evaluate: the ten tasks (44 prompts), zero-shot, $what (about 20 min on 2 CPU cores)"
else
  run_args=(--limit 4 --max-gen-toks 64)
  what="4 items per prompt, answers capped at 64 tokens"
  echo "== evaluate: the ten tasks (44 prompts), zero-shot, $what (DEMO_FULL=1 for everything)"
fi
echo "   progress and ETA below; the harness's own output and warnings go to $LOG"
$PY -m backend --once --data sample --log-file "$LOG" "${run_args[@]}"
$PY -m eval_queue list

echo "== ranking in both metric sets (python -m leaderboard export --format table --metrics both; CPS per task, 0-100)"
$PY -m leaderboard export --format table --include-noncomparable --metrics both
cat <<EOF
   What ran: $MODEL, zero-shot only (the 5-shot views stay empty),
   $what,
   on the project's bundled sample data (a few items per task, not the official test sets).
   Such a run is labelled sample/limited and never ranked beside full runs on the official
   data: its rank is empty ("-"); the UI lists it when non-comparable runs are shown.
   Two rows: lm-eval (what the harness computes, as in the paper's tables) and as-specified
   (the paper's own metrics for WIC, HS, LS, NER, RE and SUM; the switch "Metrics" in the UI).
EOF

echo "== the run's mean CPS with its 95 % interval (a paired item bootstrap of its per-item file, items.parquet)"
$PY -m leaderboard export --format json --include-noncomparable 2>/dev/null | $PY -c '
import json, sys
for row in json.load(sys.stdin):
    low, high = row.get("avg_cps_low"), row.get("avg_cps_high")
    interval = "[%.2f, %.2f]" % (low, high) if low is not None else "- (no per-item data)"
    print("   %s %s-shot: mean CPS %s, 95 %% CI %s" % (row["model"], row["num_fewshot"], row["avg_cps"], interval))
'

echo "== all results as one table, loaded with datasets (contents.parquet)"
$PY -c "import datasets; t = datasets.load_dataset('parquet', data_files='$EVALITA_DATA_DIR/results/contents.parquet', split='train'); print(t); print(t.select_columns(['model', 'track', 'setting', 'avg_cps', 'avg_cps_low', 'avg_cps_high', 'as_specified_avg_cps', 'results_path']).to_pandas().to_string())"
echo "   re-run a slice of it here and compare: $PY -m backend reproduce RESULTS_PATH --limit 2 (the path above)"

echo "== what the run cost: energy (NVML's counter on a GPU) and tokens per task, by the run's tokenizer"
$PY -c "
import datasets
t = datasets.load_dataset('parquet', data_files='$EVALITA_DATA_DIR/results/contents.parquet', split='train').to_pandas()
for _, r in t[t.model == '$MODEL'].iterrows():
    print('   energy:', r.energy_note)
    print('   tokens in / out / reasoning: %s / %s / %s over %s scored items' % (r.input_tokens, r.output_tokens, r.reasoning_tokens, r.scored_items))
"

echo "== every run as Every Eval Ever records, checked by the every-eval-ever validator"
$PY -m leaderboard export --format eee "$EVALITA_DATA_DIR/eee"
echo "== the model's .eval_results file for its Hub page (dry run; a demo run is marked NOT COMPARABLE)"
$PY -m leaderboard hub-results "$MODEL" --dry-run --include-noncomparable > "$EVALITA_DATA_DIR/hub-results-dry-run.txt"
head -16 "$EVALITA_DATA_DIR/hub-results-dry-run.txt"
echo "   … all of it, with the pull request's text: $EVALITA_DATA_DIR/hub-results-dry-run.txt"

if [ "${DEMO_NO_SERVE:-0}" = 1 ]; then exit 0; fi
echo "== serving the leaderboard on http://${GRADIO_SERVER_NAME:-127.0.0.1}:${GRADIO_SERVER_PORT:-7860} (Ctrl-C to stop)"
exec $PY app.py
