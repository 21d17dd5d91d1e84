"""What the latency pass serves from its index instead of recomputing per query (issue 22, cost of the pass):
a cold run's encode rate, a bi-encoder reranker's document vectors, mteb's prepared corpus, the run's models."""

from __future__ import annotations

import dataclasses

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import TINY_YAML, write_benchmark
from runners.config.benchmark import BenchmarkConfig
from runners.execution.encoding import encode_rate
from runners.execution.candidates import rerank_candidate as rerank
from runners.execution.candidates.experiment_candidates import clear_shared
from runners.execution.measure.latency import LatencyOptions, measure
from runners.execution.run import candidates_for, run_benchmark
from runners.execution.tasks import load_task

FAST = LatencyOptions(queries=4, repeats=1, warmup=1, encode_sample=3)
NUMPY = {"name": "test/np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1", "label": "bow"}


def test_a_rate_is_kept_only_when_it_means_something(tmp_path, monkeypatch) -> None:
    encode_rate.record(tmp_path, "T", encode_rate.MIN_DOCS - 1, 1.0)  # an incremental run: too few to keep
    assert not (tmp_path / encode_rate.FILE).exists()
    encode_rate.record(tmp_path, "T", 40, 2.0)
    assert encode_rate.read(tmp_path, "T")["docs"] == 40 and encode_rate.read(tmp_path, "other") is None
    monkeypatch.setattr(encode_rate, "cpu_name", lambda: "another CPU")  # measured elsewhere: not this machine's
    assert encode_rate.read(tmp_path, "T") is None
    (tmp_path / encode_rate.FILE).write_text("{not json")  # corrupt: ignored, then replaced
    assert encode_rate.read(tmp_path, "T") is None
    encode_rate.record(tmp_path, "T", 40, 2.0)
    assert json.loads((tmp_path / encode_rate.FILE).read_text())["T"]["cpu"] == "another CPU"


def test_a_read_only_cache_folder_loses_the_rate_not_the_run(tmp_path, monkeypatch) -> None:
    def refuse(*_a, **_k):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(encode_rate, "atomic_write_json", refuse)
    encode_rate.record(tmp_path, "T", 40, 2.0)  # no exception
    assert encode_rate.read(tmp_path, "T") is None


@pytest.fixture(scope="module")
def after_run(tmp_path_factory):
    """A cold run of the bag-of-words encoder and BM25 (12 documents: the kept rate's floor lowered to 4)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(encode_rate, "MIN_DOCS", 4)
    tmp = tmp_path_factory.mktemp("serving")
    clear_shared()
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp, [str(TINY_YAML)], models=[NUMPY, {"name": "bm25"}]))
    loaded: dict = {}
    records = run_benchmark(cfg, show_progress=False, keep_loaded=loaded)
    assert all(r.status == "ran" for r in records)
    yield cfg, loaded
    mp.undo()


def test_docs_per_s_comes_from_the_cold_run_without_a_sample(after_run) -> None:
    cfg, _ = after_run
    kept = next(cfg.cache_path.rglob(encode_rate.FILE))
    rate = json.loads(kept.read_text())["TinyKBRetrieval"]
    assert rate["docs"] == 12 and rate["seconds"] > 0
    (rec,) = [r for r in measure(cfg, candidates_for(cfg), [load_task(str(TINY_YAML))], FAST) if r["label"] == "bow"]
    assert rec["index"]["encode_rate_from"] == "cold run" and rec["index"]["encode_sample_docs"] == 12
    assert rec["index"]["encode_seconds_per_doc"] == pytest.approx(rate["seconds"] / 12)


def test_the_corpus_is_prepared_once_per_pass_the_queries_every_time(after_run, monkeypatch) -> None:
    from mteb import _create_dataloaders as loaders
    from mteb.types import PromptType

    cfg, _ = after_run
    calls = {"document": 0, "query": 0}
    real = loaders._prepare_dataset

    def counting(dataset, task_metadata, prompt_type=None, *a, **k):
        calls[getattr(prompt_type, "value", str(prompt_type))] = calls.get(getattr(prompt_type, "value", ""), 0) + 1
        return real(dataset, task_metadata, prompt_type, *a, **k)

    monkeypatch.setattr(loaders, "_prepare_dataset", counting)
    bow = [c for c in candidates_for(cfg) if c.label == "bow"]
    measure(cfg, bow, [load_task(str(TINY_YAML))], FAST)
    searches = FAST.warmup + FAST.queries * FAST.repeats + 1  # + the batched pass
    assert calls["query"] >= searches  # every served query prepared as the evaluation prepares it
    assert calls["document"] == 1  # the corpus once: index work, held by fingerprint
    assert loaders._prepare_dataset is counting  # the pass put mteb's function back
    assert PromptType.document.value == "document"


def test_run_latency_serves_the_models_the_run_loaded(after_run) -> None:
    cfg, loaded = after_run
    bow = next(c for c in candidates_for(cfg) if c.label == "bow")
    assert bow.name in loaded
    calls = []
    served = dataclasses.replace(bow, load=lambda: calls.append(1))  # loading again would be a failure
    (rec,) = measure(cfg, [served], [load_task(str(TINY_YAML))], LatencyOptions(**{**vars(FAST), "loaded": loaded}))
    assert rec["measurable"] and not rec["error"] and calls == []


class _Counting:
    """A bi-encoder stand-in for sentence-transformers: bag-of-letters vectors, counting what it encodes."""

    def __init__(self) -> None:
        self.documents: list[str] = []
        self.queries: list[str] = []

    @staticmethod
    def _vec(texts: list[str]):
        import torch

        out = np.zeros((len(texts), 26), np.float32)
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        return torch.from_numpy(out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9))

    def encode_document(self, docs, **_kw):
        self.documents += docs
        return self._vec(docs)

    def encode_query(self, queries, **_kw):
        self.queries += queries
        return self._vec(queries)

    @staticmethod
    def similarity_pairwise(a, b):
        return (a * b).sum(dim=1)


def test_a_served_bi_encoder_reranker_reads_its_documents_from_the_index() -> None:
    model = _Counting()
    scorer = rerank.BiEncoderScorer(model, batch_size=8)
    pairs = [("refund a cancelled flight", "Travel refunds"), ("refund a cancelled flight", "Laptop returns")]
    scores = scorer.predict(pairs)  # the evaluation: both documents encoded
    assert model.documents == ["Laptop returns", "Travel refunds"]
    model.documents.clear()
    served = scorer.predict_served(pairs)
    assert model.documents == [] and model.queries[-1:] == ["refund a cancelled flight"]  # only the query encoded
    assert served == pytest.approx(scores, abs=1e-6)
    assert scorer.hold(["Travel refunds", "Expense limits"]) == 1 and model.documents == ["Expense limits"]
