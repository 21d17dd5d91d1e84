"""``format: evalset``: the spreadsheet-style file, one row per question carrying its relevant doc ids.

``relevant`` may be a string ``doc12:2; doc7:1; doc9`` (separators ; , |, grade optional), a list of ids,
or an object {doc_id: grade}. JSONL rows may carry ``tags`` (object) and ``evidence`` (doc_id -> verbatim
substring of the document text, or [start, end] char offsets), which become Collection.spans.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..collection import Collection
from ..query_ids import ContentIds
from ..validate import CollectionBuilder
from ._io import Table, TooDeep, as_id, as_str, is_missing, loads_json, read_table, resolve
from .tables import complete_column, load_corpus, tag_value

_SEPARATORS = re.compile(r"[;,|]")


def _maybe_json(value: Any) -> Any:
    """CSV cells may hold JSON objects/lists (e.g. exported from a JSONL evalset)."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return loads_json(value)
        except (json.JSONDecodeError, TooDeep):  # read as plain text; a nesting bomb never reaches the parser's limit
            return value
    return value


def parse_relevant(t: Table, loc: int, value: Any, corpus: dict[str, Any], default: Any) -> list[tuple[str, Any]]:
    """(doc_id, raw grade) pairs, ``default`` for an id without a grade; grades are validated by the builder."""
    value = _maybe_json(value)
    if is_missing(value) or value == "":
        return []
    if isinstance(value, dict):  # None values: keys of other rows in a Parquet struct column
        return [(as_id(k), g) for k, g in value.items() if not is_missing(g)]
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            if isinstance(item, (list, tuple)) and len(item) == 2:
                out.append((as_id(item[0]), item[1]))
            elif isinstance(item, (str, int, float)) and not isinstance(item, bool):
                out.append((as_id(item), default))
            else:
                raise t.error(loc, f"cannot read relevant item {item!r} (use an id or [id, grade])")
        return out
    if not isinstance(value, str):
        raise t.error(loc, f"cannot read relevant value {value!r} (use 'doc1:2; doc2', a list or an object)")
    out = []
    for item in _SEPARATORS.split(value):
        item = item.strip()
        if not item:
            continue
        if item in corpus or ":" not in item:  # ids may contain ':' themselves
            out.append((item, default))
        else:
            doc_id, grade = item.rsplit(":", 1)
            out.append((doc_id.strip(), grade.strip()))
    return out


def _spans_of(t: Table, loc: int, qid: str, doc_id: str, value: Any, text: str) -> list[tuple[int, int]]:
    """Evidence for one document: a verbatim string, [start, end], or a list of those."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        start, end = value
        if not 0 <= start < end <= len(text):
            raise t.error(loc, f"evidence span [{start}, {end}] for document {doc_id!r} of query {qid!r} is "
                               f"outside its text (0..{len(text)})")
        return [(start, end)]
    if isinstance(value, str):
        start = text.find(value) if value else -1
        if start < 0:
            shown = value if len(value) <= 60 else value[:57] + "..."
            raise t.error(loc, f"evidence {shown!r} for document {doc_id!r} of query {qid!r} is not found "
                               "verbatim in that document's text")
        return [(start, start + len(value))]
    if isinstance(value, (list, tuple)) and value:
        return [s for v in value for s in _spans_of(t, loc, qid, doc_id, v, text)]
    raise t.error(loc, f"cannot read evidence {value!r} for document {doc_id!r} "
                       "(use a verbatim string, [start, end], or a list of those)")


def _tags(t: Table, loc: int, row: dict[str, Any], tags_col: str, tag_columns: list[str]) -> dict[str, str]:
    tags: dict[str, str] = {}
    obj = _maybe_json(row.get(tags_col))
    if isinstance(obj, dict):
        tags.update({str(k): tag_value(v) for k, v in obj.items() if not is_missing(v)})
    elif not is_missing(obj) and obj != "":  # a plain value: keep it as one tag named after the column
        tags[tags_col] = tag_value(obj)
    for c in tag_columns:
        v = row.get(c)
        if not is_missing(v) and v != "":
            tags[c] = tag_value(v)
    return tags


def read(cfg: Any, base_dir: Path, name: str) -> Collection:
    """Read a corpus plus an evalset file (see sources.EvalsetSource)."""
    b = CollectionBuilder(name, cfg.splits, cfg.grades_map)
    with b.log.reading():
        return _read(cfg, base_dir, b)


def _read(cfg: Any, base_dir: Path, b: CollectionBuilder) -> Collection:
    cols = cfg.columns
    corpus = read_table(resolve(base_dir, cfg.corpus), cfg.encoding, "corpus", log=b.log)
    load_corpus(b, corpus, cols.doc_id, cols.title, cols.text)
    t = read_table(resolve(base_dir, cfg.evalset), cfg.encoding, "evalset", log=b.log)
    t.require_columns([cols.query, cols.relevant] + ([cfg.split_column] if cfg.split_column else []))
    t.require_columns(cfg.tag_columns, option="tag_columns")
    complete = complete_column(t, cols.complete_labels)
    has_qid = t.has_column(cols.query_id)
    content_ids = ContentIds()  # no query_id column: ids from the question text, stable when rows move
    if not cfg.split_column:
        b.expect_split(cfg.split, t)
    for loc, row in t.rows:
        with t.checking():  # a row problem is recorded (every one is reported), the row skipped
            split = cfg.split
            if cfg.split_column:
                split = as_id(t.get(loc, row, cfg.split_column))
                if not split:
                    raise t.error(loc, f"empty split in column {cfg.split_column!r}")
                b.expect_split(split, t)
            qid = t.get(loc, row, cols.query_id) if has_qid else content_ids.next_id(t.get(loc, row, cols.query))
            if not b.wants(split):
                b.note_left_out(qid)
                continue
            tags = _tags(t, loc, row, cols.tags, cfg.tag_columns)
            qid = b.add_query(t, loc, qid, as_str(t, loc, t.get(loc, row, cols.query), "query", qid, cols.query), tags)
            if complete in row:
                b.declare_complete(t, loc, qid, row[complete], complete)
            relevant = parse_relevant(t, loc, t.get(loc, row, cols.relevant), b.corpus, None)
            for doc_id, grade in relevant:
                with t.checking():  # each unknown document of the row is reported
                    if grade is None:  # no grade given: default_grade is on private-mteb's scale, never mapped
                        b.add_label(t, loc, split, qid, doc_id, cfg.default_grade, mapped=False)
                    else:
                        b.add_label(t, loc, split, qid, doc_id, grade)
            evidence = _maybe_json(row.get(cols.evidence))
            if is_missing(evidence) or evidence == "" or evidence == {}:
                continue
            if not isinstance(evidence, dict):
                raise t.error(loc, f"field {cols.evidence!r} must be an object {{doc_id: text or [start, end]}}")
            judged = {d for d, _ in relevant if d in b.corpus}
            for doc_id, value in evidence.items():
                if is_missing(value):  # Parquet struct columns carry other rows' keys as None
                    continue
                doc_id = as_id(doc_id)
                if doc_id not in judged:
                    raise t.error(loc, f"evidence names document {doc_id!r}, which is not among the relevant "
                                       f"documents of query {qid!r}")
                for span in _spans_of(t, loc, qid, doc_id, value, b.corpus[doc_id]["text"]):
                    b.add_span(split, qid, doc_id, span)
    return b.finish(t.shown)
