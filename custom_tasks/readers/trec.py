"""``format: trec``: TREC qrels lines (``qid 0 docid grade``) plus corpus/queries tables of any kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..collection import Collection
from ..validate import CollectionBuilder
from ._io import Table, display_path, read_lines, read_table, resolve
from .tables import load_corpus, load_queries, qrels_files


def load_trec_qrels(b: CollectionBuilder, path: Path, encoding: str, split: str) -> None:
    """Whitespace-separated ``qid iter docid grade``, no header; '#' lines are comments."""
    t = Table(path, "trec", None, [])
    b.expect_split(split, t)
    for loc, line in read_lines(path, encoding, "qrels"):
        fields = line.split()
        if fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            raise t.error(loc, f"expected 4 fields 'query-id iteration doc-id grade', found {len(fields)}")
        b.add_label(t, loc, split, fields[0], fields[2], fields[3])


def read(cfg: Any, base_dir: Path, name: str) -> Collection:
    """Read a ``format: trec`` source (see sources.TrecSource)."""
    cols = cfg.columns
    b = CollectionBuilder(name, cfg.splits)
    corpus = read_table(resolve(base_dir, cfg.corpus), cfg.encoding, "corpus")
    load_corpus(b, corpus, cols.doc_id, cols.title, cols.text)
    queries = read_table(resolve(base_dir, cfg.queries), cfg.encoding, "queries")
    load_queries(b, queries, cols.query_id, cols.query, cfg.tag_columns)
    files = qrels_files(cfg, base_dir)
    for split, path in files:
        load_trec_qrels(b, path, cfg.encoding, split)
    return b.finish(display_path(files[0][1]) if files else queries.shown)
