"""Vectors encoded once and kept: the embedding cache, its on-disk vector store and index, the block-wise
prefill, and the searches that read stored vectors block by block (large corpora, chunked documents)."""
