#!/usr/bin/env python
"""The docs walk's stand-in rater for the questions sampled from the demo's query log (docs/questions.md).

A person grades sampled questions (a grades file for `labels import`, or the judging app); the walk has no person,
so this script grades as someone who knows the Northwind knowledge base would grade the searches the demo log was
made of: the log generator (tests/query_log_fixture.py) wrote every clean search around one topic phrase, and
`ANSWERS` names the document each phrase asks about. A question holding a phrase (the longest one found) gets grade 2
for that document; a question holding none (a planted one, say) is left ungraded and stays awaiting judgment.
It is a stand-in for a person, and the docs say so.

Writes a grades CSV (task, query_id, doc_id, grade) for `private-mteb labels import`.
Usage: python scripts/questions_demo_rater.py configs/tasks/northwind-kb.added_questions.jsonl -o grades.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.query_log_fixture import ANSWERS  # noqa: E402

TASK = "NorthwindKBRetrieval"


def grade(query: str) -> str | None:
    """The document the longest topic phrase in `query` asks about (None: no phrase)."""
    words = f" {' '.join(query.lower().replace('?', ' ').split())} "
    found = [p for p in ANSWERS if f" {p} " in words]
    return ANSWERS[max(found, key=len)] if found else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("added", type=Path, help="the task's added-questions file (JSONL)")
    ap.add_argument("-o", "--out", type=Path, default=Path("grades.csv"))
    args = ap.parse_args()
    rows, left = [], 0
    for line in args.added.read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        if q.get("relevant"):
            continue  # graded already
        doc = grade(q["query"])
        if doc is None:
            left += 1
            continue
        rows.append({"task": TASK, "query_id": q["query_id"], "doc_id": doc, "grade": 2})
    with args.out.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, ["task", "query_id", "doc_id", "grade"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"stand-in rater: graded {len(rows)} question(s) -> {args.out}; {left} left ungraded (no topic phrase)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
