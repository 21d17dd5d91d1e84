"""``format: beir``: the standard BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..collection import Collection
from ..errors import CollectionError
from ..validate import CollectionBuilder
from ._io import display_path, read_table, resolve
from .tables import load_corpus, load_qrels, load_queries


def split_files(folder: Path, splits: list[str] | None) -> list[tuple[str, Path]]:
    """qrels/<split>.tsv: the requested splits (each must exist) plus every other one found.

    Left-out splits are still read (and checked) so their queries are not reported as unlabeled;
    the builder drops their labels.
    """
    qdir = folder / "qrels"
    wanted = [(s, qdir / f"{s}.tsv") for s in splits or []]
    if not qdir.is_dir():
        raise CollectionError(display_path(qdir), "qrels folder not found (expected qrels/<split>.tsv)")
    found = [(p.stem, p) for p in sorted(qdir.glob("*.tsv")) if p.stem not in (splits or [])]
    if not wanted and not found:
        raise CollectionError(display_path(qdir), "no qrels/<split>.tsv files found")
    return wanted + found


def read(cfg: Any, base_dir: Path, name: str) -> Collection:
    """Read a BEIR folder; ``tag_fields`` copies those extra query fields into query_tags."""
    folder = resolve(base_dir, cfg.path)
    if not folder.is_dir():
        raise CollectionError(display_path(folder), "BEIR folder not found")
    b = CollectionBuilder(name, cfg.splits, cfg.grades_map)
    with b.log.reading():
        corpus = read_table(folder / "corpus.jsonl", cfg.encoding, "corpus", log=b.log)
        load_corpus(b, corpus, "_id", "title", "text")
        queries = read_table(folder / "queries.jsonl", cfg.encoding, "queries", log=b.log)
        load_queries(b, queries, "_id", "text", cfg.tag_fields)
        for split, path in split_files(folder, cfg.splits):
            t = read_table(path, cfg.encoding, "qrels", allow_no_rows=True, log=b.log)
            load_qrels(b, t, "query-id", "corpus-id", "score", split)
    return b.finish(display_path(folder / "qrels"))
