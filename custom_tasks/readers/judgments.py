"""``format: judgments``: a corpus plus one flat judgments table, one row per judged (question, document) pair.

The most common export shape (``question_id, question, doc_id, grade``): the questions are derived from it, each
id once, and every row is one label. A question id that comes back with another text is an error at that line
(two questions would share an id); without a question id column, ids come from the question text
(``query_ids.ContentIds``: stable when rows move), the same text being the same question.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..collection import Collection
from ..query_ids import ContentIds, normalise
from ..validate import CollectionBuilder
from ._io import Table, as_id, as_str, is_missing, read_table, resolve
from .tables import complete_column, load_corpus, tag_value


def read(cfg: Any, base_dir: Path, name: str) -> Collection:
    """Read a corpus plus a judgments table (see sources.JudgmentsSource)."""
    b = CollectionBuilder(name, cfg.splits, cfg.grades_map)
    with b.log.reading():
        cols = cfg.columns
        corpus = read_table(resolve(base_dir, cfg.corpus), cfg.encoding, "corpus", log=b.log)
        load_corpus(b, corpus, cols.doc_id, cols.title, cols.text)
        t = read_table(resolve(base_dir, cfg.judgments), cfg.encoding, "judgments", log=b.log)
        _load_pairs(cfg, b, t)
    return b.finish(t.shown)


def _load_pairs(cfg: Any, b: CollectionBuilder, t: Table) -> None:
    cols = cfg.columns
    t.require_columns([cols.query, cols.qrels_doc_id, cols.grade] + ([cfg.split_column] if cfg.split_column else []))
    t.require_columns(cfg.tag_columns, option="tag_columns")
    complete = complete_column(t, cols.complete_labels)
    has_qid = t.has_column(cols.query_id)
    content_ids, by_text = ContentIds(), {}  # no id column: one id per distinct question text
    first: dict[str, tuple[str, int]] = {}  # question id -> (its normalised text, line first seen)
    if not cfg.split_column:
        b.expect_split(cfg.split, t)
    for n, (loc, row) in enumerate(t.rows):
        t.mapping_check(loc, row, [cols.query, cols.qrels_doc_id, cols.grade], n == 0)
        with t.checking():  # a bad row is recorded (every one is reported) and skipped
            raw = t.get(loc, row, cols.query)
            if has_qid:
                qid = as_id(t.get(loc, row, cols.query_id))
            else:
                key = normalise(raw) if isinstance(raw, str) else repr(raw)
                qid = by_text.setdefault(key, content_ids.next_id(raw))
            text = as_str(t, loc, raw, "query", qid, cols.query)
            split = cfg.split
            if cfg.split_column:
                split = as_id(t.get(loc, row, cfg.split_column))
                if not split:
                    raise t.error(loc, f"empty split in column {cfg.split_column!r}")
            if qid not in first:
                tags = {c: tag_value(row[c]) for c in cfg.tag_columns if not is_missing(row.get(c)) and row[c] != ""}
                qid = b.add_query(t, loc, qid, text, tags)
                first[qid] = (normalise(text), loc)
            elif first[qid][0] != normalise(text):
                raise t.error(loc, f"question {qid!r} has another text here than at {t.where(first[qid][1])}: "
                                   "one id, one question (give the other question its own id)")
            b.add_label(t, loc, split, qid, t.get(loc, row, cols.qrels_doc_id), t.get(loc, row, cols.grade))
            if complete in row:  # any row of the question may declare it
                b.declare_complete(t, loc, qid, row[complete], complete)
