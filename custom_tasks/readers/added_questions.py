"""``source.added_questions:``: questions added after the collection was made (a query-log sample, generated
questions), read with the task's own questions for every source format.

One JSONL row per question, evalset-style: ``{"query_id", "query", "relevant": {doc_id: grade or null},
"tags": {"source": "log" | "llm:<model>", "stratum", "weight", "verified"}, "provenance": {...}, "split"?}``.
The file is only ever appended to (``runners/labels/questions/added_store.py``), and its bytes and its reviews'
are part of the collection's revision, so appending re-scores every stored result instead of reusing it.

Why the rules:
* a question with no graded document (``relevant`` empty or every grade null/"pending") is *awaiting
  judgment*: kept in ``queries`` (so `labels pool` pools it) but given no qrels, so mteb does not score it as 0;
* a generated question (``tags.verified: false``) is left out until a person accepts it, unless the task YAML
  says ``questions: {use_unverified: true}``: an unchecked LLM question measures the LLM, not the users;
* the reviews (``question_reviews.py``) apply before either rule: accept/edit verify, reject drops, a grade
  grades the question's source passage (``provenance.source_doc``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from ..collection import AddedQuestions, Collection
from ..errors import ProblemLog
from ..row_values import checked_id, parse_grade
from ._io import Table, as_id, is_missing, read_table, resolve
from .question_reviews import Review, read_reviews, reviews_path
from .tables import tag_value

PENDING = ("", "pending")


def file_fingerprint(*paths: Path) -> str:
    """sha256 of the files' bytes (a missing file counts as empty), each framed by its length."""
    h = hashlib.sha256()
    for p in paths:
        data = p.read_bytes() if p.is_file() else b""
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()[:16]


def source_kind(source: str | None) -> str:
    """The subset a question's ``source`` tag belongs to: human, log or generated (``llm``, ``llm:<model>``)."""
    s = (source or "").strip().lower()
    if s == "llm" or s.startswith("llm:") or s == "generated":
        return "generated"
    return s or "human"


def is_unverified(tags: dict[str, Any]) -> bool:
    """A question explicitly marked ``verified: false`` (a generated one nobody accepted yet)."""
    v = tags.get("verified")
    return v is False or (isinstance(v, str) and v.strip().lower() in ("false", "no", "0"))


def merge_added(collection: Collection, added: str, base_dir: Path, use_unverified: bool = False,
                wanted: list[str] | None = None) -> Collection:
    """The collection with the added questions (and their reviews) in it, in place, returned.

    ``wanted``: the source's ``splits:`` filter (rows of other splits are left out). Problems of the file:
    every bad row as ``file:line: problem``, all at once.
    """
    path = resolve(base_dir, added)
    review_file = reviews_path(path)
    log = ProblemLog()
    t = read_table(path, "utf-8", "added questions", log=log)
    rows: dict[str, tuple[int, dict[str, Any]]] = {}
    with log.reading():
        for loc, row in t.rows:
            with t.checking():
                qid = checked_id(t, loc, t.get(loc, row, "query_id"), "query")
                if qid in collection.queries:
                    raise t.error(loc, f"query id {qid!r} is already a question of the task: give the added "
                                       "question another id")
                if qid in rows:
                    raise t.error(loc, f"duplicate query id {qid!r} (first at line {rows[qid][0]})")
                rows[qid] = (loc, row)
    log.check()
    for qid in collection.queries:  # the task's own questions, untagged, were written by people: a subset too
        tags = collection.query_tags.setdefault(qid, {})
        if not tags.get("source"):
            tags["source"] = "human"
    reviews = read_reviews(review_file, set(rows))
    note = AddedQuestions(path=str(path), rows=len(rows), fingerprint=file_fingerprint(path, review_file))
    with log.reading():
        for qid, (loc, row) in rows.items():
            with t.checking():
                _add(t, loc, row, qid, collection, reviews.get(qid), use_unverified, wanted, note)
    log.check()
    collection.added = note
    return finish_added(collection)


def finish_added(collection: Collection) -> Collection:
    """Which added questions still await judgment (again after a labels file graded some of them)."""
    note = collection.added
    if note is not None:
        note.awaiting = collection.awaiting_judgment()
    return collection


def _add(t: Table, loc: int, row: dict[str, Any], qid: str, c: Collection, review: Review | None,
         use_unverified: bool, wanted: list[str] | None, note: AddedQuestions) -> None:
    """One added question into the collection, after its review; or counted as rejected / unverified."""
    text = row.get("query")
    if not isinstance(text, str) or not text.strip():
        raise t.error(loc, f"question {qid!r} has no text in 'query'")
    tags = row.get("tags") if isinstance(row.get("tags"), dict) else {}
    if row.get("tags") is not None and not isinstance(row.get("tags"), dict):
        raise t.error(loc, f"'tags' of question {qid!r} must be an object")
    kind = source_kind(tags.get("source"))
    grades = _relevant(t, loc, row, qid, c)
    if review is not None:
        if review.action == "reject":
            note.rejected[kind] += 1
            return
        tags = {**tags, "verified": True}
        text = review.text or text
        if review.grade is not None:
            source_doc = as_id((row.get("provenance") or {}).get("source_doc"))
            if source_doc not in c.corpus:
                raise t.error(loc, f"a review grades the source passage of question {qid!r}, but its "
                                   f"provenance.source_doc {source_doc!r} is not a document of the corpus")
            grades[source_doc] = review.grade
    if is_unverified(tags) and not use_unverified:
        note.unverified[kind] += 1
        return
    split = as_id(row.get("split")) or (c.splits[0] if len(c.splits) == 1 else "")
    if not split:
        raise t.error(loc, f"question {qid!r} names no 'split' and the task has several ({', '.join(c.splits)})")
    if wanted and split not in wanted:
        return
    c.queries[qid] = text.strip()
    c.query_tags[qid] = {str(k): _tag(v) for k, v in tags.items() if not is_missing(v)}
    graded = {d: g for d, g in grades.items() if g is not None}
    if graded:
        c.qrels.setdefault(split, {})[qid] = graded
    note.scored_or_awaiting.append(qid)


def _tag(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else tag_value(value)


def _relevant(t: Table, loc: int, row: dict[str, Any], qid: str, c: Collection) -> dict[str, int | None]:
    """doc id -> grade, None for a pending grade; every document must be in the corpus."""
    value = row.get("relevant")
    if is_missing(value) or value == "":
        return {}
    if not isinstance(value, dict):
        raise t.error(loc, f"'relevant' of question {qid!r} must be an object {{doc_id: grade or null}}")
    out: dict[str, int | None] = {}
    for doc_id, grade in value.items():
        doc_id = as_id(doc_id)
        if doc_id not in c.corpus:
            raise t.error(loc, f"question {qid!r} names document {doc_id!r}, which is not in the corpus")
        pending = is_missing(grade) or (isinstance(grade, str) and grade.strip().lower() in PENDING)
        out[doc_id] = None if pending else parse_grade(t, loc, grade)
    return out


def kinds_count(tags: dict[str, dict[str, str]], qids: list[str]) -> Counter[str]:
    """How many of ``qids`` are of each source kind (human / log / generated)."""
    return Counter(source_kind(tags.get(q, {}).get("source")) for q in qids)
