"""Reuse what is stored (issue 29): a bi-encoder reranker takes its document vectors from the embedding cache
when the same model's dense candidate stored them (the cache's own identity rules), so a plain MiniLM run followed
by BM25 -> MiniLM rerank encodes 0 documents, and the reranked scores are those of encoding them afresh."""

from __future__ import annotations

import json

import pytest
from sentence_transformers import SentenceTransformer

from conftest import MINILM, TINY_YAML, write_benchmark
from runners.config.benchmark import BenchmarkConfig
from runners.execution.candidates import rerank_candidate as rerank
from runners.execution.candidates.experiment_candidates import clear_shared
from runners.execution.run import run_benchmark
from runners.results.store import find_run, task_result_path

pytestmark = pytest.mark.slow
RERANK = {"type": "rerank", "first": "BM25", "reranker": {"name": MINILM, "kind": "bi-encoder", "label": "MiniLM"},
          "depth": [5]}


class Count:
    """Texts each SentenceTransformer call encodes as documents (mteb's dense encoder and the reranker alike)."""

    def __init__(self, monkeypatch) -> None:
        self.documents = 0
        real = SentenceTransformer.encode_document

        def counting(st, sentences, *args, **kwargs):
            self.documents += 1 if isinstance(sentences, str) else len(sentences)
            return real(st, sentences, *args, **kwargs)

        monkeypatch.setattr(SentenceTransformer, "encode_document", counting)


def _scores(cfg: BenchmarkConfig, name: str) -> dict:
    folder = find_run(cfg.results_path, name, "TinyKBRetrieval")
    result = json.loads(task_result_path(cfg.results_path, name, folder.parent.parent.name, "TinyKBRetrieval")
                        .read_text())
    return result["scores"]["test"][0]


def _run(cfg: BenchmarkConfig) -> dict:
    clear_shared()
    rerank.clear_scorers()
    return {r.label: r for r in run_benchmark(cfg, show_progress=False)}


def test_a_minilm_run_then_a_minilm_rerank_encodes_no_document(tmp_path, monkeypatch) -> None:
    models = [{"name": MINILM, "label": "MiniLM"}, {"name": "bm25", "label": "BM25"}]
    plain = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], models=models))
    assert all(r.status == "ran" for r in _run(plain).values())

    count = Count(monkeypatch)
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], models=models, experiments=[RERANK]))
    ran = _run(cfg)
    rr = next(r for r in ran.values() if r.status == "ran")
    assert count.documents == 0, count.documents  # every document vector came from the embedding cache
    scorer = next(iter(rerank._SCORERS.values()))
    assert scorer.doc_count == 0 and scorer.doc_reused > 0  # the reranker's own count agrees
    reused = _scores(cfg, rr.candidate)

    fresh = tmp_path / "fresh"  # the reranker encoding its documents itself (no embedding cache): same scores
    fresh.mkdir()
    monkeypatch.setattr(rerank, "cached_documents", lambda scorer, spec, cfg: scorer)
    other = BenchmarkConfig.from_file(write_benchmark(fresh, [str(TINY_YAML)], models=models[1:], experiments=[RERANK],
                                                      cache_dir=str(fresh / "cache")))
    count.documents = 0
    assert all(r.status == "ran" for r in _run(other).values()), rr
    assert count.documents > 0
    again = _scores(other, rr.candidate)
    for metric in ("ndcg_at_10", "recall_at_10", "mrr_at_10", "ndcg_at_1000"):
        assert again[metric] == pytest.approx(reused[metric], abs=1e-9), metric


def test_another_setting_of_the_model_is_not_reused(tmp_path, monkeypatch) -> None:
    """max_length differs from the dense candidate's: another cache folder, so the documents are encoded."""
    models = [{"name": MINILM, "label": "MiniLM"}, {"name": "bm25", "label": "BM25"}]
    plain = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], models=models))
    _run(plain)
    count = Count(monkeypatch)
    entry = {**RERANK, "reranker": {**RERANK["reranker"], "max_length": 64}}
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], models=models, experiments=[entry]))
    _run(cfg)
    assert count.documents > 0
