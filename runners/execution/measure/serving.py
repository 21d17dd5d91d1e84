"""A candidate's search object switched to serving: what the latency pass (latency.py) times.

The evaluation's search objects (mteb's `SearchEncoderWrapper`, hybrid, ANN, retriever, ...) get their vectors
through `CachedEncoder.vectors_for`. During a latency pass each cached encoder carries a `Serving` hook
(`CachedEncoder.serving`) that changes only where vectors come from, never how the search ranks:

* queries are encoded by the model itself, every time (a served query is new: the cache would hide its cost);
* documents: the first request of a corpus goes through the cache as in the evaluation (that is indexing),
  the matrix is then held in memory, as a served index is, and every later search gets it from there.

It also gives the cold encoding rate of each encoder: the rate a cold run kept for this corpus (encode_rate.py),
else `sample` documents of the corpus encoded by the model with the cache bypassed (texts reused from the cache
are never counted as encoded), and reports the
index's size (vectors held, faiss indexes, BM25 score matrices) and the candidate's static facts.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..encoding import encode_rate
from ..cache.embedding_cache import CachedEncoder, _to_numpy, batch_loader

DEFAULT_ENCODE_SAMPLE = 32


def _ptype(call: dict[str, Any]) -> str:
    p = call.get("prompt_type")
    return str(getattr(p, "value", p) or "")


class Serving:
    """The hook a `CachedEncoder` calls instead of its store lookup while a latency pass runs."""

    def __init__(self, sample: int = DEFAULT_ENCODE_SAMPLE, rates: dict[str, dict[str, float]] | None = None) -> None:
        self.sample = sample
        self.docs: dict[tuple[Any, ...], np.ndarray] = {}
        self.cold: dict[str, float] = {}  # "seconds", "docs": the cold encode sample
        self.rates = rates if rates is not None else {}  # store folder -> cold sample, shared by a pass's encoders
        self.query_seconds = 0.0

    def vectors(self, enc: CachedEncoder, texts: list[str], rows_dataset: Any, batch_size: int,
                call: dict[str, Any]) -> np.ndarray:
        if _ptype(call) == "query":
            t0 = time.perf_counter()
            out = _to_numpy(enc._model.encode(batch_loader(rows_dataset(range(len(texts))), batch_size),
                                               **call))
            self.query_seconds += time.perf_counter() - t0
            return out
        key = (_ptype(call), len(texts), hash(tuple(texts)))
        held = self.docs.get(key)
        if held is not None:
            return held
        enc.serving = None  # the evaluation's own path: cache hits copied out, misses encoded and stored
        try:
            held = enc.vectors_for(texts, rows_dataset, batch_size, call)
        finally:
            enc.serving = self
        self.docs[key] = held
        where = f"{enc.store.folder}|{getattr(call.get('task_metadata'), 'name', '')}"
        kept = None if self.cold or where in self.rates else encode_rate.read(enc.store.folder, where.split("|", 1)[1])
        if kept is not None:  # a cold run encoded this corpus with this model here: its rate, no sample
            self.rates[where] = {"seconds": float(kept["seconds"]), "docs": float(kept["docs"]), "from": "cold run"}
        if not self.cold and where in self.rates:  # the same model on the same corpus: measured once per pass
            self.cold = dict(self.rates[where], sampled_seconds=0.0)
        elif not self.cold and len(texts):
            n = min(self.sample, len(texts))
            t0 = time.perf_counter()
            _to_numpy(enc._model.encode(batch_loader(rows_dataset(list(range(n))), batch_size), **call))
            seconds = time.perf_counter() - t0
            self.cold = {"seconds": seconds, "docs": float(n), "sampled_seconds": seconds, "from": "sample"}
            self.rates[where] = {"seconds": seconds, "docs": float(n), "from": "sample"}
        return held

    @property
    def vector_bytes(self) -> int:
        return int(sum(v.nbytes for v in self.docs.values()))

    @property
    def dim(self) -> int | None:
        return next((int(v.shape[1]) for v in self.docs.values() if v.ndim == 2 and v.shape[1]), None)


def parts(obj: Any, depth: int = 4, seen: set[int] | None = None) -> list[Any]:
    """Every object reachable from a search object through attributes, lists and dicts (a few levels)."""
    seen = seen if seen is not None else set()
    if id(obj) in seen or depth < 0 or isinstance(obj, (str, bytes, int, float, bool, np.ndarray, type(None))):
        return []
    seen.add(id(obj))
    out = [obj]
    children: list[Any] = []
    if isinstance(obj, (list, tuple)):
        children = list(obj)
    elif isinstance(obj, dict):
        children = [v for v in obj.values() if not isinstance(v, np.ndarray)]
    elif hasattr(obj, "__dict__") and type(obj).__module__.split(".")[0] in ("runners", "mteb", "tests", "custom_tasks"):
        children = list(vars(obj).values())
    for child in children[:200]:
        out += parts(child, depth - 1, seen)
    return out


def encoders_of(search: Any) -> list[CachedEncoder]:
    return [p for p in parts(search) if isinstance(p, CachedEncoder)]


def serve(search: Any, sample: int = DEFAULT_ENCODE_SAMPLE,
          rates: dict[str, dict[str, float]] | None = None) -> list[CachedEncoder]:
    """Switch every cached encoder inside `search` to serving (queries by the model, documents held)."""
    encs = encoders_of(search)
    for enc in encs:
        enc.serving = Serving(sample, rates)
    for p in parts(search):  # side effects of an evaluation, not of a served query: no sidecar writes
        if hasattr(p, "results_dir") and type(p).__name__ in ("AnnSearch", "RetrieverSearch"):
            p.results_dir = None
        if type(p).__name__ == "FaissAnnIndex":  # mteb clears the backend after each search: keep the index
            p.clear = lambda: None
    return encs


def unserve(encs: list[CachedEncoder]) -> None:
    for enc in encs:
        enc.serving = None


def _bm25_bytes(retriever: Any) -> int:
    """A bm25s index: its sparse score matrix and its vocabulary (token strings + an 8-byte id each)."""
    scores = getattr(retriever, "scores", None) or {}
    size = sum(int(v.nbytes) for v in scores.values() if isinstance(v, np.ndarray))
    vocab = getattr(retriever, "vocab_dict", None) or {}
    return size + sum(len(str(k).encode()) + 8 for k in vocab)


def _faiss_bytes(index: Any) -> int:
    import faiss

    return int(faiss.serialize_index(index).nbytes)


def index_bytes(search: Any) -> dict[str, int]:
    """The index's size by part: dense vectors held, faiss ANN indexes, BM25 indexes (what could be measured)."""
    out: dict[str, int] = {}
    for p in parts(search):
        kind = type(p).__name__
        if isinstance(p, CachedEncoder) and isinstance(p.serving, Serving) and p.serving.docs:
            out["vectors"] = out.get("vectors", 0) + p.serving.vector_bytes
        elif kind == "FaissAnnIndex" and getattr(p, "_index", None) is not None:
            out["ann_index"] = out.get("ann_index", 0) + _faiss_bytes(p._index)
        elif kind.endswith("BM25Search") and getattr(p, "retriever", None) is not None:
            out["bm25_index"] = out.get("bm25_index", 0) + _bm25_bytes(p.retriever)
    if "ann_index" in out:  # a faiss index stores its vectors: the matrix held beside it is not served
        out.pop("vectors", None)
    sizer = next((getattr(p, "index_bytes") for p in parts(search)
                  if callable(getattr(p, "index_bytes", None)) and p is not search), None)
    if sizer is not None:  # a retriever adapter that can say how big its database index is
        try:
            out["retriever_index"] = int(sizer())
        except Exception:  # noqa: BLE001 - a size the adapter cannot give is left out, not a failed pass
            pass
    return out


def folder_bytes(path: str | None) -> int | None:
    if not path or not Path(path).is_dir():
        return None
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += (Path(root) / f).stat().st_size
            except OSError:
                pass
    return total


def model_facts(model: Any, dim: int | None = None) -> dict[str, Any]:
    """Parameters, embedding dimension, max tokens, size on disk of one loaded model (what can be read)."""
    facts: dict[str, Any] = {"parameters": None, "dim": dim, "max_tokens": None, "disk_bytes": None}
    inner = getattr(model, "model", model)  # mteb's wrapper around a SentenceTransformer
    numel = getattr(inner, "parameters", None)
    if callable(numel):
        try:
            facts["parameters"] = int(sum(p.numel() for p in numel()))
        except Exception:  # noqa: BLE001 - not a torch module
            pass
    facts["max_tokens"] = getattr(inner, "max_seq_length", None) or getattr(model, "max_seq_length", None)
    try:
        path = inner[0].auto_model.config._name_or_path  # the folder a sentence-transformers model came from
    except Exception:  # noqa: BLE001 - not a sentence-transformers model
        path = None
    facts["disk_bytes"] = folder_bytes(path)
    meta = getattr(model, "mteb_model_meta", None)
    for key, attr in (("parameters", "n_parameters"), ("dim", "embed_dim"), ("max_tokens", "max_tokens")):
        if facts[key] is None and isinstance(getattr(meta, attr, None), (int, float)):
            facts[key] = int(getattr(meta, attr))
    return facts


def static_facts(search: Any) -> list[dict[str, Any]]:
    """The facts of each model inside a candidate: its dense encoders and a reranker's model."""
    out = []
    for enc in encoders_of(search):
        serving = enc.serving if isinstance(enc.serving, Serving) else None
        served = getattr(enc._model, "served_facts", None)  # an endpoint: its server, batching, requests made
        out.append({"part": "encoder", "label": enc.label, **model_facts(enc._model, serving.dim if serving else None),
                    **(served() if callable(served) else {})})
    for p in parts(search):
        scorer = getattr(p, "scorer", None) if type(p).__name__ == "RerankSearch" else None
        model = getattr(scorer, "model", None)
        if model is not None:
            out.append({"part": "reranker", "label": "", **model_facts(model)})
    return out
