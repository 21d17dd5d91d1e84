"""The validated, in-memory collection every reader produces and every task is built from."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass
class CollectionWarning:
    """A non-fatal finding, counted in the validation summary."""

    kind: str  # e.g. "no_positive_label", "query_id_equals_doc_id", "duplicate_text", "long_document"
    message: str
    #: findings this entry stands for: > 1 only for the "... and N more" entry a large corpus ends a kind with
    count: int = 1


@dataclass
class AddedQuestions:
    """What the loader did with the task's added questions (``source.added_questions``), for run and stats.

    Questions awaiting judgment are in ``Collection.queries`` (so they are pooled) but not in qrels (so they
    are not scored as 0); rejected and unverified ones are not in the collection at all, only counted here.
    """

    path: str
    rows: int
    #: sha256 of the added file and its reviews file: part of the collection's revision
    fingerprint: str
    #: added questions in the collection (scored, or awaiting judgment), in file order
    scored_or_awaiting: list[str] = field(default_factory=list)
    #: added questions with no graded document: counted, not scored
    awaiting: list[str] = field(default_factory=list)
    #: source kind (human / log / generated) -> questions a review rejected
    rejected: Counter[str] = field(default_factory=Counter)
    #: source kind -> generated questions left out as unverified (`questions: {use_unverified: false}`)
    unverified: Counter[str] = field(default_factory=Counter)


@dataclass
class Collection:
    """Corpus, queries and graded labels per split.

    corpus:  doc_id -> {"title": str, "text": str}     (title "" when absent, never None); a dict, or for a
             large corpus a memory-mapped ``corpus_store.CorpusStore`` with the same read-only Mapping interface
    queries: query_id -> text
    qrels:   split -> query_id -> doc_id -> grade (int >= 0; 2 = answers it, 1 = partly)
    query_tags: query_id -> {tag_name: value}            (e.g. {"source": "llm", "topic": "vpn"})
    spans:   split -> query_id -> doc_id -> list of evidence spans, each (start, end) char offsets
             into the document text; used by chunk-level scoring, optional.
    """

    name: str
    corpus: Mapping[str, dict[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, dict[str, int]]]
    query_tags: dict[str, dict[str, str]] = field(default_factory=dict)
    spans: dict[str, dict[str, dict[str, list[tuple[int, int]]]]] = field(default_factory=dict)
    warnings: list[CollectionWarning] = field(default_factory=list)
    #: the task's added questions (a query-log sample, generated questions), when its source names a file
    added: AddedQuestions | None = None
    #: questions whose labels are declared complete (every relevant document labelled, so a document nobody judged
    #: is known not relevant): those a `complete_labels` column of the questions says so, or every question of the
    #: task's own files when its YAML declares `complete_labels: true` (sources.load_collection). Notes, bounds and
    #: pooling read this one set; scores do not (an unjudged document counts as not relevant either way), so
    #: ``content_hash`` leaves it out.
    complete_questions: set[str] = field(default_factory=set)

    @property
    def splits(self) -> list[str]:
        return sorted(self.qrels)

    def content_hash(self) -> str:
        """Stable hash of everything that changes scores; used as the mteb dataset revision.

        sha256 of the documents in id order, then the queries, then the qrels. A ``CorpusStore`` streams its
        documents' bytes from disk and remembers the result per queries-and-qrels digest (its corpus never
        changes), so a large corpus is hashed once, not on every run. Added questions add their files' digest
        (their tags and reviews too), so appending questions is a new revision; without them the hash is as before.
        """
        tail = [b"\x00queries"]
        tail += [json.dumps([qid, self.queries[qid]], ensure_ascii=False).encode() for qid in sorted(self.queries)]
        tail += [b"\x00qrels", json.dumps(self.qrels, sort_keys=True).encode()]
        if self.added is not None:
            tail += [b"\x00added", self.added.fingerprint.encode()]
        stored = getattr(self.corpus, "content_hash_with", None)
        if stored is not None:
            return stored(b"".join(tail))
        h = hashlib.sha256()
        for doc_id in sorted(self.corpus):
            d = self.corpus[doc_id]
            h.update(json.dumps([doc_id, d.get("title", ""), d["text"]], ensure_ascii=False).encode())
        h.update(b"".join(tail))
        return h.hexdigest()[:16]

    def awaiting_judgment(self) -> list[str]:
        """Added questions with no graded document in any split (file order): counted and pooled, not scored.
        Computed from the qrels, so a copy with more grades (LLM labels filling unjudged pairs) counts right."""
        if self.added is None:
            return []
        return [q for q in self.added.scored_or_awaiting if not any(q in qrels for qrels in self.qrels.values())]

    def complete_in(self, split: str) -> set[str]:
        """The split's scored questions whose labels are declared complete (``complete_questions``)."""
        return self.complete_questions & set(self.qrels.get(split, {}))

    def split_queries(self, split: str) -> dict[str, str]:
        """Queries that have at least one label in this split."""
        return {qid: self.queries[qid] for qid in self.qrels.get(split, {}) if qid in self.queries}

    def warning_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for w in self.warnings:
            counts[w.kind] = counts.get(w.kind, 0) + w.count
        return counts
