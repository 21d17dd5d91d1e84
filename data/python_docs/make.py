"""Write corpus.jsonl: 400 paragraphs of the Python reference (pydoc_data.topics, shipped with CPython).

An off-topic "other collection" for the growth demo's `distractors:`: real technical prose, no download.
Run from anywhere: python data/python_docs/make.py
"""

import json
from pathlib import Path

import pydoc_data.topics as topics

N, MIN_CHARS = 400, 200

rows = []
for key in sorted(topics.topics):
    paras = [p.strip() for p in topics.topics[key].split("\n\n") if len(p.strip()) > MIN_CHARS]
    rows += [{"_id": f"py-{key}-{i:02d}", "title": key, "text": " ".join(p.split())} for i, p in enumerate(paras)]
rows = rows[:: max(1, len(rows) // N)][:N]  # spread over every topic, not the first few
out = Path(__file__).with_name("corpus.jsonl")
out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
print(f"{out}: {len(rows)} documents")
