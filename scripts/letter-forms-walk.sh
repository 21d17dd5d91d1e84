#!/usr/bin/env bash
# docs/lint.md and docs/collections.md, walked for real: the generated Romanian collection (tests/romanian_fixture.py,
# seed 0) as a team would export it: documents typed with ș ț (comma below), questions with ş ţ (cedilla), one
# document retyped in the cedilla form (doc900), one question copied from its document (q900), and two long
# documents (doc901-902: five paragraphs each). Prints each shown command as "$ cmd" and its output; the temporary
# folder is shown as ~/ro-kb. MiniLM's tokenizer is read from its offline package (no model is run).
# Usage: scripts/letter-forms-walk.sh [validate|lint]  (default: both)
set -euo pipefail
source "$(dirname "$0")/docs-show.sh" ro-kb "~/ro-kb"
PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}" python - <<'PY'
import json
from pathlib import Path

from tests.romanian_fixture import retyped_duplicate, romanian_collection, to_cedilla, write_romanian_collection

folder = write_romanian_collection(Path("ro_kb"), query_letters="cedilla")
docs = romanian_collection(0).corpus
copied = " ".join(docs["doc010"]["text"].split()[:12])
long = [" ".join(d["text"] for d in list(docs.values())[i:i + 5]) for i in (20, 40)]
with open(folder / "corpus.jsonl", "a", encoding="utf-8") as f:
    f.write(json.dumps({"_id": "doc900", "title": retyped_duplicate(docs["doc005"]["title"]),
                        "text": retyped_duplicate(docs["doc005"]["text"])}, ensure_ascii=False) + "\n")
    for i, text in enumerate(long):
        f.write(json.dumps({"_id": f"doc90{i + 1}", "title": "", "text": text}, ensure_ascii=False) + "\n")
with open(folder / "queries.jsonl", "a", encoding="utf-8") as f:
    f.write(json.dumps({"_id": "q900", "text": to_cedilla(copied)}, ensure_ascii=False) + "\n")
with open(folder / "qrels" / "test.tsv", "a", encoding="utf-8") as f:
    f.write("q900\tdoc010\t2\n")
Path("ro_kb.yaml").write_text("name: RoKB\ndescription: generated Romanian procedures\nsource:\n  format: beir\n"
                              "  path: ro_kb\nsplits: [test]\nlanguages: [ron-Latn]\n")
Path("lint.yaml").write_text("name: ro\ntasks: [ro_kb.yaml]\nmodels:\n"
                             "  - name: sentence-transformers/all-MiniLM-L6-v2\n  - name: bm25\n")
PY
if [ "${1:-all}" != lint ]; then
  show private-mteb tasks validate ro_kb.yaml
  show private-mteb tasks validate ro_kb.yaml -c lint.yaml
fi
if [ "${1:-all}" != validate ]; then
  show private-mteb tasks lint ro_kb.yaml -c lint.yaml
fi
