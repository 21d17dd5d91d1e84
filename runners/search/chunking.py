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

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from custom_tasks.collection import Collection, CollectionWarning
from custom_tasks.mteb_private import create_dataloader

from .chunk_fit import SplitReport, document_string
from .counts import CountsFromInner
from .top_k import TopKDocs
from .tokens import ModelTokens, OffsetsFn, max_seq_length, model_tokens

__all__ = ["Chunk", "Chunker", "ChunkedSearch", "OffsetsFn", "SplitReport", "chunk_level_collection",
           "chunk_stats", "document_string", "max_seq_length", "split_corpus", "token_offsets"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Chunker:
    """Fixed-size windows with overlap, in tokens of the model's tokenizer or in characters.

    In tokens, `size` is the length of the string the model embeds: mteb's "title text" (with
    `title: every` the title is in front of every chunk, as mteb puts it in front of every
    document, so a one-chunk document is the same string) plus the model's special tokens, and
    never more than the model's max_seq_length. So the text of a chunk gets
    min(size, max_seq_length) - special tokens - title tokens. In characters, `size` counts the
    text only. `overlap` counts text tokens (characters) shared by neighbouring chunks.
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

    def cap(self, limit: int | None = None) -> int:
        """Longest embedded string a chunk may make, in tokens (chars: text characters)."""
        return min(self.size, limit) if (limit and self.unit == "tokens") else self.size

    def budgets(self, title_tokens: int = 0, special: int = 0, limit: int | None = None) -> tuple[int, int, bool]:
        """Text tokens of the first chunk and of the others, and whether the title left room for text.

        When the title and specials leave no more than `overlap` tokens, the title is not counted
        (the chunk then exceeds the cap, and the caller warns): a budget below overlap + 1 cannot advance.
        """
        if self.unit == "chars":
            return self.size, self.size, True
        plain = max(self.cap(limit) - special, self.overlap + 1)
        titled = self.cap(limit) - special - title_tokens
        room = titled > self.overlap
        first = titled if room else plain
        return first, (first if self.title == "every" else plain), room

    def windows(self, text: str, offsets: OffsetsFn | None = None, title_tokens: int = 0,
                shrink: int = 0) -> list[tuple[int, int]]:
        """Char spans of the chunks of `text`; one chunk (0, len) when it fits.

        `offsets` may carry the model's `special` token count and `limit` (a ModelTokens);
        `shrink` takes that many more tokens off each budget (for tokenizers that merge across the
        title/text boundary).
        """
        if self.unit == "chars":
            bounds = [(i, i + 1) for i in range(len(text))]
        else:
            if offsets is None:
                raise ValueError("token chunking needs the model's tokenizer")
            bounds = [(s, e) for s, e in offsets(text) if e > s]
        first, rest, _ = self.budgets(title_tokens, getattr(offsets, "special", 0), getattr(offsets, "limit", None))
        first, rest = (max(b - shrink, self.overlap + 1) for b in (first, rest))
        n = len(bounds)
        if n <= first:
            return [(0, len(text))]
        spans: list[tuple[int, int]] = []
        start, budget = 0, first
        while True:
            end = min(start + budget, n)
            spans.append((bounds[start][0], bounds[end - 1][1]))
            if end == n:
                break
            start, budget = end - self.overlap, rest
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


def split_corpus(docs: Sequence[tuple[str, str, str]], chunker: Chunker, offsets: OffsetsFn | None = None,
                 report: SplitReport | None = None) -> list[Chunk]:
    """(doc_id, title, text) -> chunks, grouped by document in input order (>= 1 per document).

    In tokens, with the model's ModelTokens as `offsets`, each chunk's embedded string is counted
    and a document is split again, with smaller budgets, until none of its chunks exceeds the
    cap (a tokenizer may merge tokens across the title/text boundary); `report` gets the counts.
    """
    report = report if report is not None else SplitReport()
    tokens = chunker.unit == "tokens" and offsets is not None
    count = getattr(offsets, "count", None) if tokens else None
    cap = chunker.cap(getattr(offsets, "limit", None))
    chunks: list[Chunk] = []
    for doc_id, title, text in docs:
        title_tokens = len(offsets(title)) if (tokens and title) else 0  # type: ignore[misc]
        room = chunker.budgets(title_tokens, getattr(offsets, "special", 0), getattr(offsets, "limit", None))[2]
        shrink = 0
        for _ in range(4):
            doc_chunks = _split_document(doc_id, title, text, chunker, offsets, title_tokens, shrink)
            lengths = [count(document_string(c.title, c.text)) for c in doc_chunks] if count else []
            excess = max(lengths, default=0) - cap
            if excess <= 0 or not room:
                break
            shrink += excess
        if not room:
            report.no_room.append(title_tokens)
        report.lengths += lengths
        chunks += doc_chunks
    report.documents += len(docs)
    return chunks


def _split_document(doc_id: str, title: str, text: str, chunker: Chunker, offsets: OffsetsFn | None,
                    title_tokens: int, shrink: int) -> list[Chunk]:
    out = []
    for i, (s, e) in enumerate(chunker.windows(text, offsets, title_tokens, shrink)):
        t = title if (i == 0 or chunker.title == "every") else ""
        out.append(Chunk(chunk_id(doc_id, i), doc_id, s, e, t, text if (s, e) == (0, len(text)) else text[s:e]))
    return out


def token_offsets(encoder: Any) -> ModelTokens:
    """The model's tokenizer (with its special-token count and limit), looked up through wrappers."""
    tokens = model_tokens(encoder)
    if tokens is None:
        raise ValueError(f"cannot find a tokenizer on {type(encoder).__name__}: use `unit: chars`")
    return tokens


class ChunkedSearch(CountsFromInner):
    """Document-level search over chunks: a document scores as its best chunk (max similarity).

    Chunks go through the encoder (a CachedEncoder in runs), so chunks equal across chunk sizes
    or equal to a whole document are encoded once. Scores are the encoder's (a cache's are block-independent,
    search/scores.py), so one-chunk documents get bit-identical scores to the plain run; the top_k follow the
    (score, id) rule of `TopKDocs` (mteb's heap order, every tie at the cut considered).
    `runners.execution.cache.chunk_blocks.LargeChunkedSearch` overrides `_blockwise` / `_search_blocks` to split,
    encode and score a large corpus one block of documents at a time: bounded memory, equal results.
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
        self._corpus: Any = None  # the block path keeps only the corpus until search
        self._warned: set[str] = set()

    def index(self, corpus: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
              encode_kwargs: dict[str, Any], num_proc: int | None = None, **kwargs: Any) -> None:
        from datasets import Dataset

        from mteb.types import PromptType

        self._corpus = corpus if self._blockwise(len(corpus)) else None
        if self._corpus is not None:  # chunks, vectors and stats come block by block in search()
            self.stats = {"documents": len(corpus)}
            return
        titles = corpus["title"] if "title" in corpus.column_names else [""] * len(corpus)
        docs = [(str(i), t or "", x) for i, t, x in zip(corpus["id"], titles, corpus["text"])]
        offsets = token_offsets(self.encoder) if self.chunker.unit == "tokens" else None
        report = SplitReport()
        chunks = split_corpus(docs, self.chunker, offsets, report)
        self._warn(report, getattr(task_metadata, "name", ""), chunks)
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

    def _warn(self, report: SplitReport, task: str, chunks: Sequence[Chunk]) -> None:
        """Say, once per task, what the split could not fit into the model (chars: counted here)."""
        if task in self._warned:
            return
        tokens = model_tokens(self.encoder)
        if tokens is not None and not report.lengths:
            report.lengths = [tokens.count(document_string(c.title, c.text)) for c in chunks]
        self._warned.add(task)
        for _, message in report.warnings(self.chunker, tokens):
            logger.warning("%s %s: %s", task, self.chunker.tag, message)

    def search(self, queries: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, top_k: int,
               encode_kwargs: dict[str, Any], top_ranked: Any = None, num_proc: int | None = None,
               **kwargs: Any) -> dict[str, dict[str, float]]:
        import torch

        from mteb.types import PromptType

        if top_ranked is not None:
            raise NotImplementedError("chunked search does not rerank pre-ranked documents (reranking tasks)")
        if self._corpus is None and (self._emb is None or self._starts is None):
            raise ValueError("index() must be called before search()")
        q_emb = self.encoder.encode(
            create_dataloader(queries, task_metadata=task_metadata, prompt_type=PromptType.query,
                              num_proc=num_proc, **encode_kwargs),
            task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
            prompt_type=PromptType.query, **encode_kwargs)
        if self._corpus is not None:
            return self._search_blocks(q_emb, list(queries["id"]), top_k, task_metadata=task_metadata,
                                       hf_split=hf_split, hf_subset=hf_subset, encode_kwargs=encode_kwargs)
        sim = torch.as_tensor(self.encoder.similarity(q_emb, self._emb))
        if sim.shape[1] != len(self._doc_ids):  # several chunks per document: best chunk wins
            sim = torch.from_numpy(np.maximum.reduceat(sim.cpu().numpy(), self._starts, axis=1))
        ranked = TopKDocs(list(queries["id"]), top_k)  # the block path's rule: equal for any blocks, ties too
        ranked.add(sim, self._doc_ids)
        results = ranked.results()
        self._emb = None
        return results

    def _blockwise(self, n_docs: int) -> bool:
        """Whether `search` scores the corpus block by block (the execution layer's subclass decides)."""
        return False

    def _search_blocks(self, q_emb: Any, query_ids: list[str], top_k: int, *, task_metadata: Any, hf_split: str,
                       hf_subset: str, encode_kwargs: dict[str, Any]) -> dict[str, dict[str, float]]:
        raise NotImplementedError("block-wise chunked search is LargeChunkedSearch (runners.execution.cache.chunk_blocks)")


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Half-open char ranges share at least one character."""
    return a[0] < b[1] and b[0] < a[1]


def chunk_level_collection(collection: Collection, chunker: Chunker, offsets: OffsetsFn | None,
                           name: str) -> Collection:
    """Chunks as the corpus; a chunk is relevant (with its document's grade) when it overlaps an
    evidence span of that document for that query. Queries without spans in a split are left
    out of it, and a `no_evidence_spans` warning says how many."""
    docs = [(d, v.get("title") or "", v["text"]) for d, v in collection.corpus.items()]
    report = SplitReport()
    chunks = split_corpus(docs, chunker, offsets, report)
    warnings = [CollectionWarning(kind, message) for kind, message in
                report.warnings(chunker, offsets if isinstance(offsets, ModelTokens) else None)]
    for w in warnings:
        logger.warning("%s %s", name, w.message)
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    qrels: dict[str, dict[str, dict[str, int]]] = {}
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
