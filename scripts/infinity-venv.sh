#!/usr/bin/env bash
# Create .venv-infinity (once): Infinity (infinity-emb, an OpenAI-compatible /v1/embeddings server from PyPI) for the
# real-server test of `kind: endpoint` (tests/test_endpoint_server.py) and benchmarks/bench_endpoint.py.
# Its own virtual environment: infinity-emb pins an older sentence-transformers than private-mteb. torch is installed
# first, pinned to the CPU build, so nothing pulls a CUDA one. Idempotent: a complete venv is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${PRIVATE_MTEB_INFINITY_VENV:-.venv-infinity}
INFINITY_VERSION=0.0.78
marker="$VENV/.installed-$INFINITY_VERSION"
if [ -f "$marker" ] && [ -x "$VENV/bin/infinity_emb" ]; then
  exit 0
fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q "torch==2.13.0"
"$VENV/bin/python" -m pip install -q "infinity-emb[server,torch]==$INFINITY_VERSION"
touch "$marker"
