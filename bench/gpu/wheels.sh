#!/usr/bin/env bash
# Fetch, on a machine with PyPI, the wheels the GPU machine lacks into .whl/ (gitignored;
# `run` carries it: carry=[".whl"]).  The GPU image has torch, transformers 5.17, pandas,
# pyarrow, scikit-learn, sacrebleu, tokenizers, but not lm-eval and its helpers; the fast
# path needs transformers' continuous-batching API as in this project's pin, so the same
# transformers travels too.  Versions are those of this checkout's .venv, so both machines
# run the same harness.  The list follows ../shared/gpu/README.md (unmodified-lm-eval runs).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
WHL=.whl
mkdir -p "$WHL"
version() { "$PY" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$1"; }
BINARY=(lm_eval transformers datasets evaluate dill multiprocess pytablewriter DataProperty mbstrdecoder
        pathvalidate tabledata tcolorpy typepy chardet nltk more_itertools defusedxml fsspec pytz
        pydantic pydantic_core annotated_types typing_inspection nvidia-ml-py)
SOURCE=(rouge_score sqlitedict word2number)  # published as sdists only: built here (pure Python)
for name in "${BINARY[@]}"; do
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$WHL" "$name==$(version "$name")"
done
for name in "${SOURCE[@]}"; do
  "$PY" -m pip wheel -q --no-deps -w "$WHL" "$name==$(version "$name")"
done
du -sh "$WHL"
