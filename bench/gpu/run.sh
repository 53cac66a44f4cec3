#!/usr/bin/env bash
# The GPU benchmark, one command, on the GPU machine (repository root as working directory):
#
#   bench/gpu/run.sh [bench/bench_speed.py options]      e.g.  bench/gpu/run.sh --fewshot 5 --limit 200
#
# 1. installs the carried wheels (.whl/, fetched beforehand here by bench/gpu/wheels.sh);
# 2. builds, once per machine, real-size synthetic data, a BPE tokenizer and the random-weight
#    8B Llama (bench/gpu/synthetic.py) under $EVALITA_GPU_WORK (default /tmp/evalita-gpu);
# 3. runs bench/bench_speed.py: hf then hf-fast through the worker's runner, bf16 on cuda,
#    printing per phase wall time, tokens/s, MFU and the ratio, and the score agreement;
#    the JSON lands in $OUT (the device tool's return folder) or artifacts/.
#    It also records each path's GPU energy (run.cost.energy: NVML's counter, idle power ×
#    time subtracted; "energy" in the JSON). No GPU was lent to the session that added it
#    (issue 33), so no real kWh figure has been recorded yet: the first GPU run records one.
#
# A complete reference run is hours long (the generative tasks: ~2.6–8.6 h on an H100), far
# over one command's 10 minutes: pass --limit (documents per prompt task) and, for
# generation, --max-gen-toks; --tasks te,sa,… picks tasks.  CPU dry run of the same path:
# EVALITA_GPU_MODEL=tiny DEVICE=cpu SCALE=0.02 bench/gpu/run.sh --limit 4
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
PYTHON=${PYTHON:-python3}
WORK=${EVALITA_GPU_WORK:-/tmp/evalita-gpu}
DEVICE=${DEVICE:-cuda}
if [ ! -f "$WORK/model/config.json" ]; then
  "$PYTHON" bench/gpu/synthetic.py "$WORK" --model "${EVALITA_GPU_MODEL:-8b}" --device "$DEVICE" --scale "${SCALE:-1}"
fi
RESULTS=${OUT:-artifacts}
mkdir -p "$RESULTS"
exec "$PYTHON" bench/bench_speed.py --model "$WORK/model" --data "local:$WORK/data" --device "$DEVICE" \
  --out "$RESULTS/bench_speed_$(date -u +%Y%m%dT%H%M%SZ).json" "$@"
