#!/usr/bin/env bash
# Walks whose output docs/gate.md and docs/history.md show, made for real in a temporary copy of the checkout's
# configs/ and data/ (shown as "."), BM25 only so each takes seconds. scripts/docs_outputs.py pastes the output.
#   corpus-change   docs/gate.md: three documents added to the demo collection, then one question reworded
#   history-corpus  docs/history.md: the same three documents, gated against the history instead of a baseline folder
#   demo-unchanged  docs/gate.md: the demo's statistics of the pair, then the demo checked against its own baseline
#   history-model   docs/history.md: the demo's `production` switched from MiniLM to BM25, gated against the history
# (the last two encode MiniLM's 425 texts: a minute or two on a laptop)
set -euo pipefail
SCENARIO=${1:?usage: scripts/gate-walks.sh corpus-change|history-corpus|demo-unchanged|history-model}
source "$(dirname "$0")/docs-show.sh" "docs-$SCENARIO" "."
cp -r "$REPO/configs" "$REPO/data" .

# bench.yaml: the demo collection with BM25, results (and history) beside it
printf 'name: bench\ntasks: [configs/tasks/northwind-kb.yaml]\nmodels:\n  - name: bm25\n    label: BM25\nresults_dir: results\n' > bench.yaml

add_documents() {  # three new pages in the collection, as a team adds them
  cat >> data/demo_kb/corpus.jsonl <<'DOCS'
{"_id": "kb-new-01", "title": "Printer fleet refresh 2027", "text": "The office printers in Portland and Austin are replaced by managed units in January. Print jobs go to the queue nw-print; badge release at the device."}
{"_id": "kb-new-02", "title": "Conference room booking etiquette", "text": "Book rooms in Google Calendar, release them when a meeting is cancelled, and keep recurring bookings under 8 weeks."}
{"_id": "kb-new-03", "title": "Quarterly access review", "text": "Every quarter, managers confirm the system access of their reports in the access review tool; unconfirmed access is removed after 14 days."}
DOCS
}

case "$SCENARIO" in
  corpus-change)
    private-mteb run -c bench.yaml >/dev/null 2>&1
    private-mteb baseline save base-results -c bench.yaml >/dev/null 2>&1
    add_documents
    private-mteb run -c bench.yaml >/dev/null 2>&1
    show_rc private-mteb check --baseline base-results -c bench.yaml
    sed -i 's/"query": "how do I set up the VPN on my mac"/"query": "how do I install the VPN on a macbook"/' \
      data/demo_kb/evalset.jsonl
    private-mteb run -c bench.yaml >/dev/null 2>&1
    show_rc private-mteb check --baseline base-results -c bench.yaml
    show private-mteb check --baseline base-results -c bench.yaml --allow-changed-data ;;
  history-corpus)
    printf 'history: history\n' >> bench.yaml
    private-mteb run -c bench.yaml >/dev/null 2>&1
    add_documents
    private-mteb run -c bench.yaml >/dev/null 2>&1
    show_rc private-mteb check -c bench.yaml --baseline history:last
    show private-mteb history -c bench.yaml ;;
  demo-unchanged)
    private-mteb run -c configs/benchmarks/demo.yaml >/dev/null 2>&1
    show private-mteb stats -c configs/benchmarks/demo.yaml --metric ndcg_at_10
    show private-mteb baseline save baseline -c configs/benchmarks/demo.yaml
    show private-mteb check -c configs/benchmarks/demo.yaml --baseline baseline/ ;;
  history-model)
    sed -e 's|^    label: all-MiniLM-L6-v2|    label: production|' -e '/^  - name: bm25/,/^    label: BM25/d' \
      -e 's|^results_dir: .*|results_dir: results\nhistory: history|' -e 's|^  - NorthwindKBRetrieval|  - configs/tasks/northwind-kb.yaml|' \
      configs/benchmarks/demo.yaml > prod.yaml
    private-mteb run -c prod.yaml >/dev/null 2>&1
    sed -i 's|^  - name: sentence-transformers/all-MiniLM-L6-v2.*|  - name: bm25|' prod.yaml
    private-mteb run -c prod.yaml >/dev/null 2>&1
    show_rc private-mteb check -c prod.yaml --baseline history:last ;;
  *) echo "scripts/gate-walks.sh: unknown scenario '$SCENARIO'" >&2; exit 2 ;;
esac
