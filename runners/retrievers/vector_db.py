"""What every vector-database adapter shares: vectors in from the embedder, ranked lists out.

A subclass says how to `write(ids, vectors)` (create the table, load, build the index) and how to
`query(vectors, k)` (one list of (doc id, score) per query vector, best first; score: higher is better,
on the model's own scale: cosine similarity, or the inner product for a dot-product model).

Depth: each query asks the database for mteb's top_k (the task's largest k, 1000 by default, at most the
corpus), or for `limit` documents when given: what your application asks for (`LIMIT` / `.limit()`). An
ANN index answers a top-10 and a top-1000 differently, so give `limit` to measure what users get.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

INDEXES = ("flat", "hnsw", "ivf")


def require(module: str) -> Any:
    """Import a database client of the `db` extra, saying how to install it when it is missing."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ModuleNotFoundError(f"{module} is not installed ({e}): pip install 'private-mteb[db]'") from None


class VectorDBRetriever:
    """`index(corpus)` / `search(queries, top_k)` of a `kind: retriever` over a vector database."""

    def __init__(self, embedder: Any, index: str = "flat", limit: int | None = None) -> None:
        if index not in INDEXES:
            raise ValueError(f"index must be one of {', '.join(INDEXES)}, not {index!r}")
        self.embedder, self.index_kind, self.limit = embedder, index, limit
        self.metric = embedder.similarity  # 'cosine' | 'dot'
        self.n_docs = 0
        self.timings: dict[str, float] = {}  # seconds of the last write / build / query pass

    def index(self, corpus: Iterable[tuple[str, str, str]]) -> None:
        ids = [doc for doc, _, _ in corpus]
        vectors = self.embedder.documents(ids)
        self.n_docs = len(ids)
        self.write(ids, np.ascontiguousarray(vectors, dtype=np.float32))

    def search(self, queries: dict[str, str], top_k: int) -> dict[str, dict[str, float]]:
        qids = list(queries)
        if not qids or not self.n_docs:
            return {q: {} for q in qids}
        vectors = np.ascontiguousarray(self.embedder.queries(qids), dtype=np.float32)
        t0 = time.perf_counter()
        hits = self.query(vectors, min(top_k, self.limit or top_k, self.n_docs))
        self.timings["query"] = time.perf_counter() - t0
        return {q: {doc: float(score) for doc, score in row} for q, row in zip(qids, hits)}

    def write(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        raise NotImplementedError

    def query(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        raise NotImplementedError
