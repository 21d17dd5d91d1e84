"""The large-corpus path (bulk blocks from Arrow + the cache) gives mteb's default results, bit for bit."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from datasets import Dataset

from runners.execution.cache.embedding_cache import CachedEncoder, EmbeddingStore
from runners.execution.cache.large_corpus import LargeCorpusSearch, search_model_for
from runners.execution.cache.prefill import encode_block, model_text, read_block
from runners.execution.encoding.synthetic import SyntheticEncoder
from tests.search_fixture import queries, search_kwargs, tiny_task  # noqa: F401  (tiny_task: a fixture)


def _corpus(n: int) -> Dataset:
    """Shuffled ids (ties break on id), repeated texts (deduplicated per chunk), some titles, padded text."""
    rng = np.random.default_rng(1)
    ids = [f"d{i:04d}" for i in rng.permutation(n)]
    titles = ["" if i % 3 else f"title {i % 5}" for i in range(n)]
    texts = [f" text {i % 23} " if i % 7 else f"text {i % 23}" for i in range(n)]
    return Dataset.from_dict({"id": ids, "title": titles, "text": texts})


def _cached(tmp_path, name: str, ties: int) -> CachedEncoder:
    return CachedEncoder(SyntheticEncoder(dim=16, ties=ties), EmbeddingStore(tmp_path / name))


@pytest.mark.parametrize(("n_docs", "chunk", "top_k", "ties"), [(230, 40, 5, 4), (230, 40, 60, 4), (97, 1000, 10, 3),
                                                                (300, 64, 10, 0)])
def test_same_results_and_cache_as_mteb_default_path(tiny_task, tmp_path, n_docs, chunk, top_k, ties):
    from mteb.models.search_wrappers import SearchEncoderWrapper

    corpus, qs, kw = _corpus(n_docs), queries(7), search_kwargs(tiny_task)
    ref_model = _cached(tmp_path, "ref", ties)
    ref = SearchEncoderWrapper(ref_model, corpus_chunk_size=chunk)
    ref.index(corpus, **kw)
    expected = ref.search(qs, top_k=top_k, **kw)
    for attempt in ("cold", "warm"):  # cold: encodes into an empty cache; warm: all hits
        ours_model = _cached(tmp_path, "ours", ties)
        ours = LargeCorpusSearch(ours_model, corpus_chunk_size=chunk)
        ours.index(corpus, **kw)
        got = ours.search(qs, top_k=top_k, **kw)
        for qid in expected:  # same scores, same documents, and the same dict order
            assert list(got[qid].items()) == list(expected[qid].items()), attempt
        assert (ours_model.encoded, ours_model.reused) == ((ref_model.encoded, ref_model.reused) if attempt == "cold"
                                                           else (0, ref_model.encoded + ref_model.reused))
    if ties:
        assert any(len(set(r.values())) < len(r) for r in expected.values())  # the test has ties to break


def test_block_texts_and_vectors_are_mteb_corpus_texts(tiny_task, tmp_path):
    from custom_tasks.mteb_private import create_dataloader
    from mteb.types import PromptType

    corpus = _corpus(50)
    loader = create_dataloader(corpus, task_metadata=tiny_task.metadata, prompt_type=PromptType.document)
    block = read_block(corpus, 0, 50)
    assert block.texts == list(loader.dataset["text"])
    assert block.bodies == list(loader.dataset["body"]) and block.ids == list(corpus["id"])
    assert model_text("", "  x ") == "x" and model_text("T", "x ") == "T x"
    model = _cached(tmp_path, "c", 0)
    ref = _cached(tmp_path, "r", 0).encode(loader, task_metadata=tiny_task.metadata, hf_split="test",
                                           hf_subset="default", prompt_type=PromptType.document, batch_size=8)
    got = encode_block(model, block, task_metadata=tiny_task.metadata, hf_split="test", hf_subset="default",
                       encode_kwargs={"batch_size": 8})
    assert got.dtype == np.float32 and np.array_equal(got, ref)
    distinct = len(set(block.texts))
    assert distinct < 50 and (model.encoded, model.reused) == (distinct, 50 - distinct)  # each text encoded once
    again = encode_block(model, read_block(corpus, 10, 20), task_metadata=tiny_task.metadata, hf_split="test",
                         hf_subset="default", encode_kwargs={"batch_size": 8})
    assert np.array_equal(again, ref[10:20]) and model.encoded == distinct


def test_search_model_for_uses_the_threshold(tiny_task, tmp_path):
    model = _cached(tmp_path, "c", 0)
    n = len(tiny_task.collection.corpus)
    assert isinstance(search_model_for(model, tiny_task, n), LargeCorpusSearch)
    assert search_model_for(model, tiny_task, n + 1) is model
    raw = SyntheticEncoder(dim=8)
    assert search_model_for(raw, tiny_task, 0) is raw  # only cached dense encoders take the large path


def _run_default_and_large(tmp_path, task_yaml, model: dict, batch_size: int) -> list[tuple[Any, Path]]:
    """The same benchmark run by the default path, then by the large path (threshold 0): (record, results dir)."""
    import yaml

    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark

    runs = []
    for name, threshold in (("default", 200_000), ("large", 0)):
        cfg_path, results = tmp_path / f"{name}.yaml", tmp_path / f"results-{name}"
        cfg_path.write_text(yaml.safe_dump({
            "tasks": [str(task_yaml)], "results_dir": str(results), "models": [model],
            "encode": {"batch_size": batch_size, "large_corpus_docs": threshold}}))
        rec = run_benchmark(BenchmarkConfig.from_file(cfg_path), show_progress=False)[0]
        assert rec.status == "ran" and rec.encoded > 0
        runs.append((rec, results))
    return runs


def test_run_benchmark_large_path_scores_identical(tmp_path, tiny_copy):
    """The same benchmark run with the threshold at 0 (large path) and the default: identical TaskResults."""
    model = {"name": "synthetic/hash", "revision": "1", "factory": "runners.execution.encoding.synthetic:make_encoder",
             "factory_kwargs": {"dim": 32, "ties": 5}}
    scores = []
    for _, results in _run_default_and_large(tmp_path, tiny_copy, model, 16):
        result = next(p for p in results.glob("results/*/*/*.json") if p.name != "model_meta.json")
        scores.append(json.loads(result.read_text())["scores"])
    for a, b in zip(scores[0]["test"], scores[1]["test"]):
        assert {k: v for k, v in a.items() if k != "evaluation_time"} == \
               {k: v for k, v in b.items() if k != "evaluation_time"}


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_ann_from_blocks_equals_in_memory_index(tiny_task, tmp_path, kind, monkeypatch):
    """ANN over a memory-mapped file filled block by block: the same results and agreement as in RAM."""
    import runners.search.ann as ann
    from runners.execution.cache.prefill import block_vectors
    from runners.search.params import IndexParams

    monkeypatch.setattr(ann, "BLOCK_ROWS", 64)  # several blocks for the exact comparison
    corpus, qs, kw = _corpus(300), queries(9), search_kwargs(tiny_task)
    params = IndexParams(kind, nlist=8, nprobe=2)
    runs = []
    for name, threshold in (("ram", 10**9), ("blocks", 0)):
        enc = _cached(tmp_path, name, 0)
        search = ann.AnnSearch(enc, params, enc.mteb_model_meta, None, block_vectors(enc), threshold, tmp_path / "w")
        search.index(corpus, **kw)
        assert isinstance(search.backend._vectors, np.memmap) == (name == "blocks")
        runs.append((search.search(qs, top_k=20, **kw), search.agreement[("test", "default")]))
        assert not list((tmp_path / "w").glob("*")) if (tmp_path / "w").exists() else True  # temp file removed
    (res_a, agr_a), (res_b, agr_b) = runs
    for qid in res_a:
        assert list(res_a[qid].items()) == list(res_b[qid].items())
    assert agr_a["per_query"] == agr_b["per_query"]


def test_merge_skips_only_pushes_that_change_nothing():
    """The prefix-skipping merge leaves every heap exactly as mteb's push-everything loop, ties included."""
    import heapq

    rng = np.random.default_rng(3)
    qmap = {i: f"q{i % 5}" for i in range(6)}  # a repeated query id shares one heap, as in mteb
    for top_k in (0, 1, 4, 9):
        ours = {q: [] for q in qmap.values()}
        ref = {q: [] for q in qmap.values()}
        for block in range(6):
            values = np.sort(rng.integers(0, 6, size=(6, 10)).astype(np.float32) / 5, axis=1)[:, ::-1]
            if block == 2:
                values[1, :2] = np.nan  # topk puts NaN first
            idx = np.stack([rng.permutation(10) for _ in range(6)])
            ids = [f"d{block}-{j}" for j in rng.permutation(10)]
            LargeCorpusSearch._merge(ours, qmap, idx, values.copy(), ids, top_k)
            for q_idx, qid in qmap.items():
                for i, score in zip(idx[q_idx].tolist(), values[q_idx].tolist()):
                    item = (score, ids[i])
                    heapq.heappush(ref[qid], item) if len(ref[qid]) < top_k else heapq.heappushpop(ref[qid], item)
        assert repr(ours) == repr(ref)  # repr: NaN != NaN, but prints the same


@pytest.mark.slow
def test_minilm_cold_large_path_equals_default_path(tmp_path, tiny_copy):
    """A real model from an empty cache each time: the large path feeds it the same batches, so the same scores."""
    from tests.conftest import MINILM

    scores = []
    for rec, results in _run_default_and_large(tmp_path, tiny_copy, {"name": MINILM}, 4):
        rankings = next(results.rglob("rankings_test.json.gz"))
        with gzip.open(rankings, "rt") as f:
            ranked = json.load(f)["subsets"]["default"]
        numbers = {k: v for k, v in rec.scores.items() if isinstance(v, float) and k != "evaluation_time"}
        scores.append((numbers, ranked))
    assert scores[0][0] == scores[1][0]
    for qid, docs in scores[0][1].items():  # every retrieved document's similarity, bit for bit
        assert list(docs.items()) == list(scores[1][1][qid].items())


def test_batch_loader_gives_mteb_batches():
    """The sliced loader yields exactly what mteb's row-wise DataLoader + collate gives a model."""
    from datasets import Dataset
    from torch.utils.data import DataLoader

    from custom_tasks.mteb_private import custom_collate_fn
    from runners.execution.cache.embedding_cache import _rows_of, batch_loader

    data = Dataset.from_dict({"id": [f"d{i}" for i in range(23)], "title": [""] * 23,
                              "text": [f"text {i}" * (i % 4 + 1) for i in range(23)], "body": ["b"] * 23})
    for rows in (list(range(23)), list(range(5, 17)), [9, 2, 2, 20, 0]):
        subset = _rows_of(data, rows)
        ours = list(batch_loader(subset, 4))
        mteb = list(DataLoader(data.select(rows), batch_size=4, collate_fn=custom_collate_fn(), shuffle=False))
        assert ours == mteb
        assert subset.features == data.features


class _FixedSparse:
    """A sparse retriever with fixed scores for a few documents per query."""

    mteb_model_meta = None

    def index(self, corpus, **kwargs) -> None:
        self.ids = list(corpus["id"])

    def search(self, queries, *, top_k: int, **kwargs) -> dict[str, dict[str, float]]:
        return {q: {self.ids[(3 * i + j) % len(self.ids)]: float(5 - j) for j in range(5)}
                for i, q in enumerate(queries["id"])}


@pytest.mark.parametrize("fusion, value", [("rrf", 60), ("weighted", 0.3)])
def test_hybrid_dense_side_takes_the_large_path_with_equal_results(tiny_task, tmp_path, fusion, value):
    """Hybrid search over a large corpus reads the dense side block-wise: fused results equal mteb's default."""
    from runners.execution.cache.large_corpus import dense_search
    from runners.search.hybrid import HybridRetriever

    corpus, qs, kw = _corpus(230), queries(7), search_kwargs(tiny_task)
    runs = []
    for name, threshold in (("default", 10**9), ("large", 0)):
        enc = _cached(tmp_path, name, 4)
        searcher = dense_search(enc, threshold)
        assert isinstance(searcher, LargeCorpusSearch)
        searcher.corpus_chunk_size = 40
        hybrid = HybridRetriever(enc, _FixedSparse(), fusion, value, None, depth=20, dense_search=searcher)
        hybrid.index(corpus, **kw)
        runs.append(hybrid.search(qs, top_k=10, **kw))
    for qid in runs[0]:
        assert list(runs[0][qid].items()) == list(runs[1][qid].items())
    assert type(dense_search(SyntheticEncoder(dim=8))).__name__ == "SearchEncoderWrapper"  # uncached: mteb's


def test_pinned_constants_are_mteb_defaults():
    """MTEB_CHUNK / MTEB_K_OFFSET restate mteb's chunk default and per-chunk topk offset (exact.py)."""
    import inspect

    from mteb.models.search_wrappers import SearchEncoderWrapper

    from runners.search.exact import MTEB_CHUNK, MTEB_K_OFFSET

    assert inspect.signature(SearchEncoderWrapper.__init__).parameters["corpus_chunk_size"].default == MTEB_CHUNK
    assert f"search_k_offset={MTEB_K_OFFSET}," in inspect.getsource(SearchEncoderWrapper._full_corpus_search)
    assert LargeCorpusSearch(_cached(Path("/nonexistent"), "c", 0)).corpus_chunk_size == MTEB_CHUNK


def test_evaluate_scores_identical_to_default_path(tiny_task, tmp_path):
    """Through `mteb.evaluate` in several chunks: metrics equal mteb's wrapper with the same chunks, and its default."""
    import mteb
    from mteb.models.search_wrappers import SearchEncoderWrapper

    def cached(name: str) -> CachedEncoder:  # the vectors of the test this replaced (exact search's, dim 32)
        return CachedEncoder(SyntheticEncoder(dim=32, ties=6), EmbeddingStore(tmp_path / name))

    kw = {"overwrite_strategy": "always", "show_progress_bar": False}
    plain = mteb.evaluate(cached("a"), tiny_task, cache=mteb.ResultCache(tmp_path / "ra"), **kw)
    large = mteb.evaluate(LargeCorpusSearch(cached("b"), corpus_chunk_size=5), tiny_task,
                          cache=mteb.ResultCache(tmp_path / "rb"), **kw)
    ref = mteb.evaluate(SearchEncoderWrapper(cached("c"), corpus_chunk_size=5), tiny_task,
                        cache=mteb.ResultCache(tmp_path / "rc"), **kw)
    s = [{k: v for k, v in r.task_results[0].scores["test"][0].items() if k != "evaluation_time"}
         for r in (plain, large, ref)]
    assert s[1] == s[2]
    # mteb's single 50k chunk too, on any machine: the cache's scores do not depend on the chunk's shape
    # (search/scores.py), so tied vectors tie exactly, and top_k (1000) keeps every document of this corpus
    assert s[0] == s[1] and len(tiny_task.collection.corpus) < 1000
