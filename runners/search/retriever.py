"""Bring your retriever: any object with `search(queries, top_k)` scored by mteb as a search protocol.

The object a `kind: retriever` factory returns (runners/execution/candidates/retriever_candidate.py) needs

* `search(queries: dict[query id, text], top_k: int) -> dict[query id, dict[doc id, score]]`, and optionally
* `index(corpus)`: called once per (task, split, subset) before its searches, with an iterable of
  `(doc id, title, text)` (title "" when the collection has none).

`RetrieverSearch` is mteb's `SearchProtocol` around it (as mteb's own BM25 is one), so mteb's evaluator
scores its lists exactly like any model's: per-query sidecars, stats, check, inspect and report work
unchanged. Query texts are mteb's (an instruction, when the task has one, appended as for BM25). Each
list is cut to mteb's top_k by (score, doc id), ties as mteb breaks them; a query the retriever leaves
out retrieves nothing. A document id that is not in the corpus, a query id that was not asked, or a
score that is not a finite number fails the candidate with one line naming it.

A vector-database adapter (runners/retrievers/) takes an `Embedder` too: the vectors of a model of the
config for the documents and queries being indexed and searched, from private-mteb's embedding cache, with
exactly the texts, prompts and batches mteb's own search of that model encodes (so nothing is encoded a
second time, and a flat index reproduces the model's own run). When an embedder was used, its vectors
also give exact (brute-force) top-k, and the run files `ann_agreement_<split>.json`: overlap@k of the
database's lists vs exact search, as the ANN experiments do (runners/search/ann.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from mteb.types import PromptType

from custom_tasks.mteb_private import combine_queries_with_instruction_text, create_dataloader

from .ann import AGREEMENT_KS, AGREEMENT_LABELS, overlap_at_k, save_agreement
from .counts import CountsFromInner


class Embedder:
    """Vectors of one model for the corpus / queries mteb is indexing / searching right now.

    `RetrieverSearch` binds it to each (task, split, subset) before calling the retriever. An adapter asks
    `documents(ids)` in `index` and `queries(ids)` in `search` (ids: the ones it was handed; None = all,
    in mteb's order) and gets float32 rows, encoded through the model's embedding cache.
    """

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self._call: dict[str, Any] = {}
        self._corpus: Any = None
        self._queries: Any = None
        self.last_documents: tuple[list[str], np.ndarray] | None = None
        self.last_queries: tuple[list[str], np.ndarray] | None = None

    @property
    def similarity(self) -> str:
        """'cosine' or 'dot' (what the database must compute to rank as the model does)."""
        name = getattr(self.encoder.mteb_model_meta, "similarity_fn_name", None)
        name = str(getattr(name, "value", name) or "cosine")
        if name not in ("cosine", "dot"):
            raise ValueError(f"a vector database adapter needs a cosine or dot-product model, not {name!r}")
        return name

    def bind_corpus(self, corpus: Any, call: dict[str, Any]) -> None:
        self._corpus, self._call, self.last_documents, self.last_queries = corpus, call, None, None

    def bind_queries(self, queries: Any, call: dict[str, Any]) -> None:
        self._queries, self._call, self.last_queries = queries, call, None

    def documents(self, ids: Sequence[str] | None = None) -> np.ndarray:
        """Rows of these corpus ids (None: the whole corpus, in mteb's order); inside `index` only."""
        if self._corpus is None:
            raise RuntimeError("Embedder.documents() is only available inside index()")
        self.last_documents = self._encode(self._corpus, ids, PromptType.document)
        return self.last_documents[1]

    def queries(self, ids: Sequence[str] | None = None) -> np.ndarray:
        """Rows of these query ids (None: all queries, in mteb's order); inside `search` only."""
        if self._queries is None:
            raise RuntimeError("Embedder.queries() is only available inside search()")
        self.last_queries = self._encode(self._queries, ids, PromptType.query)
        return self.last_queries[1]

    def _encode(self, dataset: Any, ids: Sequence[str] | None, prompt_type: PromptType) -> tuple[list[str], np.ndarray]:
        """mteb's own loader and encode call (SearchEncoderWrapper.index / .search) over the asked rows."""
        all_ids = [str(i) for i in dataset["id"]]
        wanted = all_ids if ids is None else [str(i) for i in ids]
        if wanted != all_ids:
            row = {d: i for i, d in enumerate(all_ids)}
            unknown = [d for d in wanted if d not in row]
            if unknown:
                raise KeyError(f"Embedder: {len(unknown)} ids are not in the {prompt_type.value} set, e.g. {unknown[0]!r}")
            dataset = dataset.select([row[d] for d in wanted])
        if not wanted:
            return [], np.zeros((0, 0), np.float32)
        call, kwargs = self._call, self._call["encode_kwargs"]
        loader = create_dataloader(dataset, task_metadata=call["task_metadata"], prompt_type=prompt_type,
                                   num_proc=call.get("num_proc"), **kwargs)
        vectors = self.encoder.encode(loader, task_metadata=call["task_metadata"], hf_split=call["hf_split"],
                                      hf_subset=call["hf_subset"], prompt_type=prompt_type, **kwargs)
        if hasattr(vectors, "detach"):
            vectors = vectors.detach().cpu().float().numpy()
        return wanted, np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))


#: documents read from Arrow at a time by `corpus_rows` (a `datasets` Column iterated or indexed per row formats
#: one row per step: seconds per 100k documents)
ROWS_PER_READ = 4096


def corpus_rows(corpus: Any) -> Iterator[tuple[str, str, str]]:
    """(id, title, text) per document, read column-wise in slices (title "" when the collection has none)."""
    has_title = "title" in corpus.column_names
    for start in range(0, len(corpus), ROWS_PER_READ):
        part = corpus[start:start + ROWS_PER_READ]  # one Arrow read: a dict of lists
        titles = part["title"] if has_title else [""] * len(part["id"])
        for doc, title, text in zip(part["id"], titles, part["text"]):
            yield str(doc), title or "", text or ""


def top(scores: dict[str, float], k: int) -> dict[str, float]:
    """The k best by (score, doc id) descending: mteb's heap keeps the same ones."""
    if len(scores) <= k:
        return dict(scores)
    return dict(sorted(scores.items(), key=lambda x: (x[1], x[0]), reverse=True)[:k])


def checked(results: Any, asked: Sequence[str], docs: set[str], who: str) -> dict[str, dict[str, float]]:
    """The retriever's answer as {query id: {doc id: float}}, every asked query present; bad output -> ValueError."""
    if not isinstance(results, dict):
        raise ValueError(f"retriever {who}: search() returned {type(results).__name__}, expected "
                         "dict[query id, dict[doc id, score]]")
    known = set(asked)
    out: dict[str, dict[str, float]] = {q: {} for q in asked}
    for qid, hits in results.items():
        q = str(qid)
        if q not in known:
            raise ValueError(f"retriever {who}: search() returned query id {q!r}, which was not asked")
        if not isinstance(hits, dict):
            raise ValueError(f"retriever {who}: search() returned {type(hits).__name__} for query {q!r}, "
                             "expected dict[doc id, score]")
        row = {}
        for doc, score in hits.items():
            d = str(doc)
            if d not in docs:
                raise ValueError(f"retriever {who}: query {q!r}: document id {d!r} is not in the corpus")
            try:
                s = float(score)
            except (TypeError, ValueError):
                s = math.nan
            if not math.isfinite(s):
                raise ValueError(f"retriever {who}: query {q!r}, document {d!r}: score {score!r} is not a finite number")
            row[d] = s
        out[q] = row
    return out


class RetrieverSearch(CountsFromInner):
    """mteb `SearchProtocol` around a retriever (and the embedder its adapter reads vectors from)."""

    _counts_from = "_encoder"

    def __init__(self, retriever: Any, meta: Any, embedder: Embedder | None = None,
                 results_dir: Path | None = None, params: dict[str, Any] | None = None) -> None:
        self.retriever, self.mteb_model_meta, self.embedder = retriever, meta, embedder
        self._encoder = embedder.encoder if embedder is not None else None
        self.results_dir = Path(results_dir) if results_dir is not None else None
        self.params = dict(params or {})
        self.corpus_ids: set[str] = set()
        self.agreement: dict[tuple[str, str], dict[str, Any]] = {}
        self._build_seconds = 0.0

    @property
    def who(self) -> str:
        return repr(str(self.mteb_model_meta.name))

    def index(self, corpus: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, encode_kwargs: Any,
              num_proc: int | None = None, **kwargs: Any) -> None:
        self.corpus_ids = set(map(str, corpus["id"][:]))  # [:]: one Arrow read of a datasets Column, not row by row
        if self.embedder is not None:
            self.embedder.bind_corpus(corpus, _call(task_metadata, hf_split, hf_subset, encode_kwargs, num_proc))
        t0 = time.perf_counter()
        index = getattr(self.retriever, "index", None)
        if callable(index):
            index(corpus_rows(corpus))
        self._build_seconds = time.perf_counter() - t0

    def search(self, queries: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, top_k: int,
               encode_kwargs: Any, top_ranked: Any = None, num_proc: int | None = None,
               **kwargs: Any) -> dict[str, dict[str, float]]:
        ids = [str(q) for q in queries["id"]]
        texts = [str(t) for t in combine_queries_with_instruction_text(queries)["text"]]
        if self.embedder is not None:
            self.embedder.bind_queries(queries, _call(task_metadata, hf_split, hf_subset, encode_kwargs, num_proc))
        t0 = time.perf_counter()
        raw = self.retriever.search(dict(zip(ids, texts)), top_k)
        seconds = time.perf_counter() - t0
        timings = getattr(self.retriever, "timings", None)  # an adapter's own database time, vectors excluded
        if isinstance(timings, dict) and isinstance(timings.get("query"), float):
            seconds = timings["query"]
        results = checked(raw, ids, self.corpus_ids, self.who)
        if top_ranked is not None:  # reranking tasks: only the pre-ranked documents count (as mteb's BM25)
            allowed = {q: set(top_ranked.get(q, ())) for q in results}
            results = {q: {d: s for d, s in hits.items() if d in allowed[q]} for q, hits in results.items()}
        results = {q: top(hits, top_k) for q, hits in results.items()}
        if self.embedder is not None and self.embedder.last_documents and self.embedder.last_queries:
            self._agreement(results, seconds, task_metadata, hf_split, hf_subset)
        return results

    def _agreement(self, results: dict[str, dict[str, float]], seconds: float, task_metadata: Any,
                   split: str, subset: str) -> None:
        """overlap@k of the retriever's lists vs exact top-k on the embedder's own vectors (ann.py's record)."""
        doc_ids, docs = self.embedder.last_documents
        qids, qs = self.embedder.last_queries
        t0 = time.perf_counter()
        exact = exact_top_k(qs, docs, min(max(AGREEMENT_KS), len(doc_ids)), self.embedder.similarity == "cosine")
        exact_seconds = time.perf_counter() - t0
        row = {d: i for i, d in enumerate(doc_ids)}
        ranked = [[row[d] for d, _ in sorted(results.get(q, {}).items(), key=lambda x: (x[1], x[0]), reverse=True)
                   if d in row] for q in qids]
        n = max(len(qids), 1)
        per_query = {f"index_overlap_at_{k}": dict(zip(qids, overlap_at_k(ranked, exact, k, len(doc_ids))))
                     for k in AGREEMENT_KS}
        index = getattr(self.retriever, "index_kind", None) or self.params.get("index") or "retriever"
        record = {"index": str(index), "params": self.params, "engine": str(getattr(self.retriever, "engine", "")),
                  "summary": {m: float(np.mean(list(v.values()))) if v else float("nan") for m, v in per_query.items()},
                  "labels": AGREEMENT_LABELS, "n_docs": len(doc_ids), "build_seconds": self._build_seconds,
                  "ms_per_query_index": 1000 * seconds / n, "ms_per_query_exact": 1000 * exact_seconds / n,
                  "returned_fewer_than_k": sum(len(r) < min(max(AGREEMENT_KS), len(doc_ids)) for r in ranked),
                  "per_query": per_query}
        self.agreement[(split, subset)] = record
        if self.results_dir is not None:
            save_agreement(self.results_dir, self.mteb_model_meta, task_metadata, split, subset, record)


def exact_top_k(queries: np.ndarray, docs: np.ndarray, k: int, cosine: bool, block: int = 50_000) -> np.ndarray:
    """Row indexes of each query's k best documents by exact similarity (float32, block by block)."""
    q = queries.astype(np.float32, copy=True)
    if cosine:
        q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    best_s = np.full((len(q), 0), -np.inf, np.float32)
    best_i = np.zeros((len(q), 0), np.int64)
    for start in range(0, len(docs), block):
        d = docs[start:start + block].astype(np.float32, copy=True)
        if cosine:
            d /= np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)
        s = np.concatenate([best_s, q @ d.T], axis=1)
        i = np.concatenate([best_i, np.broadcast_to(np.arange(start, start + len(d)), (len(q), len(d)))], axis=1)
        keep = np.argsort(-s, axis=1, kind="stable")[:, :k]
        best_s, best_i = np.take_along_axis(s, keep, 1), np.take_along_axis(i, keep, 1)
    return best_i


def _call(task_metadata: Any, hf_split: str, hf_subset: str, encode_kwargs: Any, num_proc: int | None) -> dict[str, Any]:
    return {"task_metadata": task_metadata, "hf_split": hf_split, "hf_subset": hf_subset,
            "encode_kwargs": dict(encode_kwargs or {}), "num_proc": num_proc}
