#!/usr/bin/env bash
# The whole test suite, slow tests included (SciFact with a real model: minutes).
# Quick local run: scripts/test.sh -m "not slow"
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/python -m pytest -q "$@"
