"""Descriptive statistics of a collection (what `private-mteb tasks stats` prints)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from statistics import mean
from typing import Any

import numpy as np

from .collection import Collection
from .config import resolve_task_config
from .sources import load_collection


def describe(collection: Collection) -> dict[str, Any]:
    """Counts, text lengths (characters and words) and labels per query, per split."""
    n = len(collection.corpus)
    chars_hist = np.zeros(1, dtype=np.int64)  # documents per length: exact median in O(longest), not O(corpus)
    chars_sum = words_sum = with_title = 0
    pending: list[int] = []
    for d in collection.corpus.values():
        title = d.get("title", "")
        pending.append(len(title) + len(d["text"]))
        words_sum += len(d["text"].split()) + len(title.split())
        with_title += bool(title)
        if len(pending) >= 65_536:
            chars_hist, chars_sum = _add_lengths(chars_hist, chars_sum, pending)
            pending = []
    chars_hist, chars_sum = _add_lengths(chars_hist, chars_sum, pending)
    out: dict[str, Any] = {
        "documents": n,
        "queries (all)": len(collection.queries),
        "documents with title": with_title,
        "document chars mean": _mean(chars_sum, n),
        "document chars median": _median(chars_hist, n),
        "document chars max": int(np.flatnonzero(chars_hist).max(initial=0)),
        "document words mean": _mean(words_sum, n),
    }
    for split in collection.splits:
        qrels = collection.qrels[split]
        qlens = [len(collection.queries[q]) for q in qrels]
        positives = [sum(1 for g in d.values() if g > 0) for d in qrels.values()]
        grades: dict[int, int] = {}
        for d in qrels.values():
            for g in d.values():
                grades[g] = grades.get(g, 0) + 1
        out[f"{split}: queries"] = len(qrels)
        out[f"{split}: judgments"] = sum(len(d) for d in qrels.values())
        out[f"{split}: query chars mean"] = mean(qlens) if qlens else 0.0
        out[f"{split}: relevant docs per query mean"] = mean(positives) if positives else 0.0
        out[f"{split}: relevant docs per query max"] = max(positives, default=0)
        out[f"{split}: queries with >1 relevant doc"] = sum(1 for p in positives if p > 1)
        out[f"{split}: queries with no positive label"] = sum(1 for p in positives if p == 0)
        out[f"{split}: grade counts"] = ", ".join(f"{g}: {n}" for g, n in sorted(grades.items()))
        if collection.spans.get(split):
            out[f"{split}: queries with evidence spans"] = len(collection.spans[split])
    tag_names = sorted({k for tags in collection.query_tags.values() for k in tags})
    for tag in tag_names:
        values: dict[str, int] = {}
        for tags in collection.query_tags.values():
            if tag in tags:
                values[str(tags[tag])] = values.get(str(tags[tag]), 0) + 1
        out[f"tag '{tag}'"] = ", ".join(f"{v}: {n}" for v, n in sorted(values.items()))
    for kind, n in sorted(collection.warning_counts().items()):
        out[f"warning: {kind}"] = n
    return out


def _add_lengths(hist: np.ndarray, total: int, lengths: list[int]) -> tuple[np.ndarray, int]:
    if not lengths:
        return hist, total
    counts = np.bincount(np.asarray(lengths, dtype=np.int64))
    if len(counts) > len(hist):
        hist = np.concatenate([hist, np.zeros(len(counts) - len(hist), dtype=np.int64)])
    hist[:len(counts)] += counts
    return hist, total + sum(lengths)


def _mean(total: int, n: int) -> float | int:
    """Exactly ``statistics.mean`` of ``n`` integers summing to ``total`` (an int when whole)."""
    if not n:
        return 0.0
    q = Fraction(total, n)
    return int(q) if q.denominator == 1 else float(q)


def _median(hist: np.ndarray, n: int) -> float:
    """``float(statistics.median(values))`` from the histogram of the integer values."""
    if not n:
        return 0.0
    cum = np.cumsum(hist)
    upper = int(np.searchsorted(cum, n // 2 + 1))  # the value at 0-based rank n // 2
    if n % 2:
        return float(upper)
    lower = int(np.searchsorted(cum, n // 2))  # rank n // 2 - 1
    return float((lower + upper) / 2)


def collection_stats(name_or_path: str | Path) -> dict[str, Any]:
    cfg = resolve_task_config(name_or_path)
    return describe(load_collection(cfg.source, cfg.base_dir, cfg.name))
