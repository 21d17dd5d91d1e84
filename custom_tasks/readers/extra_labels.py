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
from ..errors import ProblemLog
from ._io import Table, as_id, read_table, resolve

FIELDS = ("query_id", "doc_id", "grade")


def read_labels(path: Path, collection: Collection, default_split: str | None = None) -> list[dict[str, Any]]:
    """Validated rows (query and document known, grade an integer >= 0); bad rows -> every one as a file:line
    line, all at once (``ProblemLog``)."""
    log = ProblemLog()
    t = read_table(Path(path), "utf-8", "labels", log=log)
    t.require_columns(list(FIELDS))
    splits = collection.splits
    out = []
    seen: dict[tuple[str, str, str], int] = {}
    with log.reading():
        for loc, row in t.rows:
            with t.checking():
                out.append(_checked(t, loc, row, collection, splits, default_split, seen))
    log.check()
    return out


def _checked(t: Table, loc: int, row: dict[str, Any], collection: Collection, splits: list[str],
             default_split: str | None, seen: dict[tuple[str, str, str], int]) -> dict[str, Any]:
    """One labels row, checked (see ``read_labels``)."""
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
    return {**row, "query_id": qid, "doc_id": doc_id, "grade": grade, "split": split}


def merge_labels(collection: Collection, labels_file: str, base_dir: Path) -> Collection:
    """The collection with the labels file's judgments added to its qrels (in place, returned)."""
    for r in read_labels(resolve(base_dir, labels_file), collection):
        collection.qrels.setdefault(r["split"], {}).setdefault(r["query_id"], {})[r["doc_id"]] = r["grade"]
    return collection
