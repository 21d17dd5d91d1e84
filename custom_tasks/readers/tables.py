"""``format: tables``: corpus, queries and qrels as any mix of CSV/TSV/JSONL/Parquet, columns configurable.

Also home of the row loaders that beir, trec and evalset share, so every format checks rows identically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..collection import Collection
from ..errors import CollectionError
from ..validate import CollectionBuilder
from ._io import Table, as_id, as_str, as_text, display_path, is_missing, read_table, resolve
from .corpus_rows import corpus_rows


#: the questions' column that declares a question's labels complete, read where present (Collection.complete_questions)
COMPLETE_COLUMN = "complete_labels"


def complete_column(t: Table, mapped: str | None) -> str:
    """The column declaring complete labels: one mapped in `columns: {complete_labels: NAME}` must be in the header
    (a misspelt mapping would declare nothing, silently); unmapped, `complete_labels` is read when present."""
    if mapped:
        t.require_columns([mapped], option="columns.complete_labels")
    return mapped or COMPLETE_COLUMN


def tag_value(value: Any) -> str:
    """Tags are strings: lists become 'a,b', numbers '3'."""
    if isinstance(value, (list, tuple)):
        return ",".join(as_text(v) for v in value)
    return as_id(value) if isinstance(value, float) else as_text(value)


def load_corpus(b: CollectionBuilder, t: Table, doc_id: str, title: str, text: str) -> None:
    """Add every row of a corpus table; a large one is validated into a disk store (``stored_corpus``)."""
    from ..store_threshold import wants_store  # the store (pyarrow) is imported only for a large corpus

    if wants_store(t.path):
        from .stored_corpus import load_corpus_stored

        load_corpus_stored(b, t, doc_id, title, text)
        return
    for loc, did, title_s, text_s in corpus_rows(t, doc_id, title, text):
        with t.checking():
            b.add_doc(t, loc, did, title_s, text_s)


def load_queries(b: CollectionBuilder, t: Table, query_id: str, text: str, tag_columns: list[str],
                 complete: str | None = None) -> None:
    """Add every row of a queries table; listed tag columns become query_tags (empty values skipped); the
    ``complete_column`` (``complete``: its mapped name) declares a question's labels complete."""
    t.require_columns([query_id, text])
    t.require_columns(tag_columns, option="tag_columns")
    column = complete_column(t, complete)
    for n, (loc, row) in enumerate(t.rows):
        t.mapping_check(loc, row, [query_id, text], n == 0)
        with t.checking():
            tags = {c: tag_value(row[c]) for c in tag_columns if not is_missing(row.get(c)) and row[c] != ""}
            qid = t.get(loc, row, query_id)
            qid = b.add_query(t, loc, qid, as_str(t, loc, t.get(loc, row, text), "query", qid, text), tags)
            if column in row:
                b.declare_complete(t, loc, qid, row[column], column)


def load_qrels(b: CollectionBuilder, t: Table, query_id: str, doc_id: str, grade: str,
               split: str | None, split_column: str | None = None) -> None:
    """Add every row of a qrels table to ``split`` (or to the split named in ``split_column``)."""
    t.require_columns([query_id, doc_id, grade] + ([split_column] if split_column else []))
    if split is not None:
        b.expect_split(split, t)
    for n, (loc, row) in enumerate(t.rows):
        t.mapping_check(loc, row, [query_id, doc_id, grade], n == 0)
        with t.checking():
            s = split
            if split_column:
                s = as_id(t.get(loc, row, split_column))
                if not s:
                    raise t.error(loc, f"empty split in column {split_column!r}")
            b.add_label(t, loc, s, t.get(loc, row, query_id), t.get(loc, row, doc_id), t.get(loc, row, grade))


def qrels_files(cfg: Any, base_dir: Path) -> list[tuple[str | None, Path]]:
    """(split, file) pairs from ``qrels:`` as one file (split ``split:``) or a {split: file} mapping."""
    if isinstance(cfg.qrels, str):
        split = None if getattr(cfg, "split_column", None) else cfg.split
        return [(split, resolve(base_dir, cfg.qrels))]
    if getattr(cfg, "split_column", None):
        raise CollectionError(display_path(base_dir), "use either `split_column:` or a {split: file} "
                                                     "mapping under `qrels:`, not both")
    # left-out splits are read too (the builder drops their labels) so their queries don't look unlabeled
    return [(s, resolve(base_dir, p)) for s, p in cfg.qrels.items()]


def read_corpus_and_queries(cfg: Any, base_dir: Path, b: CollectionBuilder) -> Table:
    """Corpus and queries tables into the builder (shared by the tables and trec formats); the queries table."""
    cols = cfg.columns
    corpus = read_table(resolve(base_dir, cfg.corpus), cfg.encoding, "corpus", log=b.log)
    load_corpus(b, corpus, cols.doc_id, cols.title, cols.text)
    queries = read_table(resolve(base_dir, cfg.queries), cfg.encoding, "queries", log=b.log)
    load_queries(b, queries, cols.query_id, cols.query, cfg.tag_columns, cols.complete_labels)
    return queries


def read(cfg: Any, base_dir: Path, name: str) -> Collection:
    """Read a ``format: tables`` source (see sources.TablesSource)."""
    cols = cfg.columns
    b = CollectionBuilder(name, cfg.splits, cfg.grades_map)
    with b.log.reading():
        queries = read_corpus_and_queries(cfg, base_dir, b)
        files = qrels_files(cfg, base_dir)
        for split, path in files:
            t = read_table(path, cfg.encoding, "qrels", allow_no_rows=True, log=b.log)
            load_qrels(b, t, cols.qrels_query_id, cols.qrels_doc_id, cols.grade, split, cfg.split_column)
    return b.finish(display_path(files[0][1]) if files else queries.shown)
