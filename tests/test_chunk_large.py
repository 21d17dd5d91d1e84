"""Chunked search over large corpora, block by block (runners/execution/cache/chunk_blocks.py): the in-memory path's
results, stats, cache counts and warnings, with only one block of chunks in memory."""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import pytest
from datasets import Dataset

from runners.execution.candidates import experiment_candidates as ex
from runners.execution.cache.embedding_cache import CachedEncoder, EmbeddingStore
from runners.execution.encoding.synthetic import SyntheticEncoder
from runners.execution.cache.chunk_blocks import BLOCK_DOCS, LargeChunkedSearch, blockwise, chunk_block
from runners.search.chunking import Chunker, ChunkedSearch, SplitReport, split_corpus
from tests.search_fixture import queries, search_kwargs, tiny_task  # noqa: F401  (tiny_task: a fixture)
from tests.test_experiments import FakeEncoder


@pytest.fixture(autouse=True)
def _fresh_models():
    ex.clear_shared()
    yield
    ex.clear_shared()


def _corpus(n: int, seed: int = 1) -> Dataset:
    """Shuffled ids, unique texts of 1-12 words' lengths (short and multi-chunk documents), some titles."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(300)]
    ids = [f"d{i:04d}" for i in rng.permutation(n)]
    titles = ["" if i % 3 else f"title {i % 5} of {i}" for i in range(n)]
    texts = [f"doc {i} " + " ".join(rng.choice(vocab, int(rng.integers(1, 40)))) + (" " if i % 7 == 0 else "")
             for i in range(n)]
    return Dataset.from_dict({"id": ids, "title": titles, "text": texts})


def _run(search: ChunkedSearch, corpus: Dataset, qs: Dataset, kw: dict[str, Any], top_k: int) -> dict:
    search.index(corpus, **kw)
    return search.search(qs, top_k=top_k, **kw)


def _pair(tmp_path, name: str, chunker: Chunker, block_docs: int, encoder: Any = None,
          ties: int = 0) -> tuple[Any, ChunkedSearch]:
    enc = CachedEncoder(encoder or SyntheticEncoder(dim=16, ties=ties), EmbeddingStore(tmp_path / name))
    large = block_docs > 0
    search = (LargeChunkedSearch(enc, chunker, enc.mteb_model_meta, large_corpus_docs=0, block_docs=block_docs)
              if large else ChunkedSearch(enc, chunker, enc.mteb_model_meta))
    return enc, search


@pytest.mark.parametrize(("chunker", "top_k", "block_docs", "ties"), [
    (Chunker(40, 8, unit="chars"), 5, 37, 0), (Chunker(40, 8, unit="chars", title="first"), 60, 50, 0),
    (Chunker(25, 0, unit="chars"), 10, 1000, 0), (Chunker(10_000, 0, unit="chars"), 10, 64, 0),
    (Chunker(10_000, 0, unit="chars"), 10, 7, 5), (Chunker(40, 8, unit="chars"), 30, 13, 3)])
def test_block_path_equals_in_memory_path(tiny_task, tmp_path, chunker, top_k, block_docs, ties):
    """Bit for bit for any block size: scores are block-independent, ties go by (score, id) (search/top_k.py)."""
    corpus, qs, kw = _corpus(230), queries(9), search_kwargs(tiny_task)
    ref_enc, ref = _pair(tmp_path, "ref", chunker, 0, ties=ties)
    expected = _run(ref, corpus, qs, kw, top_k)
    assert ref._corpus is None and ref.stats["chunks"] >= len(corpus)
    for attempt in ("cold", "warm"):  # cold: an empty cache; warm: every chunk a hit
        enc, ours = _pair(tmp_path, "ours", chunker, block_docs, ties=ties)
        ours.index(corpus, **kw)
        assert ours._corpus is not None and ours._emb is None  # the block path: nothing split or encoded yet
        got = ours.search(qs, top_k=top_k, **kw)
        assert ours._emb is None and ours._corpus is None  # nothing kept after search
        for qid in expected:  # same scores (bit for bit), same documents, same dict order
            assert list(got[qid].items()) == list(expected[qid].items()), (attempt, qid)
        ref_stats = dict(ref.stats) if attempt == "cold" else {
            **ref.stats, "encoded": 0, "reused": ref.stats["encoded"] + ref.stats["reused"]}
        assert ours.stats == ref_stats, attempt
        assert (enc.encoded, enc.reused) == ((ref_enc.encoded, ref_enc.reused) if attempt == "cold"
                                             else (0, ref_enc.encoded + ref_enc.reused)), attempt
    if ties:  # equal scores straddle the top_k cut: the greater ids are kept, in every block layout
        assert any(len(r) == top_k and list(r.values()).count(min(r.values())) > 1 for r in expected.values())
        for r in expected.values():
            assert list(r.items()) == sorted(r.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    if chunker.size < 100:
        assert ref.stats["chunks"] > 1.5 * len(corpus)  # many documents have several chunks


def test_token_chunks_and_warnings_equal_in_memory_path(tiny_task, tmp_path, caplog):
    """Tokens (the model's tokenizer), long titles leaving no room, chunks over the limit: same results, same
    warnings (counted over the whole corpus, not per block), said once per task."""
    corpus, qs, kw = _corpus(150, seed=2), queries(6), search_kwargs(tiny_task)
    runs = []
    for chunker in (Chunker(6, 2), Chunker(90, 10, unit="chars")):
        for name, block_docs in (("ref", 0), ("ours", 16)):
            model = FakeEncoder()
            model.max_seq_length = 9  # whitespace tokens, no special tokens; "title N of M" leaves no room in 6
            enc, search = _pair(tmp_path, f"{name}-{chunker.tag}", chunker, block_docs, model)
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="runners.search.chunking"):
                results = _run(search, corpus, qs, kw, 10)
                _run(search, corpus, qs, kw, 10)  # a second split/subset of the same task: no new warnings
            runs.append((results, search.stats, [r.getMessage() for r in caplog.records]))
        (res_a, stats_a, warn_a), (res_b, stats_b, warn_b) = runs[-2:]
        for qid in res_a:
            assert list(res_a[qid].items()) == list(res_b[qid].items())
        assert stats_a["chunks"] == stats_b["chunks"] and warn_a == warn_b and warn_a
    assert any("leaves no room" in m for m in runs[0][2]) and any("max_seq_length 9" in m for m in runs[0][2])
    assert any("longer than the model's max_seq_length 9" in m for m in runs[2][2])


def test_chunk_rows_are_the_in_memory_rows(tiny_task):
    """A block's chunk ids, model texts and document starts equal a whole-corpus split's, as mteb reads them."""
    from custom_tasks.mteb_private import create_dataloader
    from mteb.types import PromptType

    corpus, chunker = _corpus(60), Chunker(30, 5, unit="chars")
    docs = [(str(i), t or "", x) for i, t, x in zip(corpus["id"], corpus["title"], corpus["text"])]
    chunks = split_corpus(docs, chunker)
    rows = Dataset.from_dict({"id": [c.id for c in chunks], "title": [c.title for c in chunks],
                              "text": [c.text for c in chunks]})
    loader = create_dataloader(rows, task_metadata=tiny_task.metadata, prompt_type=PromptType.document)
    ids, texts, n = [], [], 0
    for start in range(0, 60, 13):
        doc_ids, starts, block, _ = chunk_block(corpus, start, min(start + 13, 60), chunker, None, SplitReport())
        assert doc_ids == [d[0] for d in docs[start:start + 13]]
        assert [block.ids[s].rsplit("#", 1) for s in starts] == [[d, "0"] for d in doc_ids]
        ids += block.ids
        texts += block.texts
        n += len(doc_ids)
    assert ids == [c.id for c in chunks] and texts == list(loader.dataset["text"]) and n == 60


def test_threshold():
    cached = CachedEncoder(SyntheticEncoder(dim=8), EmbeddingStore.__new__(EmbeddingStore))
    assert blockwise(cached, 10, 10) and not blockwise(cached, 9, 10)
    assert not blockwise(SyntheticEncoder(dim=8), 10**6, 0)  # only the cache has the bulk lookup
    assert BLOCK_DOCS == 50_000 and LargeChunkedSearch(cached, Chunker(8), None).large_corpus_docs == 200_000


def test_run_benchmark_chunk_experiment_large_path_scores_identical(tmp_path, tiny_copy, monkeypatch):
    """A chunk experiment in a benchmark, with `large_corpus_docs: 0` and the default: identical results."""
    import yaml

    import runners.execution.cache.chunk_blocks as cb
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import candidates_for, run_benchmark
    from runners.results.store import load_rankings, task_result_path

    calls: list[int] = []
    inner = cb.search_blocks
    monkeypatch.setattr(cb, "search_blocks", lambda *a, **k: calls.append(1) or inner(*a, **k))

    model = {"name": "synthetic/hash", "revision": "1", "factory": "runners.execution.encoding.synthetic:make_encoder",
             "factory_kwargs": {"dim": 32, "ties": 0}}
    experiment = {"type": "chunk", "model": "synthetic/hash", "unit": "chars", "sizes": [60, 10_000],
                  "overlap": 10}
    runs = []
    for name, threshold in (("default", 200_000), ("large", 0)):
        ex.clear_shared()
        cfg_path, results = tmp_path / f"{name}.yaml", tmp_path / f"results-{name}"
        cfg_path.write_text(yaml.safe_dump({
            "tasks": [str(tiny_copy)], "results_dir": str(results), "cache_dir": str(tmp_path / f"cache-{name}"),
            "models": [model], "experiments": [experiment],
            "encode": {"batch_size": 16, "large_corpus_docs": threshold}}))
        cfg = BenchmarkConfig.from_file(cfg_path)
        recs = run_benchmark(cfg, candidates=candidates_for(cfg), show_progress=False)
        assert len(recs) == 3 and all(r.status == "ran" for r in recs)
        chunked = [r for r in recs if "chunk" in r.candidate]
        scores = {}
        for rec in chunked:
            path = task_result_path(results, rec.candidate, "1", rec.task)  # mteb's experiment of synthetic/hash
            assert path.is_file() and "experiments" in path.parts, path
            scores[rec.candidate] = ([{k: v for k, v in s.items() if k != "evaluation_time"}
                                      for s in json.loads(path.read_text())["scores"]["test"]],
                                     load_rankings(results, rec.candidate, rec.task), rec.encoded, rec.reused)
        runs.append(scores)
        assert len(calls) == (2 if threshold == 0 else 0)  # both chunk sizes took the block path, or neither
        calls.clear()
    assert runs[0].keys() == runs[1].keys() and len(runs[0]) == 2
    for cand in runs[0]:
        assert runs[0][cand] == runs[1][cand], cand
    assert any(r[2] > 0 for r in runs[0].values())  # the 60-char chunks were encoded (split documents)
