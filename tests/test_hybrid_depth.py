"""Hybrid `depth` is honoured exactly: each retriever's list is cut to its top-`depth` before fusion."""

from __future__ import annotations

import pytest

from runners.execution.candidates import experiment_candidates as ex
from runners.results.store import load_rankings
from runners.search.hybrid import HybridRetriever, cut, rrf, weighted
from tests.test_experiments import FakeEncoder, bench, run, tiny_collection, tiny_task

#: fixed sparse scores per query (ties at the cut: d1 and d2 score 2.0)
SPARSE = {"q0": {"d5": 9.0, "d2": 2.0, "d1": 2.0, "d7": 1.5, "d0": 1.0},
          "q1": {"d3": 4.0, "d6": 3.0, "d1": 0.5}}


class FixedSparse:
    """A SearchProtocol retriever that returns fixed score lists (top_k of them, best first)."""

    def __init__(self) -> None:
        self.mteb_model_meta = None
        self.asked_top_k: list[int] = []

    def index(self, corpus, **kwargs) -> None:
        pass

    def search(self, queries, *, top_k: int, **kwargs) -> dict[str, dict[str, float]]:
        self.asked_top_k.append(top_k)
        return {q: cut(SPARSE.get(q, {}), top_k) for q in queries["id"]}


def _search(model, task, top_k: int) -> dict[str, dict[str, float]]:
    task.load_data()
    data = task.dataset["default"]["test"]
    queries = data["queries"].filter(lambda r: r["id"] in SPARSE)
    kw = dict(task_metadata=task.metadata, hf_split="test", hf_subset="default", encode_kwargs={"batch_size": 8})
    model.index(data["corpus"], **kw)
    return model.search(queries, top_k=top_k, **kw)


def _hybrid(fusion: str, value: float, depth: int | None) -> HybridRetriever:
    return HybridRetriever(FakeEncoder(), FixedSparse(), fusion, value, meta=None, depth=depth)


def test_cut_keeps_top_depth_with_mteb_tie_order():
    assert cut(SPARSE["q0"], 2) == {"d5": 9.0, "d2": 2.0}  # tie d1/d2 at 2.0: higher id first
    assert cut(SPARSE["q0"], None) == SPARSE["q0"] == cut(SPARSE["q0"], 99)


@pytest.mark.parametrize("fusion, value", [("rrf", 60), ("weighted", 0.5)])
def test_depth_fuses_only_each_retrievers_top_depth(fusion, value):
    task = tiny_task(tiny_collection(n_filler=6))
    top_k = 1000
    dense_full = _search(__import__("mteb").models.search_wrappers.SearchEncoderWrapper(FakeEncoder()), task, top_k)
    got = _search(_hybrid(fusion, value, depth=2), task, top_k)
    for q in SPARSE:
        d, s = cut(dense_full[q], 2), cut(SPARSE[q], 2)
        want = rrf([d, s], int(value)) if fusion == "rrf" else weighted(d, s, value)
        assert set(got[q]) == set(want) and len(got[q]) <= 4
        assert got[q] == pytest.approx(want, abs=1e-12)
    full = _search(_hybrid(fusion, value, depth=None), task, top_k)
    assert all(len(full[q]) > 4 for q in SPARSE) and full != got


@pytest.mark.parametrize("fusion, value", [("rrf", 20), ("weighted", 0.3)])
def test_depth_beyond_the_corpus_equals_no_depth(fusion, value):
    task = tiny_task(tiny_collection(n_filler=6))
    assert _search(_hybrid(fusion, value, depth=500), task, 10) == _search(_hybrid(fusion, value, depth=None), task, 10)


def test_depth_in_a_run_limits_the_stored_rankings(tmp_path):
    ex.clear_shared()
    task = tiny_task(tiny_collection(n_filler=30))
    cfg = bench(tmp_path, [{"type": "hybrid", "dense": "test/fake", "fusion": "rrf", "k": 60, "depth": 3}])
    run(cfg, task)
    ranks = load_rankings(cfg.results_path, "private-mteb/fake+bm25-rrf60-d3", "TinyKB")
    ex.clear_shared()
    assert ranks and all(len(docs) <= 6 for docs in ranks.values())  # top-3 of two lists, fused
