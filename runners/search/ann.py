"""Approximate nearest-neighbour indexes (faiss HNSW / IVF / flat) as candidates.

An ANN candidate is the dense model (through the embedding cache) searched with a faiss index
plugged into mteb's own `SearchEncoderWrapper` as its `index_backend`, so relevance metrics are
computed exactly like the plain run's. Apart from those, and under a different name, we record
how far the index departs from exact (brute-force) search on the same vectors:
`index_overlap_at_k` = |top-k of the index ∩ exact top-k| / min(k, corpus size), "overlap@k vs
exact search". It is NOT recall (recall is about relevance labels); it lands in a sidecar
`ann_agreement_<split>.json` next to the run's per-query files.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from mteb.models.search_wrappers import SearchEncoderWrapper

from .counts import CountsFromInner
from .params import LARGE_CORPUS_DOCS, IndexParams
from ..results.store import atomic_write_json, read_json, run_dir, tmp_path_for

AGREEMENT_KS = (10, 100)
AGREEMENT_LABELS = {f"index_overlap_at_{k}": f"overlap@{k} vs exact search" for k in AGREEMENT_KS}
BLOCK_ROWS = 50_000  # rows fetched, normalised and compared at a time on the large-corpus path
#: (corpus, start, stop, task_metadata=, hf_split=, hf_subset=, encode_kwargs=) -> vectors of rows [start, stop)
BlockVectors = Callable[..., np.ndarray]


@dataclass
class FaissAnnIndex:
    """mteb `IndexEncoderSearchProtocol` backend; also runs exact search to measure agreement."""

    params: IndexParams
    normalize: bool = True  # cosine = inner product of L2-normalised vectors
    ks: Sequence[int] = AGREEMENT_KS
    idxs: list[str] = field(default_factory=list)
    last: dict[str, Any] = field(default_factory=dict)
    _vectors: np.ndarray | None = None
    _index: Any = None
    _file: Path | None = None  # the memory-mapped vectors of the large-corpus path

    @property
    def n_docs(self) -> int:
        return 0 if self._vectors is None else len(self._vectors)

    def add_documents(self, embeddings: Any, idxs: list[str]) -> None:
        import faiss

        x = _as_f32(embeddings)
        if self.normalize:
            faiss.normalize_L2(x)
        self.idxs = list(idxs)
        self._vectors = x
        t0 = time.perf_counter()
        self._index = build_index(x, self.params)
        self.last = {"n_docs": len(self.idxs), "build_seconds": time.perf_counter() - t0}

    def add_blocks(self, fetch: Callable[[int, int], Any], n_docs: int, workdir: Path,
                   block: int = BLOCK_ROWS) -> None:
        """Vectors of rows [start, stop) from `fetch`, block by block, into a memory-mapped file; index it."""
        import faiss

        self.clear()
        workdir.mkdir(parents=True, exist_ok=True)
        self._file = tmp_path_for(workdir / "ann-vectors.npy")  # a killed run's file is removed by clean_leftovers
        out = None
        for start in range(0, n_docs, block):
            x = _as_f32(fetch(start, min(start + block, n_docs)))
            if self.normalize:
                faiss.normalize_L2(x)
            if out is None:
                out = np.lib.format.open_memmap(self._file, mode="w+", dtype=np.float32, shape=(n_docs, x.shape[1]))
            out[start:start + len(x)] = x
        if out is None:
            raise ValueError("no documents to index")
        out.flush()
        del out
        self._vectors = np.load(self._file, mmap_mode="r")
        t0 = time.perf_counter()
        self._index = build_index(self._vectors, self.params)
        self.last = {"n_docs": n_docs, "build_seconds": time.perf_counter() - t0}

    def search(self, embeddings: Any, top_k: int, similarity_fn: Any = None, top_ranked: Any = None,
               query_idx_to_id: Any = None) -> tuple[list[list[float]], list[list[int]]]:
        import faiss

        if top_ranked is not None:
            raise NotImplementedError("ANN candidates do not rerank pre-ranked documents (reranking tasks)")
        if self._index is None or self._vectors is None:
            raise ValueError("no index built: add_documents() first")
        q = _as_f32(embeddings)
        if self.normalize:
            faiss.normalize_L2(q)
        n_docs = self.n_docs
        k = min(top_k, n_docs)
        t0 = time.perf_counter()
        scores, ids = self._index.search(q, k)
        t1 = time.perf_counter()
        exact_ids = self._exact(q, min(max(self.ks), n_docs))
        t2 = time.perf_counter()
        keep = ids >= 0  # faiss pads with -1 when the index finds fewer than k
        out_ids = [row[m].tolist() for row, m in zip(ids, keep)]
        out_scores = [row[m].tolist() for row, m in zip(scores, keep)]
        self.last.update({
            "per_query": {f"index_overlap_at_{kk}": overlap_at_k(out_ids, exact_ids, kk, n_docs)
                          for kk in self.ks},
            "ms_per_query_index": 1000 * (t1 - t0) / max(len(q), 1),
            "ms_per_query_exact": 1000 * (t2 - t1) / max(len(q), 1),
            "returned_fewer_than_k": int((~keep).any(axis=1).sum()),
        })
        return out_scores, out_ids

    def _exact(self, q: np.ndarray, k: int) -> np.ndarray:
        """Exact top-k ids: one flat index in memory, or block by block over the memory-mapped file."""
        import faiss

        if self._file is None:
            exact = faiss.IndexFlatIP(q.shape[1])
            exact.add(self._vectors)
            return exact.search(q, k)[1]
        heap = faiss.ResultHeap(len(q), k, keep_max=True)
        for start in range(0, self.n_docs, BLOCK_ROWS):
            block = faiss.IndexFlatIP(q.shape[1])
            block.add(np.ascontiguousarray(self._vectors[start:start + BLOCK_ROWS]))
            scores, ids = block.search(q, min(k, block.ntotal))
            heap.add_result(np.ascontiguousarray(scores), np.where(ids >= 0, ids + start, -1))
        heap.finalize()
        return heap.I

    def clear(self) -> None:
        self._index, self._vectors, self.idxs = None, None, []
        if self._file is not None:
            self._file.unlink(missing_ok=True)
            self._file = None


def build_index(x: np.ndarray, p: IndexParams) -> Any:
    """A faiss inner-product index over x; built single-threaded so HNSW graphs are reproducible."""
    import faiss

    n, d = x.shape
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        if p.kind == "flat":
            index = faiss.IndexFlatIP(d)
        elif p.kind == "hnsw":
            index = faiss.IndexHNSWFlat(d, p.M, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = p.ef_construction
            index.hnsw.efSearch = p.ef_search
        elif p.kind == "ivf":
            nlist = max(1, min(p.nlist, n))
            index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
            index.cp.seed = 1234
            index.train(x)
            index.nprobe = min(p.nprobe, nlist)
        else:
            raise ValueError(f"unknown index {p.kind!r} (flat, hnsw, ivf)")
        index.add(x)
    finally:
        faiss.omp_set_num_threads(threads)
    return index


def overlap_at_k(ann_ids: Sequence[Sequence[int]], exact_ids: Any, k: int, n_docs: int) -> list[float]:
    """Per query: |ann top-k ∩ exact top-k| / min(k, n_docs)."""
    denom = min(k, n_docs)
    return [len(set(list(a)[:k]) & set(np.asarray(e)[:k].tolist())) / denom for a, e in zip(ann_ids, exact_ids)]


class AnnSearch(CountsFromInner, SearchEncoderWrapper):
    """SearchEncoderWrapper with a faiss backend that files its agreement with exact search.

    The sidecar goes to the run folder of (candidate, task, dataset revision), written before
    run.evaluate_one publishes the TaskResult, so a complete run has it.
    """

    def __init__(self, encoder: Any, params: IndexParams, meta: Any, results_dir: Path | None,
                 block_vectors: BlockVectors | None = None, large_corpus_docs: int = LARGE_CORPUS_DOCS,
                 workdir: Path | None = None) -> None:
        from mteb.models.model_meta import ScoringFunction

        sim = getattr(encoder.mteb_model_meta, "similarity_fn_name", None)
        if sim not in (ScoringFunction.COSINE, ScoringFunction.DOT_PRODUCT, "cosine", "dot", None):
            raise ValueError(f"ANN indexes support cosine or dot-product models, not {sim}")
        self.backend = FaissAnnIndex(params, normalize=sim in (ScoringFunction.COSINE, "cosine", None))
        super().__init__(encoder, index_backend=self.backend)
        self.mteb_model_meta = meta
        self.params = params
        self.results_dir = Path(results_dir) if results_dir is not None else None
        self.agreement: dict[tuple[str, str], dict[str, Any]] = {}
        self.block_vectors, self.large_corpus_docs = block_vectors, large_corpus_docs
        self.workdir = Path(workdir) if workdir is not None else None

    def index(self, corpus: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, encode_kwargs: Any,
              num_proc: int | None = None, **kwargs: Any) -> None:
        """Large corpora: vectors block by block into a memory-mapped file (see the module docstring)."""
        if self.block_vectors is None or self.workdir is None or len(corpus) < self.large_corpus_docs:
            return super().index(corpus, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                                 encode_kwargs=encode_kwargs, num_proc=num_proc, **kwargs)
        self.task_corpus = corpus
        fetch = self.block_vectors

        def block(start: int, stop: int) -> np.ndarray:
            return fetch(corpus, start, stop, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                         encode_kwargs=dict(encode_kwargs))

        self.backend.add_blocks(block, len(corpus), self.workdir)

    def _sort_full_corpus_results(self, *, sub_corpus_ids: Any, cos_scores_top_k_idx: Any, **kwargs: Any) -> Any:
        """mteb indexes a lazy datasets Column once per hit (~10 s for 44k hits): read only the hit rows, once."""
        rows = sorted({int(r) for hits in cos_scores_top_k_idx for r in hits})
        ids = list(self.task_corpus.select(rows)["id"]) if rows else []
        return super()._sort_full_corpus_results(sub_corpus_ids=dict(zip(rows, ids)),
                                                 cos_scores_top_k_idx=cos_scores_top_k_idx, **kwargs)

    def search(self, queries: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
               **kwargs: Any) -> dict[str, dict[str, float]]:
        try:
            results = super().search(queries, task_metadata=task_metadata, hf_split=hf_split,
                                     hf_subset=hf_subset, **kwargs)
        finally:
            self.backend.clear()  # mteb clears it too, but not when the search raised
        last = self.backend.last
        qids = list(queries["id"])
        per_query = {m: dict(zip(qids, v)) for m, v in last.get("per_query", {}).items()}
        summary = {m: float(np.mean(list(v.values()))) if v else float("nan") for m, v in per_query.items()}
        record = {"index": self.params.tag, "params": vars(self.params), "summary": summary,
                  "labels": AGREEMENT_LABELS,
                  **{k: v for k, v in last.items() if k != "per_query"}, "per_query": per_query}
        self.agreement[(hf_split, hf_subset)] = record
        if self.results_dir is not None:
            save_agreement(self.results_dir, self.mteb_model_meta, task_metadata, hf_split, hf_subset, record)
        return results


def save_agreement(results_dir: Path, meta: Any, task_metadata: Any, split: str, subset: str,
                   record: dict[str, Any]) -> None:
    """`ann_agreement_<split>.json` in the run folder of (candidate, task, dataset revision), one record per subset.

    Written before run.evaluate_one publishes the TaskResult, so a complete run has it."""
    ds_rev = str(task_metadata.dataset.get("revision"))
    folder = run_dir(results_dir, meta.name, str(meta.revision), task_metadata.name, ds_rev)
    path = folder / f"ann_agreement_{split}.json"
    data = read_json(path) if path.exists() else {}
    if data.get("dataset_revision") != ds_rev:
        data = {}
    subsets = {**data.get("subsets", {}), subset: record}
    atomic_write_json(path, {"model": meta.name, "revision": str(meta.revision), "task": task_metadata.name,
                             "dataset_revision": ds_rev, "split": split, "subsets": subsets})


def _as_f32(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32)).copy()
