#!/usr/bin/env bash
# Walks whose output docs/gate.md and docs/history.md show, made for real in a temporary copy of the checkout's
# configs/ and data/ (shown as "."), BM25 only so each takes seconds. scripts/docs_outputs.py pastes the output.
#   corpus-change   docs/gate.md: three documents added to the demo collection, then one question reworded
#   history-corpus  docs/history.md: the same three documents, gated against the history instead of a baseline folder
#   demo-unchanged  docs/gate.md: the demo's statistics of the pair, then the demo checked against its own baseline
#   history-model   docs/history.md: the demo's `production` switched from MiniLM to BM25, gated against the history
#   history-timeline docs/history.md: the copy made a git checkout, `production` BM25, then a legacy page added,
#                   MiniLM in production, a query prompt in the task (a commit and a run each), then `history`
#                   (MiniLM's vectors from the checkout's embedding cache, if it has one)
#   history-timeline-json  the same, then the model step of `history --format json` (abridged)
# (demo-unchanged and history-model encode MiniLM's 425 texts: a minute or two on a laptop)
set -euo pipefail
SCENARIO=${1:?usage: scripts/gate-walks.sh corpus-change|history-corpus|demo-unchanged|history-model|history-timeline|history-timeline-json}
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

timeline() {  # the four commits and runs of history-timeline
  if [ -d "$REPO/results/private-mteb/embeddings" ]; then
    mkdir -p results/private-mteb/embeddings
    (cd "$REPO/results/private-mteb/embeddings" && find . -mindepth 1 -maxdepth 1 ! -name rerank \
      -exec cp -r {} "$WALK/results/private-mteb/embeddings/" \;)
  fi
  printf 'name: prod\ntasks: [../tasks/northwind-kb.yaml]\nmodels:\n  - name: bm25\n    label: production\n%s\n' \
    'results_dir: ../../results' > configs/benchmarks/prod.yaml
  echo 'history: ../../history' >> configs/benchmarks/prod.yaml
  git init -q . && git config user.email docs@example.com && git config user.name docs
  step() { git add -A configs data && git commit -qm "$1" && private-mteb run -c configs/benchmarks/prod.yaml >/dev/null 2>&1; }
  step "BM25 in production"
  cat >> data/demo_kb/corpus.jsonl <<'DOCS'
{"_id": "kb-vpn-legacy", "title": "VPN setup (legacy client, 2019)", "text": "Before the 2020 migration the VPN used the Cisco AnyConnect client: install it from the old software portal and connect to vpn-old.northwind.example. This page is kept for reference; the legacy gateway no longer accepts logins."}
DOCS
  step "a legacy VPN page"
  sed -i 's|^  - name: bm25|  - name: sentence-transformers/all-MiniLM-L6-v2|' configs/benchmarks/prod.yaml
  step "MiniLM in production"
  echo 'prompts: {query: "Given an employee question, retrieve the wiki page that answers it"}' \
    >> configs/tasks/northwind-kb.yaml
  step "a query prompt"
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
  history-timeline)
    timeline
    show private-mteb history -c configs/benchmarks/prod.yaml ;;
  history-timeline-json)
    timeline
    echo "\$ private-mteb history -c configs/benchmarks/prod.yaml --format json   # the model step, abridged"
    private-mteb history -c configs/benchmarks/prod.yaml --format json | python -c '
import json, sys, textwrap
keys = ["time", "candidate", "model", "metric", "mean", "ci_low", "ci_high", "corpus_size", "corpus_delta", "changed",
        "pairing", "diff", "diff_ci", "p_value", "significant"]
step = next(s for t in json.load(sys.stdin)["timelines"] for s in t["steps"] if "model" in s["changed"])
step["pairing"] = {k: step["pairing"][k] for k in ("paired", "added", "removed", "changed")}
print(textwrap.fill(json.dumps({k: step[k] for k in keys if k in step}), 118, break_long_words=False,
                    break_on_hyphens=False, subsequent_indent=" "))' ;;
  *) echo "scripts/gate-walks.sh: unknown scenario '$SCENARIO'" >&2; exit 2 ;;
esac
