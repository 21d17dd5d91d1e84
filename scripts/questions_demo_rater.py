#!/usr/bin/env python
"""The docs walk's stand-in rater for the questions sampled from the demo's query log (docs/questions.md).

A person grades the pool (`labels pool` writes it; a grades column to fill, or the judging app); the walk has no
person, so this script fills the pool's grades for the sampled questions as someone who knows the Northwind
knowledge base would: the log generator (scripts/query_log_generator.py) wrote every clean search around one topic
phrase, and `ANSWERS` names the document each phrase asks about. A pooled pair of a sampled question gets 2 when its
document is that one, else 0; a question holding no phrase (a planted one, say) is left ungraded and stays awaiting
judgment; the pool's other pairs (the task's own questions) are left empty, i.e. skipped by `labels import`.
It is a stand-in for a person, and the docs say so.

Usage: python scripts/questions_demo_rater.py pool.csv --added configs/tasks/northwind-kb.added_questions.jsonl
       -o graded.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.query_log_generator import ANSWERS  # noqa: E402



def grade(query: str) -> str | None:
    """The document the longest topic phrase in `query` asks about (None: no phrase)."""
    words = f" {' '.join(query.lower().replace('?', ' ').split())} "
    found = [p for p in ANSWERS if f" {p} " in words]
    return ANSWERS[max(found, key=len)] if found else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pool", type=Path, help="the pool CSV `labels pool` wrote")
    ap.add_argument("--added", type=Path, required=True, help="the task's added-questions file (JSONL)")
    ap.add_argument("-o", "--out", type=Path, default=Path("graded.csv"))
    args = ap.parse_args()
    sampled = {json.loads(line)["query_id"] for line in args.added.read_text(encoding="utf-8").splitlines() if line}
    with args.pool.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = list(reader.fieldnames or []), list(reader)
    graded, questions, left = 0, set(), set()
    for row in rows:
        if row["query_id"] not in sampled:
            continue
        doc = grade(row["query"])
        if doc is None:
            left.add(row["query_id"])
            continue
        row["grade"] = "2" if row["doc_id"] == doc else "0"
        graded += 1
        questions.add(row["query_id"])
    with args.out.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"stand-in rater: graded {graded} pooled pair(s) of {len(questions)} sampled question(s) -> {args.out}; "
          f"{len(left)} question(s) left ungraded (no topic phrase)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
