#!/usr/bin/env bash
# The demo: MiniLM (offline package) vs BM25 on the Northwind knowledge base, then statistics
# and the public leaderboard next to the private scores. No network needed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/private-mteb run "$@"
.venv/bin/private-mteb stats --metric ndcg_at_10 --by source
.venv/bin/private-mteb compare --benchmark "MTEB(eng, v2)" --brief
