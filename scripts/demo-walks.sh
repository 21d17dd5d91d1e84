#!/usr/bin/env bash
# Runs from the checkout whose output the docs show, walked for real in a temporary copy of the checkout's configs/
# and data/ (so the shown run starts from a known results folder, whatever the checkout's own holds), the copy
# shown as "." (the reader's checkout). Each scenario prints its shown commands as "$ cmd" and their output;
# scripts/docs-outputs.sh pastes that into the pages (scripts/docs-show.sh writes the paths as the reader's).
#   demo          docs/running.md: the demo on a fresh results folder (MiniLM encoded), then its statistics
#   force         docs/running.md: the demo's run again with --force (MiniLM's vectors come from its cache)
#   vector-db     docs/candidates.md: the databases with MiniLM's run already stored
#   pipeline      docs/candidates.md: rerank + run file with BM25 and MiniLM already stored
#   scifact-lint  docs/lint.md: `tasks lint` on SciFact (the BEIR files in ../shared), nothing run before
#   latency       docs/latency.md: the latency demo stored (beside the demo, as scripts/demo.sh leaves it), then
#                 its latency pass; kept in results/docs-walks/latency for the next scenario
#   latency-stats docs/latency.md: `stats` with the cost columns of that very pass (the pass made first if missing)
# The latency scenarios print tables at 170 columns (COLUMNS=170), the width their columns need.
# "Already stored" is made here: the demo is run quietly first, with the checkout's embedding cache copied in (its
# reranker score cache left out) so MiniLM's 425 texts are not encoded again.
set -euo pipefail
SCENARIO=${1:?usage: scripts/demo-walks.sh demo|force|vector-db|pipeline|scifact-lint|latency|latency-stats}
LATENCY_DIR="$(cd "$(dirname "$0")/.." && pwd -P)/results/docs-walks/latency"
case "$SCENARIO" in
  latency) rm -rf "$LATENCY_DIR"; export DOCS_WALK_KEEP=$LATENCY_DIR COLUMNS=170 ;;
  latency-stats) export DOCS_WALK_KEEP=$LATENCY_DIR COLUMNS=170 ;;
esac
source "$(dirname "$0")/docs-show.sh" "docs-$SCENARIO" "."
[ -d configs ] || cp -r "$REPO/configs" "$REPO/data" .

stored_demo() {  # the demo's MiniLM and BM25 stored, as after `private-mteb run -c configs/benchmarks/demo.yaml`
  local cache="$REPO/results/private-mteb/embeddings"
  if [ -d "$cache" ]; then
    mkdir -p results/private-mteb/embeddings
    (cd "$cache" && find . -mindepth 1 -maxdepth 1 ! -name rerank -exec cp -r {} "$WALK/results/private-mteb/embeddings/" \;)
  fi
  private-mteb run -c configs/benchmarks/demo.yaml >/dev/null 2>&1
}

case "$SCENARIO" in
  demo)
    show private-mteb run -c configs/benchmarks/demo.yaml
    show private-mteb stats -c configs/benchmarks/demo.yaml --metric ndcg_at_10 --by source ;;
  force)
    stored_demo
    show private-mteb run -c configs/benchmarks/demo.yaml --force ;;
  vector-db)
    stored_demo
    show private-mteb run -c configs/benchmarks/vector-db-demo.yaml
    show private-mteb experiments -c configs/benchmarks/vector-db-demo.yaml
    show private-mteb check -c configs/benchmarks/vector-db-demo.yaml --baseline all-MiniLM-L6-v2 \
      --candidate "lancedb hnsw ef16 top-10" ;;
  pipeline)
    stored_demo
    show private-mteb run -c configs/benchmarks/pipeline-demo.yaml
    show private-mteb experiments -c configs/benchmarks/pipeline-demo.yaml
    show private-mteb stats -c configs/benchmarks/pipeline-demo.yaml \
      --models "BM25,prod search (run file),BM25 +rerank MiniLM d50" -m ndcg_at_10 --by source
    show_rc private-mteb check -c configs/benchmarks/pipeline-demo.yaml --baseline BM25 \
      --candidate "prod search (run file)" ;;
  scifact-lint)
    SCIFACT=$(cd "${SHARED:-$REPO/../shared}/datasets/scifact" 2>/dev/null && pwd -P) \
      || { echo "scripts/demo-walks.sh: no ../shared/datasets/scifact beside the checkout: set SHARED=PATH" >&2; exit 2; }
    sed "s|^  path: .*|  path: $SCIFACT|" "$REPO/tests/configs/scifact.yaml" > scifact.yaml
    printf 'name: scifact-lint\ntasks: [scifact.yaml]\nmodels:\n  - name: sentence-transformers/all-MiniLM-L6-v2\n  - name: bm25\n' \
      > scifact-lint.yaml
    show private-mteb tasks lint SciFactLocal -c scifact-lint.yaml | sed "s|$SCIFACT|../shared/datasets/scifact|g" ;;
  latency|latency-stats)
    if [ ! -f .latency-done ]; then
      stored_demo
      private-mteb run -c configs/benchmarks/latency-demo.yaml >/dev/null 2>&1
      if [ "$SCENARIO" = latency ]; then
        show private-mteb latency -c configs/benchmarks/latency-demo.yaml --threads 1 --repeats 3
      else
        private-mteb latency -c configs/benchmarks/latency-demo.yaml --threads 1 --repeats 3 >/dev/null 2>&1
      fi
      touch .latency-done
    fi
    if [ "$SCENARIO" = latency-stats ]; then
      show private-mteb stats -c configs/benchmarks/latency-demo.yaml -m ndcg_at_10 --by source
      rm -rf "$WALK"
    fi ;;
  *) echo "scripts/demo-walks.sh: unknown scenario '$SCENARIO'" >&2; exit 2 ;;
esac
