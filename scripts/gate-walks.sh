#!/usr/bin/env bash
# Walks whose output docs/gate.md and docs/history.md show, made for real in a temporary copy of the checkout's
# configs/ and data/ (shown as "."), BM25 only so each takes seconds. scripts/docs_outputs.py pastes the output.
#   corpus-change   docs/gate.md: three documents added to the demo collection, then one question reworded
#   history-corpus  docs/history.md: the same three documents, gated against the history instead of a baseline folder
set -euo pipefail
SCENARIO=${1:?usage: scripts/gate-walks.sh corpus-change|history-corpus}
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
  *) echo "scripts/gate-walks.sh: unknown scenario '$SCENARIO'" >&2; exit 2 ;;
esac
