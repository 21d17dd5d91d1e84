"""``source.labels_file:``: judgments added after the collection was made (pooled annotation), merged into qrels.

One JSONL row per judgment: ``{"query_id", "doc_id", "grade", "split", "annotator", "date", "source"}``
(`private-mteb labels import` writes it). A row overrides the collection's own grade for that pair only
when it is a pooled judgment of an unlabelled pair or of a pair it judged before; the merged qrels change
the collection's content hash, so every stored result is re-scored for the new revision.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..collection import Collection
from ..validate import parse_grade
from ._io import as_id, read_table, resolve

FIELDS = ("query_id", "doc_id", "grade")


def read_labels(path: Path, collection: Collection, default_split: str | None = None) -> list[dict[str, Any]]:
    """Validated rows (query and document known, grade an integer >= 0); bad input -> one file:line error."""
    t = read_table(Path(path), "utf-8", "labels")
    t.require_columns(list(FIELDS))
    splits = collection.splits
    out = []
    seen: dict[tuple[str, str, str], int] = {}
    for loc, row in t.rows:
        qid, doc_id = as_id(t.get(loc, row, "query_id")), as_id(t.get(loc, row, "doc_id"))
        split = as_id(row.get("split")) or default_split or (splits[0] if len(splits) == 1 else "")
        if not split:
            raise t.error(loc, f"no split given and the collection has several ({', '.join(splits)}): add 'split'")
        if qid not in collection.queries:
            raise t.error(loc, f"unknown query id {qid!r} (not in the collection's queries)")
        if doc_id not in collection.corpus:
            raise t.error(loc, f"unknown document id {doc_id!r} (not in the corpus)")
        grade = parse_grade(t, loc, t.get(loc, row, "grade"))
        key = (split, qid, doc_id)
        if key in seen:
            raise t.error(loc, f"({qid!r}, {doc_id!r}) in split {split!r} is judged twice (first at line "
                               f"{seen[key]}): keep one row")
        seen[key] = loc
        out.append({**row, "query_id": qid, "doc_id": doc_id, "grade": grade, "split": split})
    return out


def merge_labels(collection: Collection, labels_file: str, base_dir: Path) -> Collection:
    """The collection with the labels file's judgments added to its qrels (in place, returned)."""
    for r in read_labels(resolve(base_dir, labels_file), collection):
        collection.qrels.setdefault(r["split"], {}).setdefault(r["query_id"], {})[r["doc_id"]] = r["grade"]
    return collection
