#!/usr/bin/env bash
# Walks whose output docs/gate.md and docs/history.md show, on the generated collection of tests/test_one_verdict.py
# (a weighted MiniLM+BM25 hybrid beats both of its parts by construction; MiniLM encodes 80 short texts), made for
# real in a temporary project folder shown as ~/my-search, the project's own config found without -c.
#   best      docs/history.md: the project run once, then the best line of `stats` and the last of `history`
#   variant   docs/gate.md: the run copied to base/, MiniLM set to max_seq_length: 4, run again, then `check`
#             against base/ and the best line of `stats`
set -euo pipefail
SCENARIO=${1:?usage: scripts/verdict-walks.sh best|variant}
source "$(dirname "$0")/docs-show.sh" "docs-verdict-$SCENARIO" "~/my-search"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"

# "$ PIPELINE" and what it prints, the paths written as the reader's (show takes one command, not a pipeline);
# a table piped to grep is wrapped at $COLUMNS (80 when not a terminal): the pipelines set it wide
show_pipe() { echo "\$ $1"; bash -c "$1" 2>&1 | as_reader; }

python -c 'from pathlib import Path; from tests.test_one_verdict import _project; _project(Path("."))'
private-mteb run > .run.out 2>&1 || { cat .run.out >&2; exit 2; }
case "$SCENARIO" in
  best)
    show_pipe "COLUMNS=250 private-mteb stats -m ndcg_at_10 | grep best:"
    show_pipe "private-mteb history | tail -1" ;;
  variant)
    cp -r results base
    python -c 'from pathlib import Path; from tests.test_one_verdict import MINILM, _bench
_bench(Path("."), {"name": MINILM, "label": "MiniLM", "max_seq_length": 4})'
    echo "# results copied to base/, then MiniLM set to max_seq_length: 4 in configs/benchmarks/bench.yaml and run"
    private-mteb run > .run.out 2>&1 || { cat .run.out >&2; exit 2; }
    show_rc private-mteb check --baseline base
    show_pipe "COLUMNS=250 private-mteb stats -m ndcg_at_10 | grep best:" ;;
  *) echo "scripts/verdict-walks.sh: unknown scenario '$SCENARIO'" >&2; exit 2 ;;
esac
