#!/usr/bin/env bash
# The demo: MiniLM (offline package) vs BM25 on the Northwind knowledge base — plus all-mpnet-base-v2
# when its offline parts are installed (PRIVATE_MTEB_WITH_MPNET=1) — then statistics and the public
# leaderboard next to the private scores, then the pipeline candidates with their latency and index size.
# No network needed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
CFG=configs/benchmarks/demo.yaml
if .venv/bin/python -c "import sys; from runners.execution.encoding.offline_packages import offline_model_path as p; sys.exit(p('sentence-transformers/all-mpnet-base-v2') is None)" 2>/dev/null; then
  CFG=configs/benchmarks/demo-mpnet.yaml
fi
.venv/bin/private-mteb run -c "$CFG" "$@"
.venv/bin/private-mteb stats -c "$CFG" --metric ndcg_at_10 --by source
.venv/bin/private-mteb compare --benchmark "MTEB(eng, v2)" --brief
.venv/bin/private-mteb report -c "$CFG" -o results/report.html   # one self-contained file to share
# Quality next to its price: + their RRF hybrid, BM25 reranked by MiniLM, a production run file; then each
# candidate timed one query at a time (MiniLM and BM25 are reused from the run above)
LAT=configs/benchmarks/latency-demo.yaml
.venv/bin/private-mteb run -c "$LAT" --latency "$@"
.venv/bin/private-mteb stats -c "$LAT" --metric ndcg_at_10 --by source \
  --models "all-MiniLM-L6-v2,BM25,all-MiniLM-L6-v2 +bm25 rrf60,BM25 +rerank MiniLM d20,prod search (run file)"
.venv/bin/private-mteb report -c "$LAT" -o results/report-cost.html
# the next step: the same tool on your own files, from any folder
echo "next: source $PWD/.venv/bin/activate && private-mteb init PATH/TO/YOUR/EXPORT   (README: Your own project, step by step)"
