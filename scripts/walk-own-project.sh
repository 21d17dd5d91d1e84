#!/usr/bin/env bash
# The README's "Your own project, step by step", walked for real: an export in an empty folder outside the
# checkout -> init -> run -> stats -> baseline save + commit -> check (exit 0), with the checkout's .venv on PATH.
# Prints each shown command as "$ cmd" and its output; scripts/docs-outputs.sh pastes that into the README.
# The demo knowledge base's files stand in for the export. Slow-ish: one MiniLM encode of 425 texts.
set -euo pipefail
source "$(dirname "$0")/docs-show.sh" my-search "~/my-search"
git init -q
mkdir export && cp "$REPO/data/demo_kb/corpus.jsonl" "$REPO/data/demo_kb/evalset.jsonl" export/
show private-mteb init export
private-mteb run >/dev/null 2>&1   # without -c: the project's only benchmark config
show private-mteb baseline save
git add configs baseline && git -c user.name=walk -c user.email=walk@localhost commit -qm "retrieval baseline"
show_rc private-mteb check --baseline baseline
