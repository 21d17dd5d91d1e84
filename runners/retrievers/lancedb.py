"""LanceDB (embedded) as a candidate: `factory: runners.retrievers.lancedb:make`.

    - name: northwind/lancedb-hnsw
      kind: retriever
      factory: runners.retrievers.lancedb:make
      factory_kwargs: {model: sentence-transformers/all-MiniLM-L6-v2, index: hnsw, m: 16, ef_construction: 64, ef: 40}

Each (task, split) gets a fresh table (`id`, `vector` as fixed-size float32 lists) written from the
embedding cache; all queries are then searched in one batched call (`table.search(matrix)`), distance
`cosine` for a cosine model, `dot` for a dot-product one (LanceDB returns 1 - similarity for both;
score = 1 - distance).

* `index: flat`: no index: LanceDB's exact (brute-force) search.
* `index: hnsw`: `IvfHnswFlat` (HNSW graphs over `num_partitions` IVF partitions, default 1: one graph,
  `m`, `ef_construction`; `ef` (raised to k when lower: LanceDB refuses ef < k) and `nprobes` at
  query time); `index: ivf`: `IvfFlat` (`num_partitions`,
  `nprobes`). `refine_factor` re-ranks `refine_factor * k` candidates exactly.

`uri`: the database folder (default: a temporary folder, removed when the retriever is closed or
garbage-collected).
"""

from __future__ import annotations

import shutil
import tempfile
import time
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from .vector_db import VectorDBRetriever, require


class LanceDBRetriever(VectorDBRetriever):
    def __init__(self, embedder: Any, index: str = "flat", uri: str | None = None, table: str = "private_mteb_docs",
                 num_partitions: int | None = None, m: int = 16, ef_construction: int = 64, ef: int | None = None,
                 nprobes: int | None = None, refine_factor: int | None = None, limit: int | None = None) -> None:
        super().__init__(embedder, index, limit)
        lancedb = require("lancedb")

        self.folder = None if uri else tempfile.mkdtemp(prefix="private-mteb-lancedb-")
        self.db = lancedb.connect(uri or self.folder)
        self.table_name, self.tbl = table, None
        self.num_partitions, self.m, self.ef_construction = num_partitions, m, ef_construction
        self.ef, self.nprobes, self.refine_factor = ef, nprobes, refine_factor
        self.engine = f"LanceDB {lancedb.__version__}"
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.folder, True) if self.folder else None

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()

    def write(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        import pyarrow as pa

        t0 = time.perf_counter()
        dim = int(vectors.shape[1])
        data = pa.table({"id": pa.array(list(ids), pa.string()),
                         "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), pa.float32()), dim)})
        self.tbl = self.db.create_table(self.table_name, data, mode="overwrite")
        t1 = time.perf_counter()
        if self.index_kind != "flat":
            from lancedb.index import IvfFlat, IvfHnswFlat

            parts = self.num_partitions or (1 if self.index_kind == "hnsw" else max(1, int(len(ids) ** 0.5)))
            config = (IvfHnswFlat(distance_type=self.metric, num_partitions=parts, m=self.m,
                                  ef_construction=self.ef_construction) if self.index_kind == "hnsw"
                      else IvfFlat(distance_type=self.metric, num_partitions=parts))
            self.tbl.create_index("vector", config=config)
        self.timings.update(write=t1 - t0, build=time.perf_counter() - t1)

    def query(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        q = self.tbl.search(vectors).distance_type(self.metric).limit(k).select(["id"])
        if self.index_kind != "flat":
            if self.ef is not None:
                q = q.ef(max(self.ef, k))  # LanceDB refuses ef < k (faiss' HNSW also searches with max(ef, k))
            if self.nprobes is not None:
                q = q.nprobes(self.nprobes)
            if self.refine_factor is not None:
                q = q.refine_factor(self.refine_factor)
        res = q.to_arrow()
        qi = res["query_index"].to_numpy() if len(vectors) > 1 or "query_index" in res.column_names else None
        ids, dist = res["id"].to_pylist(), res["_distance"].to_numpy()
        out: list[list[tuple[str, float]]] = [[] for _ in range(len(vectors))]
        for n, (doc, d) in enumerate(zip(ids, dist.tolist())):
            out[int(qi[n]) if qi is not None else 0].append((doc, 1.0 - d))
        return [sorted(row, key=lambda x: -x[1]) for row in out]


def make(embedder: Any, model: str, index: str = "flat", **kwargs: Any) -> LanceDBRetriever:
    """The `factory:` entry point (`model` names the embedding model: the embedder brings its vectors)."""
    return LanceDBRetriever(embedder, index, **kwargs)
