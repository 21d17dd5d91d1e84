"""Large corpora: mteb's chunked exact search, fed block by block from the collection and the cache.

From `encode.large_corpus_docs` documents on (200,000 by default), a cached dense model (alone, or as the
dense side of a hybrid search) is evaluated through `LargeCorpusSearch` instead of mteb's default
`SearchEncoderWrapper`. It is that wrapper with
one method replaced: the full-corpus search reads each chunk of `corpus_chunk_size` rows straight from
the corpus' Arrow columns and gets its vectors from `prefill.encode_block` (cache hits copied out of the
memory-mapped store, misses encoded and stored), instead of `datasets.map` per row and a per-row cache
lookup. Everything that decides a number is mteb's: the same chunk boundaries, the model's own
`similarity`, `torch.topk(top_k + 1)` per chunk and the same `(score, corpus_id)` heap, so scores, ties
and order equal the default path (tested). Only one chunk of vectors and scores is in memory at a time.
"""

from __future__ import annotations

import heapq
import logging
from typing import Any

import numpy as np

from mteb.models.search_wrappers import SearchEncoderWrapper

from ...config.benchmark import LARGE_CORPUS_DOCS
from ...search.counts import CountsFromInner
from ...search.exact import MTEB_CHUNK, MTEB_K_OFFSET
from .embedding_cache import CachedEncoder
from .prefill import encode_block, read_block

logger = logging.getLogger(__name__)


def corpus_size(task: Any) -> int:
    """The largest corpus among the task's evaluated splits (loads the task's data if needed)."""
    if not getattr(task, "data_loaded", True):
        task.load_data()
    sizes = [len(split["corpus"]) for splits in (getattr(task, "dataset", None) or {}).values()
             for name, split in splits.items() if name in task.eval_splits and split.get("corpus") is not None]
    return max(sizes, default=0)


def dense_search(model: Any, threshold: int = LARGE_CORPUS_DOCS) -> SearchEncoderWrapper:
    """The dense retriever inside a composed search (hybrid): block-wise from `threshold` documents on."""
    if isinstance(model, CachedEncoder) and threshold >= 0:
        return LargeCorpusSearch(model, min_docs=threshold)
    return SearchEncoderWrapper(model)


def search_model_for(model: Any, task: Any, threshold: int = LARGE_CORPUS_DOCS) -> Any:
    """`LargeCorpusSearch` around a cached encoder when the task's corpus has `threshold` documents or more."""
    if not isinstance(model, CachedEncoder) or threshold < 0:
        return model
    n = corpus_size(task)
    if n < threshold:
        return model
    logger.info("%s: %d documents, block-wise exact search from the embedding cache", task.metadata.name, n)
    return LargeCorpusSearch(model)


class LargeCorpusSearch(CountsFromInner, SearchEncoderWrapper):
    """mteb's `SearchEncoderWrapper` whose corpus chunks come column-wise from Arrow and the cache."""

    def __init__(self, model: CachedEncoder, corpus_chunk_size: int = MTEB_CHUNK, min_docs: int = 0) -> None:
        super().__init__(model, corpus_chunk_size=corpus_chunk_size)
        self.min_docs = min_docs  # smaller corpora take mteb's own path (a retriever inside hybrid search)

    def _full_corpus_search(self, *, query_idx_to_id: dict[int, str], query_embeddings: Any, task_metadata: Any,
                            hf_subset: str, hf_split: str, top_k: int, encode_kwargs: Any,
                            timer: Any) -> dict[str, list[tuple[float, str]]]:
        """mteb's `chunked_full_corpus_search` (same chunks, similarity, topk, heap), chunks read in bulk."""
        import torch

        corpus = self.task_corpus
        if corpus is None:
            raise ValueError("Corpus must be indexed before searching.")
        if len(corpus) < self.min_docs:
            return super()._full_corpus_search(
                query_idx_to_id=query_idx_to_id, query_embeddings=query_embeddings, task_metadata=task_metadata,
                hf_subset=hf_subset, hf_split=hf_split, top_k=top_k, encode_kwargs=encode_kwargs, timer=timer)
        heaps: dict[str, list[tuple[float, str]]] = {qid: [] for qid in query_idx_to_id.values()}
        with timer("Searching corpus", split=hf_split, subset=hf_subset):
            for start in range(0, len(corpus), self.corpus_chunk_size):
                block = read_block(corpus, start, min(start + self.corpus_chunk_size, len(corpus)))
                vectors = encode_block(self.model, block, task_metadata=task_metadata, hf_split=hf_split,
                                       hf_subset=hf_subset, encode_kwargs=dict(encode_kwargs))
                scores = torch.as_tensor(self.model.similarity(query_embeddings, vectors))
                values, idx = torch.topk(scores, min(top_k + MTEB_K_OFFSET, scores.shape[1]), dim=1, largest=True)
                self._merge(heaps, query_idx_to_id, idx.cpu().numpy(), values.cpu().numpy(), block.ids, top_k)
                del vectors, scores, values, idx
        return heaps

    @staticmethod
    def _merge(heaps: dict[str, list[tuple[float, str]]], query_idx_to_id: dict[int, str], idx: Any, values: Any,
               ids: list[str], top_k: int) -> None:
        """mteb's heap updates, skipping only the pushes that cannot change a heap.

        Once a heap is full, `heappushpop` of an item below its smallest score returns the item untouched;
        topk's values are sorted, so per query only a prefix of the candidates can enter.
        """
        floor = np.full(len(values), -np.inf)
        for q_idx, qid in query_idx_to_id.items():
            if top_k and len(heaps[qid]) >= top_k:
                floor[q_idx] = heaps[qid][0][0]
        below = values.astype(np.float64) < floor[:, None]  # NaN (sorted first by topk) is never below
        passing = np.where(below.any(axis=1), below.argmax(axis=1), values.shape[1])
        for q_idx, qid in query_idx_to_id.items():
            n = int(passing[q_idx])
            if not n:
                continue
            heap = heaps[qid]
            for i, score in zip(idx[q_idx, :n].tolist(), values[q_idx, :n].tolist(), strict=True):
                if len(heap) < top_k:
                    heapq.heappush(heap, (score, ids[i]))
                else:
                    heapq.heappushpop(heap, (score, ids[i]))
