"""Memory does not grow with the corpus (issue #13): 100k vs 500k documents, peak RssAnon of a fresh process.

Each child (the one of benchmarks/bench_corpus_store.py, shared) validates a generated BEIR corpus into its disk
store, computes the content hash, builds mteb's split data and streams every document once, while a thread samples
RssAnon (anonymous memory; the memory-mapped store is file-backed and not counted). The dict path costs ~1 KB per document, i.e. ~400 MB more here.
"""

from __future__ import annotations

import pytest

from benchmarks.bench_corpus_store import make_corpus, run_child


@pytest.mark.slow
def test_peak_memory_is_independent_of_corpus_size(tmp_path):
    small = run_child(make_corpus(tmp_path / "small", 100_000, n_queries=100), tmp_path / "cache", "0", timeout=600)
    large = run_child(make_corpus(tmp_path / "large", 500_000, n_queries=100), tmp_path / "cache", "0", timeout=600)
    assert (small["docs"], large["docs"]) == (100_000, 500_000)
    assert small["kind"] == large["kind"] == "CorpusStore"
    growth = large["peak_mb"] - small["peak_mb"]
    print(f"peak RssAnon: 100k docs {small['peak_mb']:.0f} MB, 500k docs {large['peak_mb']:.0f} MB")
    assert growth < 20, f"peak RssAnon grew {growth:.0f} MB for 400k more documents (dict path: ~400 MB)"
