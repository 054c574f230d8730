#!/usr/bin/env bash
# The one-command GPU check: bash scripts/gpu_check.sh OUT_DIR [extra `canter bench gpu` flags]
# Runs from a source checkout without an editable install (python3 -m canter with src/ on PYTHONPATH),
# e.g. on a CUDA machine whose missing packages came from ../shared/gpu/wheelhouse.sh + install.sh
# (then PYTHONPATH already holds /tmp/site). Without CUDA it runs what needs none and says what it skipped.
set -euo pipefail
OUT=${1:?usage: scripts/gpu_check.sh OUT_DIR [canter bench gpu flags]}
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
cd "$ROOT"
exec "$PY" -m canter bench gpu --out "$OUT" "$@"
