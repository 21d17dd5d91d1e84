"""``format: trec``: TREC qrels lines (``qid 0 docid grade``) plus corpus/queries tables of any kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..collection import Collection
from ..validate import CollectionBuilder
from ._io import Table, display_path, read_lines
from .tables import qrels_files, read_corpus_and_queries


def load_trec_qrels(b: CollectionBuilder, path: Path, encoding: str, split: str) -> None:
    """Whitespace-separated ``qid iter docid grade``, no header; '#' lines are comments."""
    t = Table(path, "trec", None, [])
    b.expect_split(split, t)
    for loc, line in read_lines(path, encoding, "qrels"):
        fields = line.split()
        if fields[0].startswith("#"):
            continue
        with b.log.row():
            if len(fields) != 4:
                raise t.error(loc, f"expected 4 fields 'query-id iteration doc-id grade', found {len(fields)}")
            b.add_label(t, loc, split, fields[0], fields[2], fields[3])


def read(cfg: Any, base_dir: Path, name: str) -> Collection:
    """Read a ``format: trec`` source (see sources.TrecSource)."""
    b = CollectionBuilder(name, cfg.splits, cfg.grades_map)
    with b.log.reading():
        queries = read_corpus_and_queries(cfg, base_dir, b)
        files = qrels_files(cfg, base_dir)
        for split, path in files:
            load_trec_qrels(b, path, cfg.encoding, split)
    return b.finish(display_path(files[0][1]) if files else queries.shown)
