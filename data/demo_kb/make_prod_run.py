"""Write prod_search.run: the demo's "production search" rankings, a TREC run file (`kind: run` in pipeline-demo.yaml).

Stands in for what a team exports from its production search (Elasticsearch/OpenSearch use Lucene's BM25):
a BM25 index configured as such a deployment often is, not as private-mteb's BM25 baseline is.
* Lucene BM25 with Elasticsearch's defaults k1=1.2, b=0.75 (mteb's baseline: bm25s k1=1.5, b=0.75);
* the index holds the title twice and the text once (a title boost; mteb's baseline: title + text once);
* lower-cased words of two or more characters, English stop words removed, no stemming (mteb's baseline
  stems with Snowball);
* the top 50 documents with a score above 0 per query (what the search API returns), scores as the engine
  gives them (float32, written in full).
A query left without any term (all stop words) gets no results and is absent from the file, as in an export.

Real rankings of a real BM25 (bm25s 0.3, installed with mteb), deterministic. Run from anywhere:
    python data/demo_kb/make_prod_run.py
"""

from __future__ import annotations

import json
from pathlib import Path

import bm25s

HERE = Path(__file__).resolve().parent
TOP, K1, B, TAG = 50, 1.2, 0.75, "prod-search"


def main() -> None:
    docs = [json.loads(line) for line in (HERE / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line]
    queries = [json.loads(line) for line in (HERE / "evalset.jsonl").read_text(encoding="utf-8").splitlines() if line]
    texts = [f"{d['title']} {d['title']} {d['text']}" for d in docs]
    index = bm25s.BM25(k1=K1, b=B, method="lucene")
    index.index(bm25s.tokenize(texts, stopwords="en", stemmer=None, show_progress=False), show_progress=False)
    lines = []
    for q in queries:
        tokens = bm25s.tokenize([q["query"]], stopwords="en", stemmer=None, show_progress=False,
                                return_ids=False)[0]
        if not tokens:
            continue
        ids, scores = index.retrieve(bm25s.tokenize([q["query"]], stopwords="en", stemmer=None, show_progress=False),
                                     k=TOP, show_progress=False)
        hits = [(float(s), docs[i]["_id"]) for i, s in zip(ids[0], scores[0]) if s > 0]
        hits.sort(reverse=True)  # best first, equal scores by doc id descending: trec_eval's order, so ranks agree
        lines += [f"{q['query_id']} Q0 {doc} {rank} {score!r} {TAG}\n" for rank, (score, doc) in enumerate(hits, 1)]
    out = HERE / "prod_search.run"
    out.write_text("".join(lines), encoding="utf-8")
    print(f"{out}: {len(lines)} lines, {len({ln.split()[0] for ln in lines})} of {len(queries)} queries")


if __name__ == "__main__":
    main()
