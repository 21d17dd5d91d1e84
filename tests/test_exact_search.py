"""Blockwise exact search over memory-mapped vectors gives mteb's own results: scores, ties, order."""

from __future__ import annotations

import numpy as np
import pytest
from datasets import Dataset

from runners.execution.synthetic import SyntheticEncoder, synthetic_vectors
from runners.search.exact import BlockwiseExactIndex, MmapExactSearch, blockwise_top_k
from tests.search_fixture import queries, search_kwargs, tiny_task  # noqa: F401  (tiny_task: a fixture)


def _corpus(n: int) -> Dataset:
    rng = np.random.default_rng(0)
    ids = [f"d{i:04d}" for i in rng.permutation(n)]  # ids not in corpus order: ties break on id, not row
    return Dataset.from_dict({"id": ids, "text": [f"text {i % 17}" for i in range(n)], "title": [""] * n})


@pytest.mark.parametrize(("n_docs", "chunk", "top_k", "ties"), [(230, 40, 5, 4), (230, 40, 60, 4), (97, 1000, 10, 3),
                                                                (300, 64, 10, 0)])
def test_same_results_as_mteb_search_including_ties(tiny_task, tmp_path, n_docs, chunk, top_k, ties):
    from mteb.models.search_wrappers import SearchEncoderWrapper

    enc = SyntheticEncoder(dim=16, ties=ties)
    corpus, qs, kw = _corpus(n_docs), queries(7), search_kwargs(tiny_task)
    ref = SearchEncoderWrapper(enc, corpus_chunk_size=chunk)
    ref.index(corpus, **kw)
    expected = ref.search(qs, top_k=top_k, **kw)
    ours = MmapExactSearch(enc, workdir=tmp_path, corpus_chunk_size=chunk)
    ours.index(corpus, **kw)
    assert isinstance(ours.backend.vectors, np.memmap)
    got = ours.search(qs, top_k=top_k, **kw)
    assert got == expected
    for qid in expected:  # same scores, same documents, and the same dict order
        assert list(got[qid].items()) == list(expected[qid].items())
    if ties:
        assert any(len(set(r.values())) < len(r) for r in expected.values())  # the test has ties to break
    assert not list(tmp_path.glob("exact-*"))  # the memory-mapped corpus is removed after search


def test_backend_over_a_memmap_file_matches_in_memory(tmp_path):
    enc = SyntheticEncoder(dim=8, ties=5)
    docs = synthetic_vectors([f"t{i}" for i in range(500)], 8, 5)
    np.save(tmp_path / "v.npy", docs)
    ids = [f"x{i}" for i in range(500)]
    q = synthetic_vectors(["a", "b", "c"], 8, 5)
    mm = BlockwiseExactIndex(block=128)
    mm.add_documents(np.load(tmp_path / "v.npy", mmap_mode="r"), ids)
    mem = BlockwiseExactIndex(block=128)
    mem.add_documents(docs, ids)
    assert mm.search(q, 10, enc.similarity) == mem.search(q, 10, enc.similarity)
    heaps = blockwise_top_k(q, docs, ids, 10, enc.similarity, 128)
    assert all(len(h) == 10 for h in heaps)


def test_evaluate_scores_identical_to_default_path(tiny_task, tmp_path):
    import mteb

    enc = SyntheticEncoder(dim=32, ties=6)
    kw = {"overwrite_strategy": "always", "show_progress_bar": False}
    plain = mteb.evaluate(enc, tiny_task, cache=mteb.ResultCache(tmp_path / "a"), **kw)
    mm = mteb.evaluate(MmapExactSearch(enc, workdir=tmp_path / "w", corpus_chunk_size=5), tiny_task,
                       cache=mteb.ResultCache(tmp_path / "b"), **kw)
    ref = mteb.evaluate(mteb.models.search_wrappers.SearchEncoderWrapper(enc, corpus_chunk_size=5), tiny_task,
                        cache=mteb.ResultCache(tmp_path / "c"), **kw)
    s = [r.task_results[0].scores["test"][0] for r in (plain, mm, ref)]
    for key in ("ndcg_at_10", "map_at_10", "mrr_at_10", "recall_at_5", "precision_at_1"):
        assert s[1][key] == s[2][key]
    assert s[0]["ndcg_at_10"] == pytest.approx(s[1]["ndcg_at_10"], abs=1e-9)  # mteb's own 50k-chunk default
