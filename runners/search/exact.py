"""mteb's exact-search constants, pinned: the large-corpus path must cut and rank exactly as mteb does.

`LargeCorpusSearch` (runners/execution/cache/large_corpus.py) replaces mteb's full-corpus search with one fed
block by block from the cache; its results equal the default path only with the same chunk boundaries
and the same `torch.topk(top_k + offset)` per chunk as mteb's `SearchEncoderWrapper`. mteb keeps these
as a constructor default and a literal argument, not importable constants, so they are restated here
(tests/test_large_corpus.py checks both against mteb).
"""

from __future__ import annotations

MTEB_CHUNK = 50_000  # SearchEncoderWrapper(corpus_chunk_size=50_000): its default chunk of documents
MTEB_K_OFFSET = 1  # SearchEncoderWrapper._full_corpus_search passes search_k_offset=1 to chunked search
