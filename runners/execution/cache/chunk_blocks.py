"""Chunked search over a large corpus, one block of documents at a time (bounded memory).

`ChunkedSearch` (search layer) in memory splits the whole corpus, encodes every chunk into one matrix and scores one
queries x chunks matrix: at a million documents that is several million vectors and many GB. From
`encode.large_corpus_docs` documents on (with a cached encoder) `LargeChunkedSearch` takes this path instead: documents
are read in blocks from the corpus' Arrow columns (`prefill.read_block`), each block is split with the
same `split_corpus` (same chunk ids and texts), its chunk vectors come from the embedding cache in one
vectorised pass (`prefill.encode_block`, texts built as mteb's `_corpus_to_dict` builds them), a
document scores as its best chunk, and each block's best documents feed per-query `(score, id)` heaps
(`search.top_k.TopKDocs`). Only one block of chunks, vectors and scores is held at a time.

The results equal the in-memory path's, bit for bit and in the same dict order, for any block size and any
ties: a cached encoder's scores do not depend on the block (search/scores.py), and `TopKDocs` keeps the top_k
by (score, id) over every block, every tie at a block's cut considered. The split report (warnings) is
accumulated per block.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...config.benchmark import LARGE_CORPUS_DOCS
from ...search.chunk_fit import SplitReport, document_string
from ...search.chunking import Chunk, Chunker, ChunkedSearch, split_corpus, token_offsets
from ...search.tokens import ModelTokens, OffsetsFn, model_tokens
from ...search.top_k import TopKDocs
from .embedding_cache import CachedEncoder
from .prefill import DocumentBlock, encode_block, model_text, read_block

BLOCK_DOCS = 50_000  # documents per block (their chunks are several times more rows)


def blockwise(encoder: Any, n_docs: int, threshold: int) -> bool:
    """The block path needs the cache's bulk lookup; smaller corpora keep the in-memory path."""
    return isinstance(encoder, CachedEncoder) and 0 <= threshold <= n_docs


@dataclass
class ReportTotals:
    """A whole split's SplitReport, folded block by block without keeping the chunks.

    Chunk lengths are kept as 4-byte ints (the in-memory path holds a list of them), so the warnings
    (`report()`) are exactly the in-memory path's.
    """

    documents: int = 0
    chunks: int = 0
    no_room: list[int] = field(default_factory=list)
    lengths: array = field(default_factory=lambda: array("i"))

    def add(self, report: SplitReport, chunks: list[Chunk], tokens: ModelTokens | None) -> None:
        """Fold one block's report; in characters the lengths are counted here, as `ChunkedSearch._warn` does."""
        if tokens is not None and not report.lengths:
            report.lengths = [tokens.count(document_string(c.title, c.text)) for c in chunks]
        self.documents += report.documents
        self.chunks += len(chunks)
        self.no_room += report.no_room
        self.lengths.extend(report.lengths)

    def report(self) -> SplitReport:
        return SplitReport(self.documents, list(self.no_room), self.lengths)  # type: ignore[arg-type]


def chunk_block(corpus: Any, start: int, stop: int, chunker: Chunker, offsets: OffsetsFn | None,
                report: SplitReport) -> tuple[list[str], np.ndarray, DocumentBlock, list[Chunk]]:
    """Documents [start, stop) split into chunks: (doc ids, first chunk of each, chunk rows as mteb reads them).

    Document ids, titles and texts are taken as the in-memory path takes them (str id, title or "");
    the chunk rows' model texts are `_corpus_to_dict`'s, which `create_dataloader` gives the model there.
    """
    docs = read_block(corpus, start, stop)
    doc_ids = [str(i) for i in docs.ids]
    chunks = split_corpus(list(zip(doc_ids, docs.titles, docs.bodies)), chunker, offsets, report)
    starts = np.flatnonzero([i == 0 or c.doc_id != chunks[i - 1].doc_id for i, c in enumerate(chunks)])
    titles = [c.title for c in chunks]
    bodies = [c.text for c in chunks]
    block = DocumentBlock([c.id for c in chunks], titles, bodies, [model_text(t, b) for t, b in zip(titles, bodies)])
    return doc_ids, starts.astype(np.int64), block, chunks


def search_blocks(encoder: CachedEncoder, corpus: Any, chunker: Chunker, offsets: OffsetsFn | None,
                  q_emb: Any, query_ids: list[str], top_k: int, *, task_metadata: Any, hf_split: str,
                  hf_subset: str, encode_kwargs: dict[str, Any], totals: ReportTotals,
                  block_docs: int = BLOCK_DOCS,
                  tokens: ModelTokens | None = None) -> tuple[dict[str, dict[str, float]], tuple[int, int]]:
    """Best-chunk document scores over the whole corpus, block by block: (results, (encoded, reused) of chunks)."""
    import torch

    ranked = TopKDocs(query_ids, top_k)
    encoded = reused = 0
    for start in range(0, len(corpus), block_docs):
        report = SplitReport()
        doc_ids, starts, block, chunks = chunk_block(corpus, start, min(start + block_docs, len(corpus)),
                                                     chunker, offsets, report)
        totals.add(report, chunks, tokens)
        del chunks
        before = (encoder.encoded, encoder.reused)
        vectors = encode_block(encoder, block, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                               encode_kwargs=dict(encode_kwargs))
        encoded, reused = encoded + encoder.encoded - before[0], reused + encoder.reused - before[1]
        sim = torch.as_tensor(encoder.similarity(q_emb, vectors))
        if sim.shape[1] != len(doc_ids):  # several chunks per document: best chunk wins
            sim = torch.from_numpy(np.maximum.reduceat(sim.cpu().numpy(), starts, axis=1))
        ranked.add(sim, doc_ids)
        del block, vectors, sim
    return ranked.results(), (encoded, reused)


class LargeChunkedSearch(ChunkedSearch):
    """`ChunkedSearch` that scores a corpus of `large_corpus_docs` documents or more block by block."""

    def __init__(self, encoder: Any, chunker: Chunker, meta: Any, large_corpus_docs: int = LARGE_CORPUS_DOCS,
                 block_docs: int = BLOCK_DOCS) -> None:
        super().__init__(encoder, chunker, meta)
        self.large_corpus_docs = large_corpus_docs  # from this many documents (cached encoder): block by block
        self.block_docs = block_docs

    def _blockwise(self, n_docs: int) -> bool:
        return blockwise(self.encoder, n_docs, self.large_corpus_docs)

    def _search_blocks(self, q_emb: Any, query_ids: list[str], top_k: int, *, task_metadata: Any, hf_split: str,
                       hf_subset: str, encode_kwargs: dict[str, Any]) -> dict[str, dict[str, float]]:
        corpus, self._corpus = self._corpus, None
        task = getattr(task_metadata, "name", "")
        offsets = token_offsets(self.encoder) if self.chunker.unit == "tokens" else None
        totals = ReportTotals()
        results, (encoded, reused) = search_blocks(
            self.encoder, corpus, self.chunker, offsets, q_emb, query_ids, top_k, task_metadata=task_metadata,
            hf_split=hf_split, hf_subset=hf_subset, encode_kwargs=encode_kwargs, totals=totals,
            block_docs=self.block_docs,
            tokens=None if task in self._warned else model_tokens(self.encoder))  # chars: count only to warn
        self._warn(totals.report(), task, ())
        self.stats = {"documents": totals.documents, "chunks": totals.chunks, "encoded": encoded, "reused": reused}
        return results
