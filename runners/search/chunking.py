"""Chunking experiments: split documents, embed chunks, keep labels attached to documents.

Two ways to score a chunker, both through mteb:
* document level (`ChunkedSearch`): a SearchProtocol over the ORIGINAL task. Each document is
  split into chunks, chunks are embedded through the shared embedding cache, and a document
  scores as its best chunk. The metrics mean exactly what the un-chunked run's metrics mean, so
  per-query files, CIs and paired tests work unchanged; a document that fits in one chunk is
  embedded as the very same string mteb builds for it ("title text"), hence the same vector.
* chunk level (`chunk_level_collection`): a new task whose corpus is the chunks and whose
  relevant items are the chunks overlapping a labelled evidence span (Collection.spans).
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from custom_tasks.collection import Collection, CollectionWarning
from custom_tasks.mteb_private import create_dataloader

from .counts import CountsFromInner

logger = logging.getLogger(__name__)

#: text -> (start, end) char offsets of each token (no special tokens)
OffsetsFn = Callable[[str], Sequence[tuple[int, int]]]


@dataclass(frozen=True)
class Chunker:
    """Fixed-size windows with overlap, in tokens of the model's tokenizer or in characters.

    `size` counts the text only: with `title: every` the title is put in front of every chunk
    (as mteb puts it in front of every document), so a one-chunk document is the same string.
    """

    size: int
    overlap: int = 0
    unit: Literal["tokens", "chars"] = "tokens"
    title: Literal["every", "first"] = "every"

    def __post_init__(self) -> None:
        if self.size <= 0 or not 0 <= self.overlap < self.size:
            raise ValueError(f"chunk size must be > 0 and 0 <= overlap < size (got {self.size}/{self.overlap})")

    @property
    def tag(self) -> str:
        """Short id used in names: '256-32' (tokens) or '800c-100' (chars)."""
        unit = "" if self.unit == "tokens" else "c"
        title = "" if self.title == "every" else "-t1"
        return f"{self.size}{unit}-{self.overlap}{title}"

    def windows(self, text: str, offsets: OffsetsFn | None = None) -> list[tuple[int, int]]:
        """Char spans of the chunks of `text`; one chunk (0, len) when it fits."""
        if self.unit == "chars":
            bounds = [(i, i + 1) for i in range(len(text))]
        else:
            if offsets is None:
                raise ValueError("token chunking needs the model's tokenizer")
            bounds = [(s, e) for s, e in offsets(text) if e > s]
        n = len(bounds)
        if n <= self.size:
            return [(0, len(text))]
        step = self.size - self.overlap
        spans: list[tuple[int, int]] = []
        start = 0
        while True:
            end = min(start + self.size, n)
            spans.append((bounds[start][0], bounds[end - 1][1]))
            if end == n:
                break
            start += step
        # the first chunk starts at 0 and the last ends at len(text): no character is dropped
        spans[0] = (0, spans[0][1])
        spans[-1] = (spans[-1][0], len(text))
        return spans


@dataclass(frozen=True)
class Chunk:
    id: str
    doc_id: str
    start: int
    end: int
    title: str
    text: str


def chunk_id(doc_id: str, i: int) -> str:
    """Unique for unique doc ids: the part after the last '#' is the chunk number."""
    return f"{doc_id}#{i}"


def split_corpus(docs: Sequence[tuple[str, str, str]], chunker: Chunker,
                 offsets: OffsetsFn | None = None) -> list[Chunk]:
    """(doc_id, title, text) -> chunks, grouped by document in input order (>= 1 per document)."""
    chunks: list[Chunk] = []
    for doc_id, title, text in docs:
        for i, (s, e) in enumerate(chunker.windows(text, offsets)):
            t = title if (i == 0 or chunker.title == "every") else ""
            chunks.append(Chunk(chunk_id(doc_id, i), doc_id, s, e, t, text if (s, e) == (0, len(text)) else text[s:e]))
    return chunks


def token_offsets(encoder: Any) -> OffsetsFn:
    """Offsets function from the model's (HF) tokenizer, looked up through wrappers."""
    tok = _find_attr(encoder, "tokenizer")
    if tok is None:
        raise ValueError(f"cannot find a tokenizer on {type(encoder).__name__}: use `unit: chars`")

    def offsets(text: str) -> list[tuple[int, int]]:
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [tuple(o) for o in enc["offset_mapping"]]

    return offsets


def max_seq_length(encoder: Any) -> int | None:
    value = _find_attr(encoder, "max_seq_length")
    return int(value) if isinstance(value, int) else None


def _find_attr(obj: Any, name: str, depth: int = 4) -> Any:
    """obj.name, else look inside obj._model / obj.model (CachedEncoder -> mteb wrapper -> ST model)."""
    for _ in range(depth):
        if obj is None:
            return None
        inner = vars(obj) if hasattr(obj, "__dict__") else {}
        if type(obj).__name__ != "CachedEncoder":  # it forwards unknown attributes: look inside instead
            value = getattr(obj, name, None)
            if value is not None:
                return value
        obj = inner.get("_model") if inner.get("_model") is not None else inner.get("model")
    return None


class ChunkedSearch(CountsFromInner):
    """Document-level search over chunks: a document scores as its best chunk (max similarity).

    Chunks go through the encoder (a CachedEncoder in runs), so chunks equal across chunk sizes
    or equal to a whole document are encoded once. Scores and top-k selection follow mteb's
    SearchEncoderWrapper, so one-chunk documents get bit-identical scores to the plain run.
    """

    _counts_from = "encoder"

    def __init__(self, encoder: Any, chunker: Chunker, meta: Any) -> None:
        self.encoder = encoder
        self.chunker = chunker
        self.mteb_model_meta = meta
        self.stats: dict[str, int] = {}
        self._doc_ids: list[str] = []
        self._starts: np.ndarray | None = None
        self._emb: Any = None

    def index(self, corpus: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
              encode_kwargs: dict[str, Any], num_proc: int | None = None, **kwargs: Any) -> None:
        from datasets import Dataset

        from mteb.types import PromptType

        titles = corpus["title"] if "title" in corpus.column_names else [""] * len(corpus)
        docs = [(str(i), t or "", x) for i, t, x in zip(corpus["id"], titles, corpus["text"])]
        offsets = token_offsets(self.encoder) if self.chunker.unit == "tokens" else None
        limit = max_seq_length(self.encoder)
        if offsets is not None and limit and self.chunker.size > limit:
            logger.warning("chunk size %d tokens > the model's max_seq_length %d: chunks are truncated",
                           self.chunker.size, limit)
        chunks = split_corpus(docs, self.chunker, offsets)
        self._doc_ids = [d[0] for d in docs]
        first: dict[str, int] = {}
        for i, c in enumerate(chunks):
            first.setdefault(c.doc_id, i)
        self._starts = np.array([first[d] for d in self._doc_ids], dtype=np.int64)
        ds = Dataset.from_dict({"id": [c.id for c in chunks], "title": [c.title for c in chunks],
                                "text": [c.text for c in chunks]})
        before = (self.encoded, self.reused)
        self._emb = self.encoder.encode(
            create_dataloader(ds, task_metadata=task_metadata, prompt_type=PromptType.document,
                              num_proc=num_proc, **encode_kwargs),
            task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
            prompt_type=PromptType.document, **encode_kwargs)
        self.stats = {"documents": len(docs), "chunks": len(chunks),
                      "encoded": self.encoded - before[0], "reused": self.reused - before[1]}

    def search(self, queries: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, top_k: int,
               encode_kwargs: dict[str, Any], top_ranked: Any = None, num_proc: int | None = None,
               **kwargs: Any) -> dict[str, dict[str, float]]:
        import torch

        from mteb.types import PromptType

        if top_ranked is not None:
            raise NotImplementedError("chunked search does not rerank pre-ranked documents (reranking tasks)")
        if self._emb is None or self._starts is None:
            raise ValueError("index() must be called before search()")
        q_emb = self.encoder.encode(
            create_dataloader(queries, task_metadata=task_metadata, prompt_type=PromptType.query,
                              num_proc=num_proc, **encode_kwargs),
            task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
            prompt_type=PromptType.query, **encode_kwargs)
        sim = torch.as_tensor(self.encoder.similarity(q_emb, self._emb))
        if sim.shape[1] != len(self._doc_ids):  # several chunks per document: best chunk wins
            sim = torch.from_numpy(np.maximum.reduceat(sim.cpu().numpy(), self._starts, axis=1))
        values, idx = torch.topk(sim, min(top_k + 1, sim.shape[1]), dim=1, largest=True)
        results: dict[str, dict[str, float]] = {}
        for q, qid in enumerate(queries["id"]):
            heap: list[tuple[float, str]] = []
            for i, score in zip(idx[q].tolist(), values[q].tolist()):
                item = (score, self._doc_ids[i])  # same heap as mteb's search: ties resolved identically
                if len(heap) < top_k:
                    heapq.heappush(heap, item)
                else:
                    heapq.heappushpop(heap, item)
            results[qid] = {doc: score for score, doc in heap}
        self._emb = None
        return results


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Half-open char ranges share at least one character."""
    return a[0] < b[1] and b[0] < a[1]


def chunk_level_collection(collection: Collection, chunker: Chunker, offsets: OffsetsFn | None,
                           name: str) -> Collection:
    """Chunks as the corpus; a chunk is relevant (with its document's grade) when it overlaps an
    evidence span of that document for that query. Queries without spans in a split are left
    out of it, and a `no_evidence_spans` warning says how many."""
    docs = [(d, v.get("title") or "", v["text"]) for d, v in collection.corpus.items()]
    chunks = split_corpus(docs, chunker, offsets)
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    warnings: list[CollectionWarning] = []
    for split, labels in collection.qrels.items():
        spans = collection.spans.get(split, {})
        out: dict[str, dict[str, int]] = {}
        for qid, docs_grades in labels.items():
            rel = {c.id: docs_grades.get(doc_id, 1)
                   for doc_id, doc_spans in spans.get(qid, {}).items()
                   for c in by_doc.get(doc_id, [])
                   if docs_grades.get(doc_id, 1) > 0 and any(overlaps((c.start, c.end), s) for s in doc_spans)}
            if rel:
                out[qid] = rel
        left_out = len(labels) - len(out)
        if left_out:
            warnings.append(CollectionWarning(
                "no_evidence_spans", f"{split}: {left_out} of {len(labels)} queries have no evidence span "
                                     "and are left out of chunk-level scoring"))
            logger.warning("%s %s", name, warnings[-1].message)
        if out:
            qrels[split] = out
    corpus = {c.id: {"title": c.title, "text": c.text} for c in chunks}
    queries = {q: t for q, t in collection.queries.items() if any(q in r for r in qrels.values())}
    return Collection(name=name, corpus=corpus, queries=queries, qrels=qrels,
                      query_tags={q: t for q, t in collection.query_tags.items() if q in queries},
                      warnings=warnings)


def chunk_stats(corpus: Mapping[str, Mapping[str, str]], chunker: Chunker,
                offsets: OffsetsFn | None = None) -> dict[str, int]:
    """How many chunks a chunker makes, and how many documents stay whole (for reports)."""
    docs = [(d, v.get("title") or "", v["text"]) for d, v in corpus.items()]
    chunks = split_corpus(docs, chunker, offsets)
    per_doc: dict[str, int] = {}
    for c in chunks:
        per_doc[c.doc_id] = per_doc.get(c.doc_id, 0) + 1
    return {"documents": len(docs), "chunks": len(chunks), "whole": sum(1 for n in per_doc.values() if n == 1)}
