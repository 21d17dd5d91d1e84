"""Every kind of candidate in one benchmark config, and the machine facts pinned, for the identity tests.

`tests/fixtures/identity_v1/identities.json` holds what the code of main at a30edff (before candidates became
values, issue 37) computed for each candidate of `config()` on the tiny task: its results name, revision, cache
folder variant, the rerank score cache id, and the full run identity (fingerprint included). The identity tests
recompute them with today's code: a difference means stored results would be re-run or reported stale.

The facts of the machine that enter a backend variant's identity (the installed runtime versions, the CPU's
feature flags, what OpenVINO computes in) and an endpoint's answer to its probe are pinned by `pinned_machine`,
so the record is the same on every machine; everything else (the content hashes of the task, the model folder,
the run file) is real.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "identity_v1"
RECORD = FIXTURE / "identities.json"
TINY = HERE / "fixtures" / "identity_v1" / "task.yaml"  # a copy of the tiny task: its content hash is in every identity
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
#: what `importlib.metadata.version` says for the runtime packages of an exported model
PINNED_VERSION = "9.9.9"

MODELS: list[dict[str, Any]] = [
    {"name": "bm25"},
    {"name": MINILM, "label": "MiniLM"},
    {"name": MINILM, "label": "MiniLM-msl64", "max_seq_length": 64},
    {"name": MINILM, "label": "MiniLM-kw", "model_kwargs": {"truncate_dim": 128}},
    {"name": MINILM, "label": "MiniLM-prompted", "prompts": {"query": "query: ", "document": "passage: "}},
    {"name": MINILM, "label": "MiniLM-onnx", "backend": "onnx", "precision": "fp32"},
    {"name": MINILM, "label": "MiniLM-onnx-int8", "backend": "onnx", "precision": "int8"},
    {"name": MINILM, "label": "MiniLM-ov-int8", "backend": "openvino", "precision": "int8"},
    {"name": MINILM, "label": "MiniLM-ov-bf16", "backend": "openvino", "precision": "bf16"},
    {"name": "acme/local-encoder", "path": "local_model", "label": "local"},
    {"name": "acme/local-pinned", "path": "local_model", "revision": "r1", "label": "local-r1",
     "kind": "sentence-transformers"},
    {"name": "acme/hub-remote-code", "kind": "sentence-transformers", "trust_remote_code": True,
     "label": "remote-code"},
    {"name": "acme/factory-encoder", "factory": "tests.toy_encoders:make", "factory_kwargs": {"dim": 8},
     "label": "factory"},
    {"name": "acme/factory-with-path", "factory": "tests.toy_encoders:make", "path": "local_model",
     "label": "factory-path"},
    {"name": "acme/run-file", "kind": "run", "path": "run.trec", "label": "run"},
    {"name": "acme/words", "kind": "retriever", "factory": "tests.toy_retrievers:make_words",
     "factory_kwargs": {"weight": 0.5}, "label": "words"},
    {"name": "acme/exact", "kind": "retriever", "factory": "tests.toy_retrievers:make_exact",
     "factory_kwargs": {"model": "MiniLM"}, "label": "exact"},
    {"name": "acme/served", "kind": "endpoint", "label": "served",
     "endpoint": {"url": "http://127.0.0.1:7997/v1", "model": "bge-small", "dimensions": 256}},
    {"name": "acme/served-prompted", "kind": "endpoint", "label": "served-prompted",
     "endpoint": {"url": "http://127.0.0.1:7997/v1/embeddings"}, "prompts": {"query": "q: "}},
]

EXPERIMENTS: list[dict[str, Any]] = [
    {"type": "hybrid", "dense": "MiniLM", "fusion": "rrf", "k": [20, 60]},
    {"type": "hybrid", "dense": "MiniLM-msl64", "fusion": "weighted", "alpha": [0.3], "depth": 50},
    {"type": "chunk", "model": "MiniLM", "unit": "tokens", "sizes": [64, 128], "overlap": 16},
    {"type": "chunk", "model": "MiniLM", "unit": "chars", "sizes": [300], "title": "first"},
    {"type": "ann", "model": "MiniLM", "index": "hnsw", "M": 16, "ef_search": [16, 64]},
    {"type": "ann", "model": "MiniLM", "index": "ivf", "nlist": 4, "nprobe": [2]},
    {"type": "ann", "model": "MiniLM-onnx", "index": "flat"},
    {"type": "rerank", "first": "bm25", "reranker": {"name": "acme/ce", "path": "cross_encoder", "label": "ce"},
     "depth": [5, 10]},
    {"type": "rerank", "first": "MiniLM +bm25 rrf60",
     "reranker": {"name": MINILM, "kind": "bi-encoder", "label": "MiniLM-bi", "max_length": 128}, "depth": [5]},
    {"type": "rerank", "first": "run", "reranker": {"name": "acme/overlap", "kind": "factory",
                                                    "factory": "tests.toy_retrievers:make_overlap_reranker"},
     "depth": [3]},
]


def config(tmp: Path) -> Path:
    """The benchmark config of every kind, its relative paths resolving against the fixture folder."""
    cfg = {"name": "identity-v1", "tasks": [str(TINY)], "results_dir": str(tmp / "results"),
           "cache_dir": str(tmp / "cache"), "models": MODELS, "experiments": EXPERIMENTS}
    path = FIXTURE / f"bench-{tmp.name}.yaml"  # beside the fixture files: `path:` entries are relative to it
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def pinned_machine(monkeypatch: Any) -> None:
    """The installed runtime versions, the CPU flags and OpenVINO's capabilities pinned (see the module doc)."""
    import importlib.metadata

    from runners.execution.backends import cpu_features

    real_version = importlib.metadata.version
    runtimes = {"onnxruntime", "onnx", "torch", "openvino", "nncf"}
    monkeypatch.setattr(importlib.metadata, "version",
                        lambda name: PINNED_VERSION if name in runtimes else real_version(name))
    monkeypatch.setattr(cpu_features, "cpuinfo_flags", lambda: frozenset({"avx2", "avx512f", "avx512_vnni"}))
    monkeypatch.setattr(cpu_features, "openvino_capabilities", lambda: ("BF16", "FP32", "INT8"))
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    import numpy as np

    from runners.execution.candidates import endpoint_candidate as endpoint

    def probe(client: Any) -> tuple[str, Any, tuple[str, ...]]:  # the server's answer to the probe, no server
        return client.model or "served-default", np.linspace(-1.0, 1.0, 8, dtype=np.float32)[None], ()

    monkeypatch.setattr(endpoint.EndpointClient, "probe", probe)


#: the config whose results folder main at a30edff wrote (tests/fixtures/identity_v1/results): a model, BM25,
#: a hybrid of both and a rerank of BM25 by the model
RESULTS_MODELS = [{"name": "bm25"}, {"name": MINILM, "label": "MiniLM"}]
RESULTS_EXPERIMENTS = [{"type": "hybrid", "dense": "MiniLM", "fusion": "rrf", "k": [60]},
                       {"type": "rerank", "first": "bm25",
                        "reranker": {"name": MINILM, "kind": "bi-encoder", "label": "MiniLM"}, "depth": [5]}]


def results_config(tmp: Path, results: Path | None = None) -> Path:
    """The benchmark config of the stored results folder (`results` defaults to `<tmp>/results`)."""
    cfg = {"name": "identity-v1-results", "tasks": [str(TINY)], "results_dir": str(results or tmp / "results"),
           "cache_dir": str(tmp / "cache"), "models": RESULTS_MODELS, "experiments": RESULTS_EXPERIMENTS}
    path = FIXTURE / f"results-{tmp.name}.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path
