"""Retrievers for `kind: retriever` tests (given to configs via `factory: tests.toy_retrievers:...`).

* `make_words`: no model; a document scores the number of query words it contains (+ weight * a small
  per-document constant so ties are rare). `bad` makes it answer wrongly (an unknown document id, a NaN
  score, a query that was not asked, not a dict). Every index / search call is appended to `log_file`.
* `make_exact`: brute-force cosine search over the vectors its `embedder` hands it (no database): the
  reference a vector-database adapter is compared with, without one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np


class Words:
    def __init__(self, weight: float = 0.001, bad: str | None = None, log_file: str | None = None) -> None:
        self.weight, self.bad, self.log_file = weight, bad, log_file
        self.docs: dict[str, set[str]] = {}

    def _log(self, line: str) -> None:
        if self.log_file:
            with open(self.log_file, "a") as f:
                f.write(line + "\n")

    def index(self, corpus: Iterable[tuple[str, str, str]]) -> None:
        self.docs = {doc: set(re.findall(r"\w+", f"{title} {text}".lower())) for doc, title, text in corpus}
        self._log(f"index {len(self.docs)}")

    def search(self, queries: dict[str, str], top_k: int) -> Any:
        self._log(f"search {len(queries)} {top_k}")
        if self.bad == "not-a-dict":
            return [1, 2]
        out: dict[str, dict[str, float]] = {}
        for qid, text in queries.items():
            words = set(re.findall(r"\w+", text.lower()))
            scores = {d: len(words & w) + self.weight * (i % 7) for i, (d, w) in enumerate(self.docs.items())}
            out[qid] = dict(sorted(scores.items(), key=lambda x: -x[1])[:top_k])
        first = next(iter(out))
        if self.bad == "unknown-doc":
            out[first]["no-such-doc"] = 1.0
        elif self.bad == "nan":
            out[first][next(iter(self.docs))] = float("nan")
        elif self.bad == "unknown-query":
            out["no-such-query"] = {}
        elif self.bad == "drop-query":
            del out[first]
        return out


def make_words(**kwargs: Any) -> Words:
    return Words(**kwargs)


class Exact:
    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.ids: list[str] = []
        self.vectors = np.zeros((0, 0), np.float32)

    def index(self, corpus: Iterable[tuple[str, str, str]]) -> None:
        self.ids = [doc for doc, _, _ in corpus]
        v = self.embedder.documents(self.ids)
        self.vectors = v / np.linalg.norm(v, axis=1, keepdims=True)

    def search(self, queries: dict[str, str], top_k: int) -> dict[str, dict[str, float]]:
        q = self.embedder.queries(list(queries))
        scores = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ self.vectors.T
        out = {}
        for qid, row in zip(queries, scores):
            best = np.argsort(-row, kind="stable")[:top_k]
            out[qid] = {self.ids[i]: float(row[i]) for i in best}
        return out


def make_exact(embedder: Any, model: str) -> Exact:
    return Exact(embedder)


class Overlap:
    """A reranker (sentence-transformers' CrossEncoder interface): score = shared words of query and document."""

    def predict(self, pairs: list[tuple[str, str]], **kwargs: Any) -> np.ndarray:
        return np.array([len(set(re.findall(r"\w+", q.lower())) & set(re.findall(r"\w+", d.lower())))
                         for q, d in pairs], dtype=np.float32)


def make_overlap_reranker() -> Overlap:
    return Overlap()
