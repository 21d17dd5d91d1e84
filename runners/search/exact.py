"""Exact search over memory-mapped document vectors, block by block, with mteb's exact numbers.

mteb's default full-corpus search encodes the corpus in chunks of `corpus_chunk_size` (50,000),
scores each chunk with the model's `similarity`, keeps `torch.topk(top_k + 1)` per chunk and merges
into a heap of `(score, corpus_id)` of size `top_k`. `BlockwiseExactIndex` does exactly that over a
(memory-mapped) matrix: same block boundaries, same similarity call, same topk, same heap, so scores
and tie-breaking are identical by construction (tests compare against mteb on corpora with ties).
It returns the heap in its internal order; mteb re-pushes it into an empty heap, which leaves a
valid heap array unchanged, so even the order of the result dict is mteb's.

`MmapExactSearch` is mteb's `SearchEncoderWrapper` with this backend: `index` encodes the corpus in
the same chunks and writes each into a memory-mapped `.npy` file, so the process never holds more
than one chunk of vectors, however large the corpus. Meant for large corpora; small ones keep the
default path.
"""

from __future__ import annotations

import heapq
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from mteb.models.search_wrappers import SearchEncoderWrapper

from custom_tasks.mteb_private import create_dataloader

from .counts import CountsFromInner

MTEB_CHUNK = 50_000  # SearchEncoderWrapper's default corpus_chunk_size
MTEB_K_OFFSET = 1  # SearchEncoderWrapper's search_k_offset


def blockwise_top_k(query_embeddings: Any, vectors: Any, ids: list[str], top_k: int, similarity_fn: Any,
                    block: int = MTEB_CHUNK, k_offset: int = MTEB_K_OFFSET) -> list[list[tuple[float, int]]]:
    """Per query, the heap of `(score, corpus_id)` mteb's chunked search ends with, as (score, row) pairs."""
    import torch

    n_q = len(query_embeddings)
    heaps: list[list[tuple[float, str]]] = [[] for _ in range(n_q)]
    row_of: dict[str, int] = {}
    for start in range(0, len(vectors), block):
        chunk = np.array(vectors[start:start + block])  # one block copied out of the memory map (writable)
        scores = torch.as_tensor(similarity_fn(query_embeddings, chunk))
        values, idx = torch.topk(scores, min(top_k + k_offset, scores.shape[1]), dim=1, largest=True)
        idx_list, val_list = idx.cpu().tolist(), values.cpu().tolist()
        del chunk, scores, values, idx
        for q in range(n_q):
            heap = heaps[q]
            for i, score in zip(idx_list[q], val_list[q], strict=True):
                cid = ids[start + i]
                row_of.setdefault(cid, start + i)
                if len(heap) < top_k:
                    heapq.heappush(heap, (score, cid))
                else:
                    heapq.heappushpop(heap, (score, cid))
    return [[(s, row_of[c]) for s, c in heap] for heap in heaps]


class BlockwiseExactIndex:
    """mteb `IndexEncoderSearchProtocol` backend: exact search over any (memory-mapped) matrix."""

    def __init__(self, block: int = MTEB_CHUNK) -> None:
        self.block = block
        self.vectors: Any = None
        self.idxs: list[str] = []

    def add_documents(self, embeddings: Any, idxs: list[str]) -> None:
        self.vectors = embeddings if isinstance(embeddings, np.ndarray) else np.asarray(embeddings)
        self.idxs = list(idxs)

    def search(self, embeddings: Any, top_k: int, similarity_fn: Any = None, top_ranked: Any = None,
               query_idx_to_id: Any = None) -> tuple[list[list[float]], list[list[int]]]:
        if top_ranked is not None:
            raise NotImplementedError("blockwise exact search does not rerank pre-ranked documents")
        if self.vectors is None or similarity_fn is None:
            raise ValueError("no documents added (or no similarity function)")
        heaps = blockwise_top_k(embeddings, self.vectors, self.idxs, top_k, similarity_fn, self.block)
        return [[s for s, _ in h] for h in heaps], [[r for _, r in h] for h in heaps]

    def clear(self) -> None:
        self.vectors, self.idxs = None, []


class MmapExactSearch(CountsFromInner, SearchEncoderWrapper):
    """SearchEncoderWrapper whose corpus vectors live in a memory-mapped file, searched block by block."""

    def __init__(self, model: Any, workdir: Path | None = None, corpus_chunk_size: int = MTEB_CHUNK) -> None:
        self.backend = BlockwiseExactIndex(corpus_chunk_size)
        super().__init__(model, corpus_chunk_size=corpus_chunk_size, index_backend=self.backend)
        self.workdir = Path(workdir) if workdir else None
        self._tmp: Path | None = None

    def index(self, corpus: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, encode_kwargs: Any,
              num_proc: int | None = None, **kwargs: Any) -> None:
        """Encode the corpus chunk by chunk (mteb's chunks and calls) into a memory-mapped matrix."""
        from mteb.types import PromptType

        self.task_corpus = corpus
        self._cleanup()
        if self.workdir:
            self.workdir.mkdir(parents=True, exist_ok=True)
        self._tmp = Path(tempfile.mkdtemp(prefix="exact-", dir=self.workdir))
        out = None
        for start in range(0, len(corpus), self.corpus_chunk_size):
            sub = corpus.select(range(start, min(start + self.corpus_chunk_size, len(corpus))))
            emb = self.model.encode(
                create_dataloader(sub, task_metadata=task_metadata, prompt_type=PromptType.document,
                                  batch_size=encode_kwargs.get("batch_size", 32), num_proc=num_proc),
                task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                prompt_type=PromptType.document, **encode_kwargs)
            emb = _as_numpy(emb)
            if out is None:
                out = np.lib.format.open_memmap(self._tmp / "corpus.npy", mode="w+", dtype=emb.dtype,
                                                shape=(len(corpus), emb.shape[1]))
            out[start:start + len(emb)] = emb
        if out is not None:
            out.flush()
            del out
            vectors = np.load(self._tmp / "corpus.npy", mmap_mode="r")
        else:
            vectors = np.zeros((0, 0), np.float32)
        self.backend.add_documents(vectors, list(corpus["id"]))

    def search(self, queries: Any, **kwargs: Any) -> Any:
        try:
            return super().search(queries, **kwargs)
        finally:
            self._cleanup()

    def _sort_full_corpus_results(self, *, sub_corpus_ids: Any, **kwargs: Any) -> Any:
        """mteb indexes a lazy datasets Column once per hit; a list is instant."""
        return super()._sort_full_corpus_results(sub_corpus_ids=list(sub_corpus_ids), **kwargs)

    def _cleanup(self) -> None:
        self.backend.clear()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


def _as_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)
