#!/usr/bin/env bash
# The demo: MiniLM (offline package) vs BM25 on the Northwind knowledge base — plus all-mpnet-base-v2
# when its offline parts are installed (PRIVATE_MTEB_WITH_MPNET=1) — then statistics and the public
# leaderboard next to the private scores. No network needed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
CFG=configs/benchmarks/demo.yaml
if .venv/bin/python -c "import sys; from runners.execution.offline_packages import offline_model_path as p; sys.exit(p('sentence-transformers/all-mpnet-base-v2') is None)" 2>/dev/null; then
  CFG=configs/benchmarks/demo-mpnet.yaml
fi
.venv/bin/private-mteb run -c "$CFG" "$@"
.venv/bin/private-mteb stats -c "$CFG" --metric ndcg_at_10 --by source
.venv/bin/private-mteb compare --benchmark "MTEB(eng, v2)" --brief
.venv/bin/private-mteb report -c "$CFG" -o results/report.html   # one self-contained file to share
