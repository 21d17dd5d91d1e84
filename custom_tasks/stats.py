"""Descriptive statistics of a collection (what `private-mteb tasks stats` prints)."""

from __future__ import annotations

from pathlib import Path
from fractions import Fraction
from statistics import mean
from typing import Any

import numpy as np

from .collection import Collection
from .config import resolve_task_config
from .sources import load_collection


def describe(collection: Collection) -> dict[str, Any]:
    """Counts, text lengths (characters and words) and labels per query, per split."""
    n = len(collection.corpus)
    doc_chars = np.zeros(n, dtype=np.int64)  # two int arrays, not lists of Python ints: a large corpus streams
    doc_words = np.zeros(n, dtype=np.int64)
    with_title = 0
    for i, d in enumerate(collection.corpus.values()):
        title = d.get("title", "")
        doc_chars[i] = len(title) + len(d["text"])
        doc_words[i] = len(d["text"].split()) + len(title.split())
        with_title += bool(title)
    out: dict[str, Any] = {
        "documents": n,
        "queries (all)": len(collection.queries),
        "documents with title": with_title,
        "document chars mean": _mean(doc_chars),
        "document chars median": float(np.median(doc_chars)) if n else 0.0,
        "document chars max": int(doc_chars.max(initial=0)),
        "document words mean": _mean(doc_words),
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


def _mean(values: np.ndarray) -> float | int:
    """Exactly ``statistics.mean`` of these integers (an int when whole), from the array's exact sum."""
    if not len(values):
        return 0.0
    q = Fraction(int(values.sum()), len(values))
    return int(q) if q.denominator == 1 else float(q)


def collection_stats(name_or_path: str | Path) -> dict[str, Any]:
    cfg = resolve_task_config(name_or_path)
    return describe(load_collection(cfg.source, cfg.base_dir, cfg.name))
