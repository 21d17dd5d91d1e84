#!/usr/bin/env bash
# The whole test suite, slow tests included (SciFact with a real model: minutes).
# Quick local run: scripts/test.sh -m "not slow"  (2 workers on a 2-core machine)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# Spread over the CPU cores (pytest-xdist), each test file on one worker so a module's shared fixtures are built
# once; PRIVATE_MTEB_TEST_WORKERS=0 runs everything in this one process (CI's .ci/run does, for the slow suite).
.venv/bin/python -m pytest -q -n "${PRIVATE_MTEB_TEST_WORKERS:-auto}" --dist loadfile "$@"
