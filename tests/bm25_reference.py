"""bm25s run directly on given tokens, mteb's recipe (lucene, k1 1.5, b 0.75, delta 0.5; vocabulary ids in order of
first occurrence, as mteb numbers them): the independent side of the BM25 tokenizer tests."""

from __future__ import annotations


def bm25s_rankings(docs: dict[str, list[str]], queries: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Each query's scores of every document, from already tokenized (and stop-word filtered) texts."""
    import bm25s

    ids = list(docs)
    vocab: dict[str, int] = {}
    for d in ids:
        for t in docs[d]:
            vocab.setdefault(t, len(vocab))
    retriever = bm25s.BM25(k1=1.5, b=0.75, delta=0.5, method="lucene")
    retriever.index(bm25s.tokenization.Tokenized(ids=[[vocab[t] for t in docs[d]] for d in ids], vocab=vocab),
                    show_progress=False)
    out = {}
    for q, tokens in queries.items():
        row = [vocab[t] for t in tokens if t in vocab]
        found, scores = retriever.retrieve(bm25s.tokenization.Tokenized(ids=[row], vocab=vocab), k=len(ids),
                                           show_progress=False)
        out[q] = {ids[int(i)]: float(v) for i, v in zip(found[0], scores[0])}
    return out


def write_beir(folder, corpus: dict, queries: dict, qrels: dict) -> None:
    """A BEIR folder `folder/data` (corpus.jsonl, queries.jsonl, qrels/test.tsv) of the given collection."""
    import json

    data = folder / "data"
    (data / "qrels").mkdir(parents=True, exist_ok=True)
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, **v}, ensure_ascii=False) + "\n"
                                               for d, v in corpus.items()), encoding="utf-8")
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n"
                                                for q, t in queries.items()), encoding="utf-8")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, docs in qrels.items() for d, g in docs.items()))
