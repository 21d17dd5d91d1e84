"""The generated Romanian collection (tests/romanian_fixture.py) other tests build on: same seed, same bytes;
the letter forms asked for; and it is a collection where the language's stemmer matters."""

from __future__ import annotations

import bm25s
import numpy as np
import Stemmer

from tests.romanian_fixture import (retyped_duplicate, romanian_collection, to_cedilla, to_comma,
                                    write_romanian_collection)


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes_other_seed_other_collection(tmp_path):
    a, b = write_romanian_collection(tmp_path / "a"), write_romanian_collection(tmp_path / "b")
    assert _files(a) == _files(b) and set(_files(a)) == {"corpus.jsonl", "queries.jsonl", "qrels/test.tsv"}
    assert _files(write_romanian_collection(tmp_path / "c", seed=1)) != _files(a)
    col = romanian_collection()
    assert len(col.corpus) == 96 and len(col.queries) == 72
    assert all(sorted(set(d.values()), reverse=True)[0] == 2 for d in col.qrels.values())


def test_letter_forms_and_tables_layout(tmp_path):
    folder = write_romanian_collection(tmp_path / "t", fmt="tables", query_letters="cedilla", english_docs=2)
    queries = (folder / "queries.jsonl").read_text(encoding="utf-8")
    assert ("ş" in queries or "ţ" in queries) and not any(c in queries for c in "șț")
    assert (folder / "qrels.csv").read_text().startswith("query_id,doc_id,grade\n")
    corpus = (folder / "corpus.jsonl").read_text(encoding="utf-8")
    assert "ș" in corpus and '"en01"' in corpus
    text = romanian_collection().corpus["doc001"]["text"]
    assert retyped_duplicate(text) == to_cedilla(text) != text and to_comma(retyped_duplicate(text)) == text


def _top1(col, language: str) -> float:
    ids = list(col.corpus)
    stemmer = Stemmer.Stemmer(language)
    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    texts = [col.corpus[d]["title"] + "\n" + col.corpus[d]["text"] for d in ids]
    retriever.index(bm25s.tokenize(texts, stemmer=stemmer, stopwords=None, show_progress=False), show_progress=False)
    qids = list(col.queries)
    docs, _ = retriever.retrieve(bm25s.tokenize([col.queries[q] for q in qids], stemmer=stemmer, stopwords=None,
                                                show_progress=False), k=1, show_progress=False)
    return float(np.mean([col.qrels[q][ids[docs[i][0]]] == 2 if ids[docs[i][0]] in col.qrels[q] else 0
                          for i, q in enumerate(qids)]))


def test_the_romanian_stemmer_matters():
    """Questions use other inflections than their documents: only the Romanian stemmer joins them."""
    col = romanian_collection()
    assert _top1(col, "romanian") > _top1(col, "english") + 0.2
