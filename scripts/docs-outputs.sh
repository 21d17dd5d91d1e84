#!/usr/bin/env bash
# Re-run every command whose output the README and docs/ show, and rewrite those blocks in place.
# A shown output is marked in the Markdown as
#   <!-- docs-output: COMMAND -->
#   ```text
#   ...
#   ```
#   <!-- /docs-output -->
# COMMAND runs from the checkout root with .venv on PATH (`private-mteb ...` or a script); it needs the demo's
# results, so the demo benchmark is run first (cached after the first time). Slow the first time (minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
private-mteb run -c configs/benchmarks/demo.yaml >/dev/null
exec .venv/bin/python scripts/docs_outputs.py "$@"
