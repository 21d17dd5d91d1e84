"""Which passages `questions generate` writes questions from: drawn across the topics of the corpus.

Questions written from the first documents of a file describe whatever the file happens to start with (often one
product, one year, one folder). Here the documents are clustered by topic (k-means, scipy, on MiniLM embeddings
read from and stored in the project's embedding cache by log_embed.CacheEmbedder, keyed as a run keys the corpus,
so a corpus a MiniLM run encoded is not encoded again) and
the passages are dealt round-robin over the clusters, largest first, a seeded random document of each in turn:
every topic gets a question before any gets a second one. The same seed draws the same passages.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: a larger corpus is clustered on a seeded random sample of this many documents (MiniLM on CPU: minutes)
MAX_CLUSTERED_DOCS = 20_000
#: a passage with fewer words cannot carry a question someone would search for
MIN_PASSAGE_WORDS = 8


@dataclass(frozen=True)
class Draw:
    """One passage to write a question from, and the topic cluster it was drawn from."""

    doc_id: str
    cluster: int


def document_text(doc: Mapping[str, Any]) -> str:
    """A document as mteb embeds it (title, a space, text): the same text, so the same cache entry as a run's."""
    title, text = doc.get("title") or "", doc.get("text") or ""
    return f"{title} {text}".strip() if title else text


def eligible_documents(corpus: Mapping[str, Mapping[str, Any]], used: set[str], seed: int,
                       limit: int = MAX_CLUSTERED_DOCS) -> list[str]:
    """Document ids that can be drawn: long enough, not already the source of a generated question, at most
    ``limit`` of them (a seeded random sample, in corpus order)."""
    ids = [d for d, doc in corpus.items()
           if d not in used and len(document_text(doc).split()) >= MIN_PASSAGE_WORDS]
    if len(ids) > limit:
        keep = np.sort(np.random.default_rng(seed).choice(len(ids), size=limit, replace=False))
        ids = [ids[i] for i in keep]
    return ids


def clusters_of(vectors: np.ndarray, k: int, seed: int) -> np.ndarray:
    """A topic cluster per row: k-means++ (scipy) on the unit-length vectors, so distance is cosine distance."""
    from scipy.cluster.vq import kmeans2

    n = len(vectors)
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    k = max(1, min(k, n, len(np.unique(unit.round(6), axis=0))))  # never more clusters than distinct documents
    if k == 1:
        return np.zeros(n, dtype=np.int64)
    with warnings.catch_warnings():  # an empty cluster only means fewer topics: the draw deals over those found
        warnings.filterwarnings("ignore", message="One of the clusters is empty")
        _, labels = kmeans2(unit.astype(np.float64), k, minit="++", seed=np.random.default_rng(seed))
    return labels.astype(np.int64)


def draw_passages(doc_ids: Sequence[str], labels: np.ndarray, n: int, seed: int) -> list[Draw]:
    """``n`` documents dealt round-robin over the clusters (largest first, ties by cluster number), a seeded random
    order inside each: equal shares per topic, as far as a topic has documents."""
    rng = np.random.default_rng(seed)
    members: dict[int, list[str]] = {}
    for doc_id, label in zip(doc_ids, labels.tolist()):
        members.setdefault(int(label), []).append(doc_id)
    order = sorted(members, key=lambda c: (-len(members[c]), c))
    queues = {c: [members[c][i] for i in rng.permutation(len(members[c]))] for c in order}
    out: list[Draw] = []
    rank = {c: i for i, c in enumerate(order)}  # clusters renumbered by size: 0 is the largest topic
    while len(out) < n and any(queues.values()):
        for c in order:
            if queues[c] and len(out) < n:
                out.append(Draw(queues[c].pop(0), rank[c]))
    return out
